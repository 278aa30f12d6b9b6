"""A producer's child process: a Spark session (boto3 and aiokpl write from its foreachPartition)
making the warm-up and timed runs the orchestrator paces, one JSON line per run."""

from __future__ import annotations

import argparse
import functools
import json
import operator
import sys
import time
from typing import Any, Dict, List, Set

from spark_kpl_bench.processes import fixed_heap_flags
from spark_kpl_bench.throughput.settings import SINK_AGGREGATION
from spark_kpl_bench.throughput.workload import records_df, written_ids
from spark_kpl_testing.env import LOOPBACK_AWS_ENV


def await_go(run: int) -> None:
    """Announce timed run ``run`` and wait until the orchestrator has read the endpoint's counters."""
    print(json.dumps({"ready": run}), flush=True)
    sys.stdin.readline()


def boto3_partition(endpoint_url: str, stream: str):
    def send_partition(rows):
        import boto3
        import urllib3
        from botocore.config import Config

        urllib3.disable_warnings()
        client = boto3.client("kinesis", endpoint_url=endpoint_url, verify=False, region_name="us-east-1",
                              config=Config(retries={"max_attempts": 10, "mode": "standard"}, proxies={}))

        def send(batch):
            while batch:
                answer = client.put_records(StreamName=stream, Records=batch)
                if not answer.get("FailedRecordCount"):
                    return
                batch = [e for e, r in zip(batch, answer["Records"]) if "ErrorCode" in r]
                time.sleep(0.05)  # throttled: back off a little before re-sending, as a careful user would

        batch = []
        for row in rows:
            batch.append({"Data": bytes(row.data), "PartitionKey": row.partitionKey})
            if len(batch) == 500:
                send(batch)
                batch = []
        if batch:
            send(batch)

    return send_partition


