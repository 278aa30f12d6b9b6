"""Reliability scenarios (issue 6, item 5), run for real; writes docs/reliability.md.

``scripts/reliability.sh`` (or ``.venv/bin/python scripts/reliability.py [--records N] [--out PATH]``).

Each scenario writes N records (``row-<i>`` padded to 100 bytes, keys ``key-<i % 101>``) with
``recordId=prefix`` from PySpark (``local[2,4]``: two task threads, and Spark's task retry -- up to 4
attempts -- which plain ``local[2]`` turns off) through the real KPL to the project's own fault-injecting
endpoint (:class:`spark_kpl.testing.endpoint.KinesisEndpoint`) on 127.0.0.1, then reads the stream back:
records out (total and distinct payloads), duplicates, whether every duplicate is detectable by its
record id (the copies carry the same id), records missing, the task attempts that failed, and the
outcome. Nothing in the table is edited by hand.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from spark_kpl.testing._env import apply_loopback_env  # noqa: E402

apply_loopback_env()

import spark_kpl  # noqa: E402
from spark_kpl import dedup  # noqa: E402
from spark_kpl.testing.delivery import kcl_view  # noqa: E402
from spark_kpl.testing.endpoint import Faults, KinesisEndpoint  # noqa: E402
from spark_kpl.testing.processes import daemons_placed_in  # noqa: E402

MASTER = "local[2,4]"
PARTITIONS = 4
ROW_SLEEP_MS = 5


@dataclass
class Scenario:
    name: str
    faults: Faults = field(default_factory=Faults)
    options: Dict[str, str] = field(default_factory=dict)
    stream: Optional[str] = None  # write to this (missing) stream instead of the scenario's own
    #: (endpoint) -> None, run on a thread once the endpoint holds ``trigger_after`` records.
    during: Optional[Callable[[KinesisEndpoint], None]] = None
    trigger_after: int = 0
    note: str = ""
    #: A Structured Streaming query (one micro-batch per Spark partition of the rows), restarted from
    #: its checkpoint when it fails, instead of a batch write.
    streaming: bool = False


#: The records a killed daemon takes with it: one slow shard of unaggregated records keeps most in flight.
DAEMON_KILL = {"AggregationEnabled": "false", "failOnError": "false", "RecordTtl": "120000"}


def scenarios(count: int, kill_daemon: Callable[[KinesisEndpoint], None]) -> List[Scenario]:
    quarter = count // 4
    kill_note = ("SIGKILL to the KPL daemon once 25% arrived; 100 records/s per shard, unaggregated, so "
                 "most records are in flight; failOnError=false")
    return [
        Scenario("no faults"),
        Scenario("per-shard throttling", Faults(shard_records_per_second=5),
                 note="5 Kinesis records/s per shard (an aggregate counts as one; the KPL wants ~10/s)"),
        Scenario("partial PutRecords failures", Faults(record_failure_rate=0.3),
                 note="30% of records in each call fail with InternalFailure"),
        Scenario("5xx on a share of calls", Faults(http_error_rate=0.3), note="30% of PutRecords calls: 500/503"),
        Scenario("connection resets", Faults(reset_rate=0.3), note="30% of PutRecords calls reset, nothing stored"),
        Scenario("added latency", Faults(latency=0.5), note="+0.5 s per PutRecords call"),
        Scenario("outage shorter than RecordTtl", Faults(latency=0.2),
                 during=lambda ep: ep.outage(5), trigger_after=quarter,
                 note="5 s outage mid-write (after the first 25% arrived), RecordTtl 30 s; +0.2 s latency"),
        Scenario("outage longer than RecordTtl, failOnError=true", Faults(latency=0.2),
                 {"RecordTtl": "3000", "failOnError": "true"},
                 during=lambda ep: ep.outage(6), trigger_after=quarter,
                 note="6 s outage mid-write, RecordTtl 3 s: attempts fail until it is over, then Spark's task retry"),
        Scenario("unknown stream", options={"RecordTtl": "3000"}, stream="no-such-stream",
                 note="RecordTtl 3 s; each of the 4 task attempts fails"),
        Scenario("shard split mid-write", during=lambda ep: split_first_shard(ep), trigger_after=quarter,
                 note="the stream's first shard split in two once 25% arrived"),
        Scenario("KPL daemon killed, failOnError=false, batch write", Faults(shard_records_per_second=100),
                 DAEMON_KILL, during=kill_daemon, trigger_after=quarter, note=kill_note),
        Scenario("KPL daemon killed, failOnError=false, streaming", Faults(shard_records_per_second=100),
                 DAEMON_KILL, during=kill_daemon, trigger_after=quarter + count // 8, streaming=True,
                 note=kill_note.replace("25%", "37% (mid micro-batch 1 of 4)")
                 + "; the query is restarted from its checkpoint if it fails"),
        Scenario("credentials rejected by Kinesis",
                 options={"awsAccessKeyId": "AKIDUNKNOWN", "awsSecretAccessKey": "unknown", "RecordTtl": "3000"},
                 note="static keys the endpoint does not know (it checks each request's SigV4 signature, as Kinesis "
                      "does); RecordTtl 3 s; each of the 4 task attempts fails"),
    ]


def split_first_shard(endpoint: KinesisEndpoint) -> None:
    """Splits the open shard holding hash key 0 of the (single) stream being written, at its middle."""
    [stream] = endpoint.streams
    first = min((r for r in endpoint.hash_ranges(stream).items()), key=lambda item: (item[1][0], -item[1][1]))
    shard_id, (start, end) = first
    endpoint.split_shard(stream, shard_id, (start + end + 1) // 2)


def daemon_killer(spark, native_dir: Path) -> Callable[[KinesisEndpoint], None]:
    """Kills the KPL daemon that the driver JVM (which runs local-mode tasks) runs from ``native_dir``."""
    jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())

    def kill(_: KinesisEndpoint) -> None:
        for daemon in daemons_placed_in([jvm], native_dir):
            os.kill(daemon, signal.SIGKILL)

    return kill


def rows(spark, count: int):
    from pyspark.sql import functions as F

    # Each row sleeps ROW_SLEEP_MS in the task (Thread.sleep by reflection; '' appended), so a write lasts
    # seconds and faults hit it mid-way, as they would a long job.
    pause = F.coalesce(F.expr(f"reflect('java.lang.Thread', 'sleep', cast({ROW_SLEEP_MS} + id % 1 as bigint))"),
                       F.lit(""))
    return spark.range(count, numPartitions=PARTITIONS).select(
        F.concat(F.rpad(F.format_string("row-%d ", "id"), 100, "."), pause).alias("data"),
        F.format_string("key-%d", F.col("id") % 101).alias("partitionKey"))


def run_streaming(spark, rows, stream: str, options: Dict[str, str], run_ids: List[str],
                  max_restarts: int = 3) -> int:
    """Writes ``rows`` through a streaming query, one micro-batch per Spark partition, restarting it
    from its checkpoint after a failure as an operator would; returns how many restarts it took.
    Each run's id (the job group of its Spark jobs) is added to ``run_ids``."""
    with tempfile.TemporaryDirectory(prefix="spark-kpl-reliability-") as folder:
        source, checkpoint = os.path.join(folder, "source"), os.path.join(folder, "checkpoint")
        rows.write.parquet(source)
        for restarts in range(max_restarts + 1):
            query = (spark.readStream.schema(rows.schema).option("maxFilesPerTrigger", 1).parquet(source)
                     .writeStream.format("kpl").option("checkpointLocation", checkpoint)
                     .option("streamName", stream).option("recordId", "prefix").options(**options)
                     .trigger(availableNow=True).start())
            run_ids.append(str(query.runId))
            try:
                query.awaitTermination()
                return restarts
            except Exception:  # the batch was not committed: the restart sends it again
                if restarts == max_restarts:
                    raise
    raise AssertionError("unreachable")


