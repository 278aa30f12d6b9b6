"""Throughput benchmark: the kpl sink against the alternatives, side by side in one run.

Run by bench/throughput.sh. The orchestrator (this process) hosts the project's KinesisEndpoint
(store=False, 127.0.0.1) and starts each producer as a child process, sampling the RSS of the child's
whole process tree (JVM, KPL daemon, Python workers) from /proc. Each child prints one JSON line per
timed run. Writes bench/results/throughput.json and bench/results/throughput.png.

Producers: sink (spark_kpl.write, local[2], aggregation=executor: the task aggregates per shard);
sink_kpl (the same with aggregation=kpl: one KPL user record per row, the KPL aggregates); kpl_loop
(bench/KplLoop.java, plain KPL with sink_kpl's KPL settings); boto3 (put_records x500 in
foreachPartition); extras: aiokpl (in foreachPartition); noop (Spark's own noop sink: what reading the
rows costs Spark, a floor for the others); awslabs connector (not run: see NOT_RUN).

Every child first makes --warmup-runs untimed runs of the same workload (the JIT compiles the write
path, Python workers start, clients connect): the timed runs measure the steady state every producer
reaches in a long job, and the first run, cold, is kept and reported apart.

Each timed run also gets what the endpoint received during it (Kinesis records, their bytes, PutRecords
calls): a child announces a run and waits until the endpoint's counters are read, so nothing else (a
warm-up, another run) is counted with it.
"""

from __future__ import annotations

import argparse
import functools
import json
import operator
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from spark_kpl._jar import JAR_NAME
from spark_kpl_testing import host
from spark_kpl_testing.env import LOOPBACK_AWS_ENV, apply_loopback_env, loopback_env
from spark_kpl_testing.net import LOOPBACK
from spark_kpl_testing.processes import (
    ProcessStat,
    cpu_seconds,
    descendants,
    fixed_heap_flags,
    process_stat,
    stop_process_tree,
)

apply_loopback_env()

ROOT = Path(__file__).resolve().parents[1]
JAR = ROOT / "build/libs" / JAR_NAME
STREAM = "bench"
SHARDS = 16
#: Kinesis's per-shard quotas are not what is measured: every KPL-like producer gets them lifted alike.
KPL_TUNING = {"RateLimit": "10000"}
#: ... except in the quota workload: a stream this small, the endpoint enforcing Kinesis's per-shard
#: limits (1,000 records/s, 1 MiB/s), every producer at its own defaults.
QUOTA_STREAM, QUOTA_SHARDS = "bench-quota", 4
#: The workloads every producer runs, in report order.
WORKLOADS = ("A_100B", "M_1KB", "B_10KB", "A_100B_quota")
#: Every producer, in run and report order; the extras run unless --skip-extras.
PRODUCERS = ("sink", "sink_kpl", "kpl_loop", "boto3", "aiokpl", "noop")
EXTRA_PRODUCERS = ("aiokpl", "noop")
#: The sink's aggregation option for each of its producers.
SINK_AGGREGATION = {"sink": "executor", "sink_kpl": "kpl"}
#: The endpoint's counters diffed around each timed run.
ENDPOINT_COUNTERS = ("put_calls", "records_received", "bytes_received", "records_rejected")
#: KPL settings naming where a producer's files are: they differ between any two producers.
PLACE_SETTINGS = ("NativeExecutable", "TempDirectory")

NOT_RUN = {
    "awslabs_connector": (
        "not run: awslabs spark-sql-kinesis-connector is not published on Maven Central (checked "
        "software.amazon.kinesis:{spark-sql-kinesis-connector,spark-streaming-sql-kinesis-connector}"
        "_{2.12,2.13}: HTTP 404); upstream distributes a jar from an S3 bucket, which this machine may "
        "not fetch. It is also streaming-only (no batch df.write), built for Spark 3.x/Scala 2.12 "
        "(this venv is Spark 4.1/Scala 2.13), and its endpoint option is not passed to the KPL "
        "(KinesisEndpoint/KinesisPort/VerifyCertificate not settable), so its KPL would dial the real "
        "AWS endpoint: it cannot be pointed at a loopback endpoint safely."),
}