def aiokpl_partition(endpoint_url: str, stream: str, keys: Dict[str, str], lift_limits: bool):
    def send_partition(rows):
        import asyncio
        import warnings

        from aiokpl import Config, Producer

        warnings.filterwarnings("ignore")

        async def main():
            limits = dict(rate_limit_records_per_sec_per_shard=1e9,
                          rate_limit_bytes_per_sec_per_shard=1e12) if lift_limits else {}
            config = Config(region="us-east-1", endpoint_url=endpoint_url, verify_ssl=False, **limits,
                            aws_access_key_id=keys["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=keys["AWS_SECRET_ACCESS_KEY"])
            async with Producer(config) as producer:
                outcomes = []
                for row in rows:
                    outcomes.append(await producer.put_record(
                        stream=stream, partition_key=row.partitionKey, data=bytes(row.data)))
                await producer.flush()
                failed = 0
                for outcome in outcomes:
                    failed += not (await outcome.wait()).success
                if failed:
                    raise RuntimeError(f"aiokpl: {failed} records failed")

        asyncio.run(main())

    return send_partition


def child(args: argparse.Namespace) -> int:
    import spark_kpl
    from spark_kpl_testing.session import spark_session

    options = json.loads(args.options)
    endpoint_url = options.pop("_endpoint_url", None)
    lift_limits = options.pop("_lift_limits", True)
    conf = {"spark.sql.shuffle.partitions": "2", **json.loads(args.conf)}
    if args.fixed_heap:  # spark-submit refuses -Xmx here; spark.driver.memory gives it
        conf["spark.driver.extraJavaOptions"] = " ".join(fixed_heap_flags(args.heap))
    spark = spark_session(f"bench-{args.producer}", args.master, heap=args.heap, conf=conf)
    try:
        if args.producer == "coldstart":
            small = records_df(spark, args.records, args.size, args.partitions)
            small.count()  # Spark itself warm; the sink's producer and daemon cold
            started = time.time()
            result = spark_kpl.write(small, args.stream, data="data", partition_key="partitionKey", **options)
            print(json.dumps({"save_start": started, "seconds": time.time() - started,
                              "records": result.records_written}), flush=True)
            return 0
        # Every Spark-based producer reads the same rows from memory, so building them (rpad of
        # 10 KB strings costs more than sending them) is not part of what is measured. Each caches
        # the whole workload, also when it writes a share of it, so that every JVM holds the same
        # cache and peak memory compares producers, not cache sizes.
        total = max(args.records, args.cached_records)
        cached = records_df(spark, total, args.size, args.partitions, with_id=True).persist()
        cached.count()
        shares = [(cached.id >= span.start) & (cached.id < span.stop)
                  for span in written_ids(total, args.records, args.partitions)]
        df = cached.where(functools.reduce(operator.or_, shares)).drop("id")
        if args.producer in SINK_AGGREGATION:
            spark_kpl.write(records_df(spark, 1, 8, 1), args.stream, data="data", partition_key="partitionKey",
                            **options)  # warm-up: the producer starts and loads the shard map
            # What its producer runs with, by KPL name: the orchestrator checks kpl_loop's against sink_kpl's.
            prefix = "spark.kpl."
            settings = {k[len(prefix):]: v for s in spark_kpl.producer_settings(spark) for k, v in s.items()}
            print(json.dumps({"kpl_settings": settings}), flush=True)
        for run in range(args.runs):
            await_go(run)
            started = time.perf_counter()
            wall = time.time()
            extra: Dict[str, Any] = {}
            if args.producer in SINK_AGGREGATION:
                jobs_before = set(spark.sparkContext.statusTracker().getJobIdsForGroup())
                result = spark_kpl.write(df, args.stream, data="data", partition_key="partitionKey", **options)
                extra = {k: getattr(result, k) for k in ("records_written", "records_failed", "backpressure_cycles",
                                                          "blocked_ms", "peak_outstanding_records", "tasks")}
                extra["task_timeline"] = task_timeline(spark, jobs_before, wall)
                records = result.records_written
            elif args.producer == "noop":  # Spark's own cost of the same job: a floor for the others
                df.write.format("noop").mode("overwrite").save()
                records = args.records
            elif args.producer == "boto3":
                df.foreachPartition(boto3_partition(endpoint_url, args.stream))
                records = args.records
            elif args.producer == "aiokpl":
                df.foreachPartition(aiokpl_partition(endpoint_url, args.stream, dict(LOOPBACK_AWS_ENV), lift_limits))
                records = args.records
            else:
                raise SystemExit(f"unknown producer {args.producer}")
            seconds = time.perf_counter() - started
            print(json.dumps({"run": run, "records": records, "seconds": seconds, "wall_start": wall, **extra}),
                  flush=True)
        print(json.dumps({"heap_peaks": heap_peaks(spark)}), flush=True)
    finally:
        spark.stop()
    return 0


def task_timeline(spark, jobs_before: Set[int], started: float) -> List[Dict[str, Any]]:
    """Each task of the jobs Spark ran since ``jobs_before``: its executor, when it was launched (ms
    after ``started``, a ``time.time()``), how long it took and how much of that it ran, from Spark's
    status store (no UI needed). Beside the write's time it shows where the cores sat idle."""
    sc = spark.sparkContext
    tracker, store = sc.statusTracker(), sc._jsc.sc().statusStore()
    timeline = []
    for job in sorted(set(tracker.getJobIdsForGroup()) - jobs_before):
        for stage in tracker.getJobInfo(job).stageIds:
            info = tracker.getStageInfo(stage)
            tasks = store.taskList(stage, info.currentAttemptId if info else 0, 100_000)
            for i in range(tasks.size()):
                task = tasks.apply(i)
                duration, metrics = task.duration(), task.taskMetrics()
                timeline.append({"stage": stage, "executor": task.executorId(),
                                 "launched_ms": task.launchTime().getTime() - started * 1000,
                                 "ms": duration.get() if duration.isDefined() else None,
                                 "run_ms": metrics.get().executorRunTime() if metrics.isDefined() else None})
    return timeline


def heap_peaks(spark) -> Dict[str, Dict[str, int]]:
    """The driver JVM's heap pools (local mode: the executor's too): each one's peak use, and what was
    committed at that peak, in bytes. Beside the process's RSS they tell heap that G1 committed from
    heap that held data (the old generation's peak bounds the live set from above)."""
    jvm = spark.sparkContext._jvm
    peaks = {}
    for pool in jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans():
        if pool.getType().toString() == "Heap memory":
            peak = pool.getPeakUsage()
            peaks[pool.getName()] = {"used": peak.getUsed(), "committed": peak.getCommitted()}
    return peaks