def failed_task_attempts(spark, groups: List[str]) -> int:
    tracker = spark.sparkContext.statusTracker()
    failed = 0
    for job_id in (job for group in groups for job in tracker.getJobIdsForGroup(group)):
        job = tracker.getJobInfo(job_id)
        for stage_id in (job.stageIds if job else []):
            stage = tracker.getStageInfo(stage_id)
            if stage:
                failed += stage.numFailedTasks
    return failed


def dead_lettered(folder: Path) -> int:
    """Records the committed task attempts kept under ``deadLetterPath`` ``folder``, one a line (an
    attempt's hidden in-progress file is not yet, or no longer, one of them)."""
    return sum(len(path.read_text().splitlines()) for path in folder.rglob("*")
               if path.is_file() and not path.name.startswith("."))


def summarize_error(error: BaseException) -> str:
    text = str(error)
    for line in text.splitlines():
        if "Row " in line and "Spark partition" in line:
            text = line[line.index("Row "):]
            break
    else:
        text = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return text[:320]  # long enough for the earlier error that an Expired record names


def run(spark, endpoint: KinesisEndpoint, scenario: Scenario, number: int, count: int) -> Dict[str, Any]:
    stream = f"rel{number}"
    endpoint.create_stream(stream, shards=2)
    endpoint.set_faults(scenario.faults)
    endpoint.end_outage()
    group = f"reliability-{number}"
    stop = threading.Event()

    def trigger() -> None:
        while not stop.is_set():
            if len(endpoint.records(stream)) >= scenario.trigger_after:  # user records, de-aggregated
                scenario.during(endpoint)  # type: ignore[misc]
                return
            time.sleep(0.1)

    endpoint.reset_counters()
    watcher = threading.Thread(target=trigger, daemon=True) if scenario.during else None
    outcome, written, error_text = "", None, ""
    spark.sparkContext.setJobGroup(group, scenario.name)
    started = time.monotonic()
    if watcher:
        watcher.start()
    options = {**endpoint.kpl_options(), **scenario.options}
    # With failOnError=false a failed record is counted, not raised, and a streaming query reports no
    # count: such a scenario keeps its failed records as dead letters, and the outcome counts those.
    dead_letters: Optional[Path] = None
    if options.get("failOnError") == "false":
        dead_letters = Path(tempfile.mkdtemp(prefix="spark-kpl-reliability-dead-"))
        options["deadLetterPath"] = str(dead_letters)
    groups = [group]
    try:
        if scenario.streaming:
            restarts = run_streaming(spark, rows(spark, count), scenario.stream or stream, options, groups)
            outcome = f"success after {restarts} restart(s) of the query"
        else:
            result = spark_kpl.write(rows(spark, count), scenario.stream or stream, partition_key="partitionKey",
                                     recordId="prefix", **options)
            written = result.records_written
            outcome = f"success: {written} written, {result.records_failed} failed"
    except Exception as error:  # the outcome being measured
        error_text = summarize_error(error)
        outcome = f"error: {error_text}"
    duration = time.monotonic() - started
    if dead_letters:
        outcome += f"; {dead_lettered(dead_letters)} records dead-lettered"
        shutil.rmtree(dead_letters)
    stop.set()
    if watcher:
        watcher.join(5)
    endpoint.end_outage()
    endpoint.set_faults(Faults())
    hit = {**endpoint.record_errors, **{f"call {k}": v for k, v in endpoint.call_errors.items()}}
    records = endpoint.records(stream)
    ranges = endpoint.hash_ranges(stream)
    endpoint.delete_stream(stream)

    payloads: Counter = Counter()
    ids: Counter = Counter()
    id_of_payload: Dict[bytes, set] = {}
    for record in records:
        rid = dedup.record_id(record.data)
        body = dedup.strip(record.data)[:100]  # without what the row's pause appended
        payloads[body] += 1
        ids[rid] += 1
        id_of_payload.setdefault(body, set()).add(rid)
    total = sum(payloads.values())
    distinct = len(payloads)
    duplicates = total - distinct
    # Detectable: every copy of a payload carries one and the same id, so dropping repeated ids leaves
    # exactly one copy of each payload.
    detectable = all(len(v) == 1 for v in id_of_payload.values()) and len(ids) == distinct
    expected = {f"row-{i} ".ljust(100, ".").encode() for i in range(count)}
    missing = len(expected - set(payloads))
    missing_for_kcl = len(expected - {dedup.strip(r.data)[:100] for r in kcl_view(records, ranges)})
    unexpected = len(set(payloads) - expected)
    lost_reported = written is not None and (written > distinct or missing > 0)
    return {
        "scenario": scenario.name, "note": scenario.note, "in": count, "total": total, "distinct": distinct,
        "duplicates": duplicates, "detectable": detectable, "missing": missing, "missing_for_kcl": missing_for_kcl,
        "unexpected": unexpected,
        "failed_attempts": failed_task_attempts(spark, groups), "outcome": outcome,
        "reported_but_absent": lost_reported,
        "hit": ", ".join(f"{k} {v}" for k, v in sorted(hit.items()) if v) or "none", "seconds": duration,
    }


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(next(line for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal")).split()[1])
        mem = f", {kib / (1 << 20):.1f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{platform.node()}: {cpu}, {os.cpu_count()} CPUs{mem}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}; load average at start {load}")


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(results: List[Dict[str, Any]], count: int, started: str, host: str, spark_version: str,
           wall: float) -> str:
    lines = [
        "# Reliability: fault scenarios, measured",
        "",
        f"Generated by `scripts/reliability.sh` on {started} on {host}; Spark {spark_version}, "
        f"master `{MASTER}`, KPL 1.0.9. Never edited by hand: re-run the script to update it "
        f"(whole run {wall:.0f} s).",
        "",
        f"Each scenario writes {count} records of 100 bytes in {PARTITIONS} Spark partitions (each row "
        f"taking {ROW_SLEEP_MS} ms to compute, so a write lasts seconds and faults meet it mid-way), with "
        "`recordId=prefix`, through the real KPL to the project's own fault-injecting Kinesis endpoint "
        "(`spark_kpl.testing.endpoint.KinesisEndpoint`, 2 shards, TLS on 127.0.0.1), then reads the stream "
        "back. *Distinct* counts distinct payloads; *duplicates* = total - distinct; *detectable* means every "
        "copy of a payload carries the same record id, so `spark_kpl.dedup` drops them all; *missing* = input "
        "records not in the stream; *missing for a KCL consumer* = input records a KCL consumer would not receive: "
        "it drops a whole KPL aggregate when any record in it hashes outside the range of the shard that stored it "
        "(after a split or merge); *failed attempts* = Spark task attempts that failed (then retried, up to 4 "
        "per task); *faults the endpoint injected*: its counters of record errors and failed calls.",
        "",
        "| scenario | faults | records in | out total | out distinct | duplicates | detectable by record id "
        "| missing | missing for a KCL consumer | failed attempts | faults the endpoint injected | outcome "
        "| duration (s) |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|---|---:|",
    ]
    for r in results:
        lines.append(
            f"| {cell(r['scenario'])} | {cell(r['note'] or 'none')} | {r['in']} | {r['total']} | {r['distinct']} "
            f"| {r['duplicates']} | {'yes' if r['detectable'] else 'NO'} | {r['missing']} | {r['missing_for_kcl']} "
            f"| {r['failed_attempts']} "
            f"| {cell(r['hit'])} | {cell(r['outcome'])} | {r['seconds']:.1f} |")
    flagged = [r["scenario"] for r in results if r["reported_but_absent"] or r["unexpected"]]
    lines += ["", "Records reported written but absent from the stream, or unexpected records: "
              + (", ".join(flagged) if flagged else "none") + ".", ""]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--out", default=str(REPO / "docs" / "reliability.md"))
    parser.add_argument("--only", action="append", help="run only scenarios whose name contains this")
    args = parser.parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    wall_start = time.monotonic()

    from pyspark.sql import SparkSession

    builder = spark_kpl.configure(SparkSession.builder.master(MASTER).appName("spark-kpl-reliability"))
    for key, value in {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                       "spark.kpl.producerIdleTimeoutMs": "2000"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    results = []
    try:
        with KinesisEndpoint() as endpoint:
            native_dir = Path(tempfile.mkdtemp(prefix="spark-kpl-reliability-native-"))
            kill_daemon = daemon_killer(spark, native_dir)
            for number, scenario in enumerate(scenarios(args.records, kill_daemon)):
                if scenario.during is kill_daemon:
                    scenario.options = {**scenario.options, "nativeDir": str(native_dir)}
                if args.only and not any(o in scenario.name for o in args.only):
                    continue
                result = run(spark, endpoint, scenario, number, args.records)
                print(f"{result['scenario']}: in {result['in']}, out {result['total']} "
                      f"({result['distinct']} distinct), dup {result['duplicates']} "
                      f"missing for KCL {result['missing_for_kcl']} (detectable {result['detectable']}), "
                      f"missing {result['missing']}, failed attempts {result['failed_attempts']}, "
                      f"hit [{result['hit']}], {result['outcome'][:150]} [{result['seconds']:.1f} s]",
                      flush=True)
                results.append(result)
        version = spark.version
    finally:
        spark.stop()
    Path(args.out).write_text(render(results, args.records, started, host, version,
                                     time.monotonic() - wall_start))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