# ------------------------------------------------------------------ children


def records_df(spark, n: int, size: int, partitions: int, with_id: bool = False):
    from pyspark.sql import functions as F

    ids = [F.col("id")] if with_id else []
    return spark.range(n, numPartitions=partitions).select(
        F.encode(F.rpad(F.concat(F.col("id").cast("string"), F.lit("-")), size, "x"), "UTF-8").alias("data"),
        F.concat(F.lit("k"), F.col("id").cast("string")).alias("partitionKey"), *ids)


def written_ids(cached: int, records: int, partitions: int) -> List[range]:
    """The ids a Spark producer writes of a cached workload of ``cached`` rows: the first share of each
    partition (spark.range gives partition i the ids from i * cached // partitions on), so that every
    task writes and every producer's JVM holds the same cache. KplLoop writes range(records)."""
    if records >= cached:
        return [range(cached)]
    return [range(i * cached // partitions, i * cached // partitions + (i + 1) * records // partitions
                  - i * records // partitions) for i in range(partitions)]


def mean_key_bytes(ids: List[range]) -> float:
    """Mean length of the partition keys f"k{id}" that records_df and KplLoop give these ids."""
    total = 0
    for span in ids:
        low, digits = span.start, max(1, len(str(span.start)))
        while low < span.stop:
            high = min(span.stop, 10 ** digits)
            total += (high - low) * (1 + digits)
            low, digits = high, digits + 1
    return total / sum(len(span) for span in ids)


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
                result = spark_kpl.write(df, args.stream, data="data", partition_key="partitionKey", **options)
                extra = {k: getattr(result, k) for k in ("records_written", "records_failed", "backpressure_cycles",
                                                          "blocked_ms", "peak_outstanding_records", "tasks")}
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


# ------------------------------------------------------------------ orchestrator

def tree_by_kind(pid: int) -> List[Tuple[ProcessStat, str]]:
    """A process and its descendants with their kind: daemon (the KPL's), jvm or python."""
    found = []
    for process in [*filter(None, [process_stat(pid)]), *descendants(pid).values()]:
        kind = "daemon" if process.command.startswith("kinesis_produc") else (
            "jvm" if process.command == "java" else "python" if process.command.startswith("python") else None)
        # Anything else is a fork between fork() and exec() (named after the forking
        # thread), sharing its parent's pages: counting it would count the parent twice.
        if kind:
            found.append((process, kind))
    return found


def tree_cpu_seconds(pid: int, also: Sequence[int] = ()) -> Dict[str, float]:
    """CPU seconds so far of a process tree (and of the trees of ``also``: a cluster's executors, which
    are no children of the driver) by kind, and of this process (it hosts the endpoint): a run's share
    is the difference around it."""
    seconds: Dict[str, float] = {"endpoint": cpu_seconds(os.getpid())}
    for root in (pid, *also):
        for process, kind in tree_by_kind(root):
            seconds[kind] = seconds.get(kind, 0.0) + process.cpu_seconds
    return seconds


class TreeSampler(threading.Thread):
    """Peak summed RSS of a process and all its descendants, by kind (java / kinesis_producer / python)."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_total = 0
        self.peak_by_kind: Dict[str, int] = {}
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            kinds: Dict[str, int] = {}
            for process, kind in tree_by_kind(self.pid):
                kinds[kind] = kinds.get(kind, 0) + process.rss_bytes
            total = sum(kinds.values())
            if total > self.peak_total:
                self.peak_total = total
            for kind, rss in kinds.items():
                self.peak_by_kind[kind] = max(self.peak_by_kind.get(kind, 0), rss)
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(5)


def counters_between(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, int]:
    return {k: after[k] - before[k] for k in ENDPOINT_COUNTERS}


def run_process(command: List[str], log: Path, timeout: float,
                counters: Optional[Callable[[], Dict[str, Any]]] = None, warmup: int = 0,
                before_run: Optional[Callable[[int], object]] = None,
                also: Callable[[], Sequence[int]] = tuple) -> Dict[str, Any]:
    """Start ``command`` in its own process group, sample its tree, collect its JSON lines; always stop it.
    Each run's CPU also counts the process trees of ``also()`` (a cluster's executors), looked up at its start.

    A child line {"ready": run} is answered on its stdin once ``before_run`` has been called with the
    run's index (warm-up runs count) and ``counters`` (the endpoint's) are read;
    the run's own result line then gets the counters' difference as "endpoint". A line of the
    producer's KPL settings goes into the result as it is. The first ``warmup`` runs are marked as such.
    """
    started = time.time()
    with open(log, "ab") as err:
        err.write(f"\n=== {' '.join(command)}\n".encode())
        err.flush()
        env = loopback_env()
        env["SPARK_LOCAL_IP"] = LOOPBACK  # Spark binds loopback only
        env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable  # workers: this venv
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.PIPE, cwd=ROOT, start_new_session=True)
        assert proc.stdout is not None and proc.stdin is not None  # both are pipes
        sampler = TreeSampler(proc.pid)
        sampler.start()
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            stop_process_tree(proc, 10)

        deadline = threading.Timer(timeout, expire)
        deadline.start()
        cpu0 = cpu_seconds(os.getpid())
        runs: List[Dict[str, Any]] = []
        notes: Dict[str, Any] = {}
        before: Optional[Dict[str, Any]] = None
        cpu_before: Dict[str, float] = {}
        others: Sequence[int] = ()
        try:
            for raw in proc.stdout:
                if not raw.startswith(b"{"):
                    continue
                line = json.loads(raw)
                if "ready" in line:
                    if before_run:
                        before_run(len(runs))
                    before = counters() if counters else None
                    others = also()
                    cpu_before = tree_cpu_seconds(proc.pid, others)
                    proc.stdin.write(b"go\n")
                    proc.stdin.flush()
                elif "kpl_settings" in line or "heap_peaks" in line:
                    notes.update(line)
                else:
                    if counters and before is not None:
                        line["endpoint"] = counters_between(before, counters())
                        before = None
                    cpu_after = tree_cpu_seconds(proc.pid, others)  # a daemon replaced mid-run takes its CPU along
                    line["cpu_seconds"] = {kind: cpu_after[kind] - cpu_before.get(kind, 0.0) for kind in cpu_after}
                    line["warmup"] = len(runs) < warmup
                    runs.append(line)
            proc.wait()
        except BrokenPipeError:  # the child died before its go-ahead: its return code tells
            pass
        finally:
            deadline.cancel()
            sampler.stop()
            stop_process_tree(proc, 10)
    return {"returncode": proc.returncode, "runs": runs, **notes, "process_seconds": time.time() - started,
            "timed_out": expired.is_set(), "endpoint_cpu_seconds": cpu_seconds(os.getpid()) - cpu0,
            "peak_rss_bytes": sampler.peak_total, "peak_rss_by_kind": sampler.peak_by_kind,
            "started": started}


def machine(jar: Path) -> Dict[str, Any]:
    """The host, with the versions of everything measured."""
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    import pyspark
    return {**host.facts(), "java": java, "spark": pyspark.__version__,
            "kpl": f"{host.bundled_kpl_version(jar)} (amazon-kinesis-producer, shaded in {jar.name})",
            "aiokpl": _version("aiokpl"), "boto3": _version("boto3")}


def _version(dist: str) -> str:
    from importlib.metadata import version
    return version(dist)


def timed_runs(entry: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [r for r in entry["runs"] if not r.get("warmup") and r.get("seconds")]


def summarize(entry: Dict[str, Any], size: int) -> None:
    rates = [r["records"] / r["seconds"] for r in timed_runs(entry)]
    if not rates:
        return
    entry["records_per_s"] = {"min": min(rates), "median": statistics.median(rates), "max": max(rates)}
    entry["mb_per_s_median"] = statistics.median(rates) * size / 1e6
    first = entry["runs"][0]
    if first.get("warmup") and first.get("seconds"):
        entry["first_run_records_per_s"] = first["records"] / first["seconds"]
    kinesis = kinesis_figures(timed_runs(entry))
    if kinesis:
        entry["kinesis"] = kinesis


def sink_in_fresh_jvm(stream: str, records: int, size: int, runs: int, options: Dict[str, str], heap: str,
                      log: Path, counters: Callable[[], Dict[str, Any]],
                      before_run: Optional[Callable[[int], object]] = None,
                      spark: Tuple[str, Dict[str, str]] = ("local[2]", {}),
                      also: Callable[[], Sequence[int]] = tuple) -> Dict[str, Any]:
    """The sink writing ``records`` rows of ``size`` bytes to ``stream`` in a child of its own (a fresh
    JVM, its Spark master and settings ``spark``): one untimed write, then ``runs`` timed ones
    (``before_run`` and ``also`` as run_process takes them); the entry summarized, with CPU per record."""
    command = [sys.executable, str(ROOT / "bench/throughput.py"), "child", "--heap", heap, "--producer", "sink",
               "--records", str(records), "--size", str(size), "--runs", str(runs + 1),
               "--options", json.dumps(options), "--stream", stream, "--master", spark[0],
               "--conf", json.dumps(spark[1])]
    entry = run_process(command, log, timeout=900, counters=counters, warmup=1, before_run=before_run, also=also)
    entry.update(producer="sink", record_bytes=size, records=records)
    summarize(entry, size)
    entry["cpu_us_per_record"] = cpu_per_record(entry)
    return entry


def study_start(name: str, args: argparse.Namespace, out: Path,
                **facts: Any) -> Tuple[Path, Dict[str, Any], Path, Path]:
    """A study's start: its scratch folder, its report (the command, the start time, ``facts``, the
    machine and the jar measured), the jar (a copy of this checkout's build unless --jar), which
    SPARK_KPL_JAR then names for the children, and its log, emptied."""
    work = Path(tempfile.mkdtemp(prefix=f"spark-kpl-{name}-"))
    report: Dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv),
                              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **facts,
                              "results": []}
    jar = Path(args.jar) if args.jar else snapshot_jar(work, JAR)
    report["machine"] = machine(jar)
    report["jar_sha256"] = _sha256(jar)
    os.environ["SPARK_KPL_JAR"] = str(jar)
    log = out / f"{name}.log"
    log.write_text("")
    return work, report, jar, log


def study_main(name: str, parser: argparse.ArgumentParser,
               measure: Callable[[argparse.Namespace, Path], Dict[str, Any]],
               table: Callable[[Dict[str, Any]], List[str]], plot: Callable[[Dict[str, Any], Path], None]) -> int:
    """The command line the studies beside this benchmark share (shards, latency, cluster): their own
    arguments in ``parser``, then the heap, the jar, the output folder and --report; measures (or reads
    OUT/<name>.json back), prints the table and draws the plot."""
    parser.add_argument("--heap", default="2g", help="the child JVMs' heap (spark.driver.memory)")
    parser.add_argument("--jar", help="the sink's jar to measure (default: this checkout's build, copied)")
    parser.add_argument("--out", default=str(ROOT / "bench/results"))
    parser.add_argument("--report", action="store_true",
                        help=f"print the table of OUT/{name}.json and redraw the plot, measuring nothing")
    args = parser.parse_args()
    exit_on_sigterm()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = json.loads((out / f"{name}.json").read_text()) if args.report else measure(args, out)
    print("\n".join(table(report)))
    plot(report, out)
    return 0


def cpu_per_record(entry: Dict[str, Any]) -> Dict[str, float]:
    """Median over the timed runs of each process kind's CPU µs per user record: unlike the rate, it
    holds on a machine that other work keeps busy."""
    runs = [r for r in timed_runs(entry) if r.get("cpu_seconds")]
    kinds = sorted({kind for r in runs for kind in r["cpu_seconds"]})
    return {kind: statistics.median(1e6 * r["cpu_seconds"].get(kind, 0.0) / r["records"] for r in runs)
            for kind in kinds}


def kinesis_figures(runs: List[Dict[str, Any]]) -> Dict[str, float]:
    """Medians over the runs of what the endpoint stored per timed run: aggregation shows as user
    records (the run's input) per Kinesis record, and in the bytes per Kinesis record."""
    counted = [(r, r["endpoint"]) for r in runs if r.get("endpoint", {}).get("records_received")]
    if not counted:
        return {}
    per_run = {
        "user_records_per_record": [r["records"] / e["records_received"] for r, e in counted],
        "bytes_per_record": [e["bytes_received"] / e["records_received"] for r, e in counted],
        "records_per_put_call": [(e["records_received"] + e["records_rejected"]) / e["put_calls"] for r, e in counted],
        "put_calls_per_s": [e["put_calls"] / r["seconds"] for r, e in counted],
        "rejected_share": [e["records_rejected"] / (e["records_received"] + e["records_rejected"])
                           for r, e in counted],
    }
    return {name: statistics.median(values) for name, values in per_run.items()}


def settings_difference(loop: Dict[str, str], sink: Dict[str, str]) -> Dict[str, List[Optional[str]]]:
    """KPL settings where the loop's producer and the sink's differ, as [loop, sink], places aside."""
    return {k: [v, sink.get(k)] for k, v in loop.items() if k not in PLACE_SETTINGS and sink.get(k) != v}


def exit_on_sigterm() -> None:
    """Make SIGTERM raise SystemExit, so that the orchestrator's finally blocks stop its children and the
    endpoint."""
    def terminated(signum, frame):
        raise SystemExit(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminated)


def producer_list(value: str) -> List[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in PRODUCERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown producer(s) {unknown}: choose from {','.join(PRODUCERS)}")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="cmd")
    c = sub.add_parser("child")
    c.add_argument("--producer", required=True)
    c.add_argument("--records", type=int, required=True)
    c.add_argument("--cached-records", type=int, default=0, help="rows to cache, if more than --records")
    c.add_argument("--size", type=int, required=True)
    c.add_argument("--partitions", type=int, default=2)
    c.add_argument("--runs", type=int, default=3)
    c.add_argument("--options", default="{}")
    c.add_argument("--stream", default=STREAM)
    c.add_argument("--heap", default="4g")
    c.add_argument("--fixed-heap", action="store_true")
    c.add_argument("--master", default="local[2]")
    c.add_argument("--conf", default="{}", help="JSON object of Spark settings (a cluster's)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per producer and workload")
    parser.add_argument("--warmup-runs", type=int, default=1,
                        help="untimed runs of the same workload before them, in the same child")
    parser.add_argument("--small-records", type=int, default=1_000_000, help="workload A records (100 B)")
    parser.add_argument("--medium-records", type=int, default=300_000, help="workload M records (1 KB)")
    parser.add_argument("--large-records", type=int, default=100_000, help="workload B records (10 KB)")
    parser.add_argument("--boto3-scale", type=float, default=1.0,
                        help="boto3/aiokpl write this share of each workload (their rate is per record)")
    parser.add_argument("--aiokpl-scale", type=float, default=1.0, help="aiokpl writes this share")
    parser.add_argument("--per-record-scale", type=float, default=1.0,
                        help="sink_kpl and kpl_loop (the KPL's per-record path) write this share")
    parser.add_argument("--producers", type=producer_list, default=None,
                        help=f"comma-separated, of {','.join(PRODUCERS)} (default: all; "
                             f"{' and '.join(EXTRA_PRODUCERS)} not with --skip-extras)")
    parser.add_argument("--mock-records", type=int, default=20_000)
    parser.add_argument("--quota-records", type=int, default=200_000,
                        help="records of 100 B in the quota workload (0: not run)")
    parser.add_argument("--out", default=str(ROOT / "bench/results"))
    parser.add_argument("--jar", type=Path, default=JAR,
                        help="the spark-kpl jar measured (another build, e.g. on another KPL release)")
    parser.add_argument("--heap", default="4g", help="the JVMs' heap: spark.driver.memory, and -Xmx of the KPL loop")
    parser.add_argument("--fixed-heap", action="store_true",
                        help="every JVM's heap committed and touched at its maximum from the start (-Xms = -Xmx, "
                             "AlwaysPreTouch): peak RSS then compares what each producer holds beyond the heap")
    parser.add_argument("--sink-options", type=json.loads, default={},
                        help="JSON object of extra options for sink and sink_kpl (and kpl_loop's KPL properties)")
    parser.add_argument("--skip-extras", action="store_true",
                        help="no per-task, cold-start or kinesis-mock runs, and unless --producers names them, "
                             "no aiokpl or noop")
    args = parser.parse_args()
    if args.cmd == "child":
        return child(args)
    producers = args.producers or [p for p in PRODUCERS if not (args.skip_extras and p in EXTRA_PRODUCERS)]

    from spark_kpl_testing.endpoint import Faults, KinesisEndpoint

    exit_on_sigterm()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "throughput.log"
    log.write_text("")
    work = Path(tempfile.mkdtemp(prefix="spark-kpl-bench-"))
    report: Dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv), "started_utc": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "stream_shards": SHARDS,
        "kpl_tuning": KPL_TUNING, "sink_aggregation": SINK_AGGREGATION, "fixed_heap": args.fixed_heap, "results": [],
        "kpl_loop_settings": {}, "not_run": NOT_RUN}
    py = [sys.executable, str(Path(__file__).resolve()), "child", "--heap", args.heap,
          *(["--fixed-heap"] if args.fixed_heap else [])]
    runs = args.warmup_runs + args.runs  # what each child makes
    jar = snapshot_jar(work, args.jar)  # others may rebuild build/libs meanwhile: every producer uses this copy
    os.environ["SPARK_KPL_JAR"] = str(jar)
    report["jar"] = {"path": str(args.jar), "sha256": _sha256(jar)}
    report["machine"] = machine(jar)
    endpoint = KinesisEndpoint({STREAM: SHARDS}, store=False).start()
    try:
        native_dir = work / "native"
        native = subprocess.run([sys.executable, "-m", "spark_kpl", "extract-native", "--dir", str(native_dir),
                                 "--jar", str(jar)], env=loopback_env(), capture_output=True, text=True,
                                check=True).stdout.strip().splitlines()[-1]
        workloads = [("A_100B", 100, args.small_records, STREAM), ("M_1KB", 1_000, args.medium_records, STREAM),
                     ("B_10KB", 10_000, args.large_records, STREAM),
                     ("A_100B_quota", 100, args.quota_records, QUOTA_STREAM)]
        endpoint.create_stream(QUOTA_STREAM, QUOTA_SHARDS)
        for wname, size, n, stream in workloads:
            if not n:
                continue
            quota = stream == QUOTA_STREAM
            endpoint.set_faults(Faults.kinesis_limits() if quota else Faults())
            kpl_opts = {**(endpoint.kpl_options() if quota else {**endpoint.kpl_options(), **KPL_TUNING}),
                        **args.sink_options}
            for producer in producers:
                scale = {"boto3": args.boto3_scale, "aiokpl": args.aiokpl_scale, "sink_kpl": args.per_record_scale,
                         "kpl_loop": args.per_record_scale}.get(producer, 1.0)
                records = max(500, int(n * scale))
                print(f"[{time.strftime('%H:%M:%S')}] {wname} {producer} {records} records x "
                      f"({args.warmup_runs} warm-up + {args.runs})", flush=True)
                endpoint.reset_counters()
                if producer == "kpl_loop":  # the options sink_kpl gets, the daemon placed by hand
                    props = [f"{k}={v}" for k, v in {**kpl_opts, "aggregation": SINK_AGGREGATION["sink_kpl"],
                                                      "NativeExecutable": native,
                                                      "TempDirectory": str(native_dir)}.items()]
                    import pyspark
                    jars = Path(pyspark.__file__).parent / "jars"
                    # Spark's own jars supply what the sink gets from Spark at run time (slf4j, commons-logging)
                    heap_flags = fixed_heap_flags(args.heap) if args.fixed_heap else []
                    command = ["java", f"-Xmx{args.heap}", *heap_flags, "-cp", f"{jar}:{jars}/*",
                               str(ROOT / "bench/KplLoop.java"), stream,
                               str(records), str(size), str(runs), *props]
                else:
                    options = {**kpl_opts, "aggregation": SINK_AGGREGATION[producer]} \
                        if producer in SINK_AGGREGATION else {"_endpoint_url": endpoint.endpoint_url,
                                                              "_lift_limits": not quota}
                    command = py + ["--producer", producer, "--records", str(records), "--cached-records", str(n),
                                    "--size", str(size),
                                    "--runs", str(runs), "--options", json.dumps(options), "--stream", stream]
                entry = run_process(command, log, timeout=900, counters=endpoint.stats, warmup=args.warmup_runs)
                entry.update(workload=wname, producer=producer, record_bytes=size, records=records,
                             stream_shards=QUOTA_SHARDS if quota else SHARDS, key_bytes_mean=mean_key_bytes(
                                 [range(records)] if producer == "kpl_loop" else written_ids(n, records, 2)),
                             endpoint=endpoint.stats())
                summarize(entry, size)
                report["results"].append(entry)
                print(json.dumps({k: entry.get(k) for k in ("records_per_s", "kinesis", "peak_rss_bytes",
                                                            "returncode")}), flush=True)
                save_report(report, out)
            check_kpl_loop_settings(report, wname)
        endpoint.set_faults(Faults())
        kpl_opts = {**endpoint.kpl_options(), **KPL_TUNING}
        sink_opts = {**kpl_opts, "aggregation": SINK_AGGREGATION["sink"]}

        # Per-task overhead: the same 20,000 records in 2 or in 2,000 partitions, through the sink and
        # through Spark's noop sink (what Spark's own scheduling of those tasks costs).
        tasks = [(p, r, producer) for p, r in ((2, 10_000), (2000, 10)) for producer in ("sink", "noop")]
        for partitions, rows, producer in () if args.skip_extras else tasks:
            print(f"[{time.strftime('%H:%M:%S')}] tasks {partitions} x {rows} {producer}", flush=True)
            command = py + ["--producer", producer, "--records", str(partitions * rows), "--size", "100",
                            "--partitions", str(partitions), "--runs", str(runs), "--options",
                            json.dumps(sink_opts if producer == "sink" else kpl_opts)]
            entry = run_process(command, log, timeout=900, warmup=args.warmup_runs)
            entry.update(workload=f"tasks_{partitions}x{rows}", producer=producer, record_bytes=100,
                         records=partitions * rows, partitions=partitions)
            summarize(entry, 100)
            report["results"].append(entry)
            save_report(report, out)

        # Cold start: a fresh driver JVM, an empty nativeDir, save() to the first PutRecords arrival.
        for attempt in range(0 if args.skip_extras else 1):
            print(f"[{time.strftime('%H:%M:%S')}] cold start {attempt}", flush=True)
            cold_dir = work / f"cold-{attempt}"
            endpoint.reset_counters()  # its first_put_at: when the cold start's first PutRecords arrived
            command = py + ["--producer", "coldstart", "--records", "1000", "--size", "100", "--options",
                            json.dumps({**sink_opts, "nativeDir": str(cold_dir)})]
            entry = run_process(command, log, timeout=600)
            entry.update(workload="cold_start", producer="sink", records=1000)
            first_put = endpoint.first_put_at
            if entry["runs"] and first_put is not None:
                entry["save_to_first_put_s"] = first_put - entry["runs"][0]["save_start"]
                entry["process_start_to_first_put_s"] = first_put - entry["started"]
            report["results"].append(entry)
            save_report(report, out)

        if not args.skip_extras:
            report["results"].append(kinesis_mock_entry(py, log, args.mock_records))
    finally:
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
        report["machine"]["loadavg_end"] = host.facts()["loadavg"]
        save_report(report, out, finished=True)
    plot(report, out)
    return 0


def kinesis_mock_entry(py: List[str], log: Path, records: int) -> Dict[str, Any]:
    """The sink into kinesis-mock, for contrast: the emulator is the bottleneck there."""
    from spark_kpl_testing.kinesis import LocalKinesis

    print(f"[{time.strftime('%H:%M:%S')}] kinesis-mock sink {records}", flush=True)
    with LocalKinesis(streams={STREAM: 4}) as kinesis:
        command = py + ["--producer", "sink", "--records", str(records), "--size", "100", "--runs", "1",
                        "--options", json.dumps({**kinesis.kpl_options(), "aggregation": SINK_AGGREGATION["sink"]})]
        entry = run_process(command, log, timeout=900)
    entry.update(workload="A_100B_kinesis_mock", producer="sink", record_bytes=100, records=records)
    summarize(entry, 100)
    return entry


def check_kpl_loop_settings(report: Dict[str, Any], workload: str) -> None:
    """Record (and print) the KPL settings the loop ran with, and where they differ from sink_kpl's producer."""
    by_producer = {e["producer"]: e for e in report["results"] if e["workload"] == workload}
    loop = by_producer.get("kpl_loop", {})
    if "kpl_settings" not in loop:
        return
    check: Dict[str, Any] = {"set": loop["kpl_settings_set"]}
    if "kpl_settings" in by_producer.get("sink_kpl", {}):
        check["differs_from_sink_kpl"] = settings_difference(loop["kpl_settings"],
                                                             by_producer["sink_kpl"]["kpl_settings"])
    report["kpl_loop_settings"][workload] = check
    print(f"kpl_loop KPL settings ({workload}): {json.dumps(check)}", flush=True)


def _sha256(path: Path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot_jar(work: Path, jar: Path) -> Path:
    """Copy the built jar once it is complete (a rebuild may be writing it)."""
    import zipfile
    target = work / jar.name
    for _ in range(120):
        try:
            shutil.copyfile(jar, target)
            with zipfile.ZipFile(target) as z:
                z.getinfo("sparkkpl/shaded/software/amazon/kinesis/producer/KinesisProducer.class")
            return target
        except (OSError, KeyError, zipfile.BadZipFile):
            time.sleep(5)
    raise SystemExit(f"{jar} did not become a complete jar")


def save_report(report: Dict[str, Any], out: Path, name: str = "throughput", finished: bool = False) -> None:
    """Writes OUT/<name>.json: after every entry, so that a run stopped midway keeps what it measured;
    ``finished`` stamps its end first."""
    if finished:
        report["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (out / f"{name}.json").write_text(json.dumps(report, indent=1, default=str) + "\n")


def plot(report: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = [e for e in report["results"] if e.get("records_per_s") and e["workload"] in WORKLOADS]
    workloads = [w for w in WORKLOADS if any(e["workload"] == w for e in entries)]
    fig, axes = plt.subplots(3, len(workloads), figsize=(6 * len(workloads), 12), squeeze=False)
    for col, workload in enumerate(workloads):
        rows = [e for e in entries if e["workload"] == workload]
        names = [e["producer"] for e in rows]
        med = [e["records_per_s"]["median"] for e in rows]
        lo = [m - e["records_per_s"]["min"] for m, e in zip(med, rows)]
        hi = [e["records_per_s"]["max"] - m for m, e in zip(med, rows)]
        ax = axes[0][col]
        ax.bar(names, med, yerr=[lo, hi], capsize=6, color="tab:blue")
        ax.set_yscale("log")
        ax.set_title(f"{workload}: records/s (median, min-max bars)")
        for i, m in enumerate(med):
            ax.text(i, m, f"{m:,.0f}", ha="center", va="bottom", fontsize=8)
        ax = axes[1][col]
        ax.bar(names, [e["peak_rss_bytes"] / 2**20 for e in rows], color="tab:orange")
        ax.set_title(f"{workload}: peak RSS of the producer's process tree (MiB)")
        ax = axes[2][col]
        per_record = [e.get("kinesis", {}).get("user_records_per_record", 0) for e in rows]
        ax.bar(names, per_record, color="tab:green")
        if any(per_record):
            ax.set_yscale("log")
        ax.set_title(f"{workload}: user records per Kinesis record (endpoint)")
        for i, ratio in enumerate(per_record):
            if ratio:
                ax.text(i, ratio, f"{ratio:,.1f}", ha="center", va="bottom", fontsize=8)
    for ax in axes.flat:
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(out / "throughput.png", dpi=100)


if __name__ == "__main__":
    sys.exit(main())
