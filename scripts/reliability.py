"""Reliability scenarios, run for real; writes docs/reliability.md.

``scripts/reliability.sh`` (or ``.venv/bin/python scripts/reliability.py [--records N] [--out PATH]``).

Each scenario writes N records (``row-<i>`` padded to 100 bytes, keys ``key-<i % 101>``) with
``recordId=prefix`` from PySpark (``local[2,4]``: two task threads, and Spark's task retry -- up to 4
attempts -- which plain ``local[2]`` turns off) through the real KPL to the project's own fault-injecting
endpoint (:class:`spark_kpl_testing.endpoint.KinesisEndpoint`) on 127.0.0.1, then reads the stream back:
records out (total and distinct payloads), duplicates, whether every duplicate is detectable by its
record id (the copies carry the same id), records missing, the task attempts that failed, and the
outcome. The executor kill runs on a real standalone cluster (two worker JVMs); the streaming driver
kill runs the query in a driver process of its own (spark_kpl_testing.streaming_driver). Each scenario
states the outcome its fault must lead to, and the script exits non-zero when a row breaks it or shows
a loss: a write reporting success with records missing other than exactly its dead letters,
undetectable duplicates, records reported written but absent, or unexpected records. Nothing in the
table is edited by hand.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]

from spark_kpl_testing.env import apply_loopback_env  # noqa: E402

apply_loopback_env()

import spark_kpl  # noqa: E402
from spark_kpl import dedup  # noqa: E402
from spark_kpl._jar import jar_path  # noqa: E402
from spark_kpl_testing.cluster import StandaloneCluster  # noqa: E402
from spark_kpl_testing.delivery import kcl_view, wait_until_settled  # noqa: E402
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint  # noqa: E402
from spark_kpl_testing.host import bundled_kpl_version, summary  # noqa: E402
from spark_kpl_testing.polling import poll_until  # noqa: E402
from spark_kpl_testing.processes import daemons_placed_in, driver_jvm_pid  # noqa: E402
from spark_kpl_testing.records import Record  # noqa: E402
from spark_kpl_testing.streaming_driver import kill_between_sink_and_spark_commit, start_query  # noqa: E402

MASTER = "local[2,4]"
CLUSTER_WORKERS = 2
PARTITIONS = 4
ROW_SLEEP_MS = 5
#: Data of the rows over the size limit (every 100th, with ``oversized_rows``): with the key and the
#: record-id header, over the default maxRecordBytes (1 MiB, data plus partition key).
OVERSIZED_BYTES = 1 << 20


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
    #: The outcome this fault must lead to (a regular expression matched at the outcome's start).
    expect: str = "success"
    #: On the standalone cluster (an executor JVM per worker) instead of local mode.
    cluster: bool = False
    #: Every 100th row carries OVERSIZED_BYTES of data.
    oversized_rows: bool = False
    #: The data of each (other) row, in bytes: its first 100 name it.
    row_bytes: int = 100
    #: A streaming query whose driver is killed after the sink committed a micro-batch and before Spark
    #: logged it, then restarted from its checkpoint.
    driver_killed: bool = False
    #: The stream is on-demand (it has a record distribution strategy).
    on_demand: bool = False
    #: (spark, endpoint, stream, options) -> None, run before the write, in the same Spark session.
    before: Optional[Callable[[Any, KinesisEndpoint, str, Dict[str, str]], None]] = None


#: The records a killed daemon takes with it: one slow shard of unaggregated records keeps most in flight.
DAEMON_KILL = {"AggregationEnabled": "false", "failOnError": "false", "RecordTtl": "120000"}


class ProcessFaults:
    """The faults that hit processes of the Spark session a scenario runs on (set as it changes)."""

    def __init__(self) -> None:
        self.spark: Any = None
        self.cluster: Optional[StandaloneCluster] = None
        self.native_dir = Path(tempfile.mkdtemp(prefix="spark-kpl-reliability-native-"))

    def kill_daemon(self, _: KinesisEndpoint) -> None:
        """Kills the KPL daemon that the driver JVM (which runs local-mode tasks) runs from ``native_dir``."""
        jvm = driver_jvm_pid(self.spark)
        for daemon in daemons_placed_in([jvm], self.native_dir):
            os.kill(daemon, signal.SIGKILL)

    def kill_executor(self, _: KinesisEndpoint) -> None:
        assert self.cluster is not None, "an executor kill runs on the standalone cluster"
        self.cluster.kill_executor()

    def cancel_jobs(self, _: KinesisEndpoint) -> None:
        self.spark.sparkContext.cancelAllJobs()


class StreamDeletion:
    """Deletes the stream being written. Its records go with it, so it first keeps what the stream
    held, during a moment's outage of the endpoint so that no call stores more in between."""

    def __init__(self) -> None:
        self.held: List[Record] = []
        self.ranges: Dict[str, Any] = {}

    def __call__(self, endpoint: KinesisEndpoint) -> None:
        [stream] = endpoint.streams
        endpoint.outage(30)
        time.sleep(0.5)  # a call already past the outage check finishes storing
        self.held, self.ranges = endpoint.records(stream), endpoint.hash_ranges(stream)
        endpoint.delete_stream(stream)
        endpoint.end_outage()


class StreamRecreation:
    """Deletes the stream being written and creates it again under its name with twice the shards, whose
    ids start over with other hash ranges. What the first one held is kept first (as StreamDeletion)."""

    def __init__(self, gap_seconds: float = 1.0) -> None:
        self.gap_seconds = gap_seconds
        self.deletion = StreamDeletion()

    def __call__(self, endpoint: KinesisEndpoint) -> None:
        [stream] = endpoint.streams
        shards = endpoint.streams[stream]
        self.deletion(endpoint)
        time.sleep(self.gap_seconds)
        endpoint.create_stream(stream, shards=2 * shards)


#: Data that a scenario's earlier write (``Scenario.before``) sends, apart from the rows it counts.
EARLIER_WRITE = b"earlier-"


def write_then_create_again(spark, endpoint: KinesisEndpoint, stream: str, options: Dict[str, str]) -> None:
    """One write to the stream, then the stream deleted and created again with twice the shards."""
    earlier_write(spark, stream, options)
    shards = endpoint.streams[stream]
    endpoint.delete_stream(stream)
    endpoint.create_stream(stream, shards=2 * shards)


def write_then_switch_to_auto(spark, endpoint: KinesisEndpoint, stream: str, options: Dict[str, str]) -> None:
    """One write to the (on-demand) stream, then its record distribution strategy switched to AUTO."""
    earlier_write(spark, stream, options)
    endpoint.set_record_distribution(stream, "AUTO")


def earlier_write(spark, stream: str, options: Dict[str, str]) -> None:
    from pyspark.sql import functions as F

    earlier = spark.range(1000, numPartitions=PARTITIONS).select(
        F.concat(F.lit(EARLIER_WRITE.decode()), F.col("id").cast("string")).alias("data"),
        F.format_string("key-%d", F.col("id") % 101).alias("partitionKey"))
    spark_kpl.write(earlier, stream, partition_key="partitionKey", **options)


class DeadLettersTurnedIntoFile:
    """A deadLetterPath that stops being writable mid-write: its folder is replaced by a file."""

    def __init__(self) -> None:
        self.path = Path(tempfile.gettempdir()) / f"spark-kpl-reliability-dead-letters-{os.getpid()}"

    def __call__(self, _: KinesisEndpoint) -> None:
        shutil.rmtree(self.path)
        self.path.write_text("not a folder\n")


def scenarios(count: int, processes: ProcessFaults) -> List[Scenario]:
    quarter = count // 4
    kill_note = ("SIGKILL to the KPL daemon once 25% arrived; 100 records/s per shard, unaggregated, so "
                 "most records are in flight; failOnError=false")
    daemon_kill = {**DAEMON_KILL, "nativeDir": str(processes.native_dir)}
    unwritable = DeadLettersTurnedIntoFile()
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
                 expect="error: .*ResourceNotFoundException",
                 note="refused on the driver, before any task: its look at the stream (DescribeStreamSummary) "
                      "finds none"),
        Scenario("shard split mid-write", during=lambda ep: split_first_shard(ep), trigger_after=quarter,
                 note="the stream's first shard split in two once 25% arrived"),
        Scenario("shard merge mid-write", during=lambda ep: merge_the_two_shards(ep), trigger_after=quarter,
                 note="the stream's two shards merged into one once 25% arrived"),
        Scenario("shard split while a streaming query runs", during=lambda ep: split_first_shard(ep),
                 trigger_after=quarter + count // 8, streaming=True,
                 note="the stream's first shard split in two mid micro-batch 1 of 4"),
        Scenario("shard merge while a streaming query runs", during=lambda ep: merge_the_two_shards(ep),
                 trigger_after=quarter + count // 8, streaming=True,
                 note="the stream's two shards merged into one mid micro-batch 1 of 4"),
        Scenario("stream created again between writes", before=write_then_create_again,
                 note="a write of 1,000 rows in the same session, then the stream deleted and created again under "
                      "its name with 4 shards (shard ids start over, with other hash ranges)"),
        Scenario("stream created again during a streaming query", during=StreamRecreation(),
                 trigger_after=quarter + count // 8, streaming=True, expect=r"success after [1-9]\d* restart",
                 note="the stream deleted mid micro-batch 1 of 4 (out: what it held then, and the new stream's), "
                      "created again 1 s later under its name with 4 shards; RecordTtl 30 s. The micro-batch fails "
                      "at its commit (StreamRecreated: a KCL consumer may miss aggregates built for the old "
                      "stream's shards), and the query, restarted from its checkpoint, sends it again"),
        Scenario("stream switched to AUTO between writes", before=write_then_switch_to_auto, on_demand=True,
                 note="an on-demand stream: a write of 1,000 rows (aggregated), then its record distribution "
                      "strategy switched to AUTO (Kinesis places records itself, ignoring keys)"),
        Scenario("ListShards throttled", Faults(limit_exceeded_rate=0.5, operations=frozenset({"ListShards"})),
                 note="half the ListShards calls (the sink's and the KPL daemon's) refused with "
                      "LimitExceededException"),
        Scenario("KPL daemon killed, failOnError=false, batch write", Faults(shard_records_per_second=100),
                 daemon_kill, during=processes.kill_daemon, trigger_after=quarter, note=kill_note),
        Scenario("KPL daemon killed, failOnError=false, streaming", Faults(shard_records_per_second=100),
                 daemon_kill, during=processes.kill_daemon, trigger_after=quarter + count // 8, streaming=True,
                 note=kill_note.replace("25%", "37% (mid micro-batch 1 of 4)")
                 + "; the query is restarted from its checkpoint if it fails"),
        Scenario("executor JVM killed, standalone cluster", Faults(shard_records_per_second=100),
                 {"AggregationEnabled": "false", "RecordTtl": "120000"}, during=processes.kill_executor,
                 trigger_after=quarter, cluster=True,
                 note=f"{CLUSTER_WORKERS} workers, an executor JVM each; SIGKILL to one executor once 25% "
                      "arrived; 100 records/s per shard, unaggregated, so most records are in flight"),
        Scenario("cancelled job", during=processes.cancel_jobs, trigger_after=quarter,
                 expect="error: .*cancel", note="SparkContext.cancelAllJobs() once 25% arrived"),
        Scenario("streaming driver killed between the sink's commit and Spark's, restarted", driver_killed=True,
                 expect=r"success: .* ran batch (\d+) again \([1-9]\d* rows\), re-sent 0 of them",
                 note="the query's driver (its own process, local mode) gets SIGKILL the instant the sink has "
                      "committed micro-batch 1 or later (of 4) and Spark has not logged it; the query is then "
                      "restarted from its checkpoint"),
        Scenario("stream deleted mid-write", options={"RecordTtl": "3000"}, during=StreamDeletion(),
                 trigger_after=quarter, expect="error: .*ResourceNotFoundException",
                 note="the stream deleted once 25% arrived, and with it what it stored (out: what it held then; "
                      "the endpoint paused 0.5 s to count it); RecordTtl 3 s"),
        Scenario("endpoint down when the write starts, then back", during=lambda ep: ep.outage(8),
                 note="every connection and call reset for the write's first 8 s, then served; RecordTtl 30 s"),
        Scenario("per-shard quotas held through the write, at the defaults", Faults.kinesis_limits(0.01),
                 {"AggregationMaxSize": "4096"},
                 note="Kinesis's per-shard limits scaled to 1% (10 records/s and 10 KiB/s per shard), with 4 KiB "
                      "aggregates, so the write offers about twice what the stream takes for its whole length; "
                      "RecordTtl 30 s, the queue caps and their budget at their defaults"),
        Scenario("per-shard quotas held through a streaming query, at the defaults", Faults.kinesis_limits(0.01),
                 {"AggregationMaxSize": "4096"}, streaming=True,
                 note="as above, through a streaming query of 4 micro-batches: no batch may fail"),
        Scenario("per-shard quotas held longer than RecordTtl, failOnError=false",
                 Faults.kinesis_limits(0.01), {"failOnError": "false", "RecordTtl": "2000",
                                               "AggregationMaxSize": "4096"},
                 note="Kinesis's per-shard limits scaled to 1% (10 records/s and 10 KiB/s per shard), with 4 KiB "
                      "aggregates (AggregationMaxSize=4096), so this write stays over them for seconds; "
                      "RecordTtl 2 s; deadLetterPath set"),
        Scenario("dead-letter path unwritable mid-write", options={"failOnError": "false",
                                                                   "deadLetterPath": str(unwritable.path)},
                 during=unwritable, trigger_after=quarter, oversized_rows=True,
                 expect=f"error: .*{re.escape(str(unwritable.path))}",
                 note="every 100th row over maxRecordBytes, failOnError=false: those go to deadLetterPath, "
                      "whose folder is replaced by a file once 25% arrived"),
        Scenario("records over the maximum record size", oversized_rows=True,
                 expect=r"error: Row \d+ of Spark partition \d+, column 'data': the record has \d+ bytes",
                 note=f"every 100th row has {OVERSIZED_BYTES} bytes of data: over maxRecordBytes (1 MiB, "
                      "data plus partition key, the stream's default maximum)"),
        Scenario("records over the maximum record size, failOnError=false", options={"failOnError": "false"},
                 oversized_rows=True,
                 note=f"every 100th row has {OVERSIZED_BYTES} bytes of data; failOnError=false, deadLetterPath set"),
        Scenario("aggregates at the record size limit", options={"AggregationMaxSize": str((1 << 20) - 1)},
                 row_bytes=20_000,
                 note="rows of 20,000 bytes and AggregationMaxSize=1048575, the most the sink takes (1048576 is "
                      "refused: Kinesis's 1 MiB counts the aggregate's partition key 'a' with its data), so "
                      "aggregates fill up to the limit"),
        Scenario("credentials rejected by Kinesis",
                 options={"awsAccessKeyId": "AKIDUNKNOWN", "awsSecretAccessKey": "unknown", "RecordTtl": "3000"},
                 expect="error: .*UnrecognizedClientException",
                 note="static keys the endpoint does not know (it checks each request's SigV4 signature, as Kinesis "
                      "does): refused on the driver, whose look at the stream is signed with them"),
    ]


def split_first_shard(endpoint: KinesisEndpoint) -> None:
    """Splits the open shard holding hash key 0 of the (single) stream being written, at its middle."""
    [stream] = endpoint.streams
    first = min((r for r in endpoint.hash_ranges(stream).items()), key=lambda item: (item[1][0], -item[1][1]))
    shard_id, (start, end) = first
    endpoint.split_shard(stream, shard_id, (start + end + 1) // 2)


def merge_the_two_shards(endpoint: KinesisEndpoint) -> None:
    """Merges the two open shards of the (single) stream being written, lower hash range first."""
    [stream] = endpoint.streams
    ranges = endpoint.hash_ranges(stream)
    low, high = sorted(ranges, key=lambda shard_id: ranges[shard_id][0])
    endpoint.merge_shards(stream, low, high)


def rows(spark, count: int, oversized: bool = False, row_bytes: int = 100):
    from pyspark.sql import functions as F

    # Each row sleeps ROW_SLEEP_MS in the task (Thread.sleep by reflection; '' appended), so a write lasts
    # seconds and faults hit it mid-way, as they would a long job.
    pause = F.coalesce(F.expr(f"reflect('java.lang.Thread', 'sleep', cast({ROW_SLEEP_MS} + id % 1 as bigint))"),
                       F.lit(""))
    # An oversized row is its normal row padded on: its first 100 bytes still name it.
    length = f"IF(id % 100 = 99, {OVERSIZED_BYTES}, {row_bytes})" if oversized else str(row_bytes)
    return spark.range(count, numPartitions=PARTITIONS).select(
        F.concat(F.expr(f"rpad(format_string('row-%d ', id), {length}, '.')"), pause).alias("data"),
        F.format_string("key-%d", F.col("id") % 101).alias("partitionKey"))


def body(data: bytes) -> bytes:
    """The row a record was made of: without its record id and what the row's pause appended."""
    return dedup.strip(data)[:100]


def run_streaming(spark, rows, stream: str, options: Dict[str, str], run_ids: List[str],
                  max_restarts: int = 3) -> str:
    """Writes ``rows`` through a streaming query, one micro-batch per Spark partition, restarting it
    from its checkpoint after a failure as an operator would. Each run's id (the job group of its
    Spark jobs) is added to ``run_ids``."""
    with tempfile.TemporaryDirectory(prefix="spark-kpl-reliability-") as folder:
        source, checkpoint = Path(folder, "source"), Path(folder, "checkpoint")
        rows.write.parquet(str(source))
        for restarts in range(max_restarts + 1):
            query = start_query(spark, source, checkpoint, stream, {**options, "recordId": "prefix"})
            run_ids.append(str(query.runId))
            try:
                query.awaitTermination()
                return f"success after {restarts} restart(s) of the query"
            except Exception:  # the batch was not committed: the restart sends it again
                if restarts == max_restarts:
                    raise
    raise AssertionError("unreachable")


def run_with_driver_killed(spark, endpoint: KinesisEndpoint, rows, stream: str, options: Dict[str, str],
                           run_ids: List[str]) -> str:
    """The query runs in a driver process of its own until it is killed between the sink's commit of a
    batch and Spark's, then again in this driver from its checkpoint."""
    with tempfile.TemporaryDirectory(prefix="spark-kpl-reliability-") as folder:
        source, checkpoint = Path(folder, "source"), Path(folder, "checkpoint")
        rows.write.parquet(str(source))
        options = {**options, "recordId": "prefix"}
        killed = kill_between_sink_and_spark_commit(source, checkpoint, stream, options, Path(folder, "driver.log"))
        query = start_query(spark, source, checkpoint, stream, options)
        run_ids.append(str(query.runId))
        query.awaitTermination()
        again = sum(p["numInputRows"] for p in query.recentProgress if p["batchId"] == killed)
    copies = Counter(body(r.data) for r in endpoint.records(stream) if dedup.record_id(r.data).batch_id == killed)
    return (f"success: the driver was killed after the sink committed batch {killed} and before Spark logged "
            f"it; restarted from the checkpoint, Spark ran batch {killed} again ({again} rows), re-sent "
            f"{sum(copies.values()) - len(copies)} of them")


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


def dead_lettered(folder: Path) -> Counter:
    """The rows of the records that committed task attempts kept under ``deadLetterPath`` ``folder``,
    with their counts (an attempt's hidden in-progress file is not yet, or no longer, one of them)."""
    files = [path for path in folder.rglob("*") if path.is_file() and not path.name.startswith(".")]
    return Counter(body(base64.b64decode(json.loads(line)["data"]))
                   for path in files for line in path.read_text().splitlines())


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


#: Long enough for the earlier error that an Expired record names (Kinesis's own answer).
ERROR_CHARS = 320


def summarize_error(error: BaseException) -> str:
    """The line of a write's error that says what went wrong: the row at fault, else the last task
    failure, else the first line that is not Py4J's own."""
    lines = [line.strip().lstrip(": ") for line in str(error).splitlines() if line.strip()]
    for line in lines:
        if "Row " in line and "Spark partition" in line:
            return line[line.index("Row "):][:ERROR_CHARS]
    for line in lines:
        if "most recent failure: Lost task" in line:
            return line.split("): ", 1)[-1][:ERROR_CHARS]
    own = [line for line in lines if not line.startswith("An error occurred while calling")]
    return (own or lines or [type(error).__name__])[0][:ERROR_CHARS]


def write(spark, endpoint: KinesisEndpoint, scenario: Scenario, stream: str, options: Dict[str, str], count: int,
          groups: List[str]) -> Tuple[str, Optional[int]]:
    """Runs the scenario's write; returns its outcome and the records it reported written (batch only)."""
    data = rows(spark, count, scenario.oversized_rows, scenario.row_bytes)
    if scenario.driver_killed:
        return run_with_driver_killed(spark, endpoint, data, stream, options, groups), None
    if scenario.streaming:
        return run_streaming(spark, data, stream, options, groups), None
    result = spark_kpl.write(data, stream, partition_key="partitionKey", recordId="prefix", **options)
    return f"success: {result.records_written} written, {result.records_failed} failed", result.records_written


def tally(stored: List[Tuple[List[Record], Dict[str, Any]]], count: int) -> Dict[str, Any]:
    """What the stream holds (each incarnation's records and shard ranges), against the ``count`` rows
    written; the records of a scenario's earlier write left out."""
    def counted(records: List[Record]) -> List[Record]:
        return [r for r in records if not r.data.startswith(EARLIER_WRITE)]

    records = [r for held, _ in stored for r in counted(held)]
    kcl = [r for held, ranges in stored for r in counted(kcl_view(held, ranges))]
    payloads: Counter = Counter()
    ids: Counter = Counter()
    id_of_payload: Dict[bytes, set] = {}
    for record in records:
        rid = dedup.record_id(record.data)
        payloads[body(record.data)] += 1
        ids[rid] += 1
        id_of_payload.setdefault(body(record.data), set()).add(rid)
    distinct = len(payloads)
    expected = {f"row-{i} ".ljust(100, ".").encode() for i in range(count)}
    return {
        "total": sum(payloads.values()), "distinct": distinct, "duplicates": sum(payloads.values()) - distinct,
        # Detectable: every copy of a payload carries one and the same id, so dropping repeated ids leaves
        # exactly one copy of each payload.
        "detectable": all(len(v) == 1 for v in id_of_payload.values()) and len(ids) == distinct,
        "missing_rows": expected - set(payloads),
        "missing_for_kcl_rows": expected - {body(r.data) for r in kcl},
        "unexpected": len(set(payloads) - expected),
    }


def run(spark, endpoint: KinesisEndpoint, scenario: Scenario, number: int, count: int) -> Dict[str, Any]:
    stream = f"rel{number}"
    endpoint.create_stream(stream, shards=2, on_demand=scenario.on_demand)
    endpoint.set_faults(scenario.faults)
    endpoint.end_outage()
    group = f"reliability-{number}"
    stop = threading.Event()

    def trigger() -> None:
        reached = poll_until(lambda: stop.is_set() or len(endpoint.records(stream)) >= scenario.trigger_after,
                             math.inf)  # user records, de-aggregated
        if reached and not stop.is_set():
            scenario.during(endpoint)  # type: ignore[misc]

    endpoint.reset_counters()
    watcher = threading.Thread(target=trigger, daemon=True) if scenario.during else None
    written: Optional[int] = None
    spark.sparkContext.setJobGroup(group, scenario.name)
    started = time.monotonic()
    if watcher:
        watcher.start()
    options = {**endpoint.kpl_options(), **scenario.options}
    # With failOnError=false a failed record is counted, not raised, and a streaming query reports no
    # count: such a scenario keeps its failed records as dead letters, and the outcome counts those.
    dead_letters: Optional[Path] = None
    if options.get("failOnError") == "false":
        if "deadLetterPath" not in options:
            options["deadLetterPath"] = tempfile.mkdtemp(prefix="spark-kpl-reliability-dead-")
        dead_letters = Path(options["deadLetterPath"])
    groups = [group]
    if scenario.before:
        scenario.before(spark, endpoint, stream, options)
    try:
        outcome, written = write(spark, endpoint, scenario, scenario.stream or stream, options, count, groups)
    except Exception as error:  # the outcome being measured
        outcome = f"error: {summarize_error(error)}"
        wait_until_settled(endpoint, quiet=2)  # what the failed tasks had in flight lands first
    duration = time.monotonic() - started
    stop.set()
    if watcher:
        watcher.join(5)
    endpoint.end_outage()
    endpoint.set_faults(Faults())
    hit = {**endpoint.record_errors, **{f"call {k}": v for k, v in endpoint.call_errors.items()}}
    # Each incarnation of the stream with its shards' ranges: a stream created again under the name starts
    # its shard ids over, so a KCL consumer reads each apart.
    stored: List[Tuple[List[Record], Dict[str, Any]]] = []
    deletion = scenario.during.deletion if isinstance(scenario.during, StreamRecreation) else scenario.during
    if isinstance(deletion, StreamDeletion):
        stored.append((deletion.held, deletion.ranges))
    if stream in endpoint.streams:
        stored.append((endpoint.records(stream), endpoint.hash_ranges(stream)))
        endpoint.delete_stream(stream)
    assert stored, f"stream {stream} vanished"
    counts = tally(stored, count)
    dead: Counter = Counter()
    if dead_letters:
        if dead_letters.is_dir():
            dead = dead_lettered(dead_letters)
            same = "the same rows" if set(dead) == counts["missing_rows"] else "NOT the same rows"
            outcome += (f"; dead letters: {sum(dead.values())} records ({len(dead)} distinct rows), missing: "
                        f"{len(counts['missing_rows'])}, {same}")
        else:
            outcome += "; deadLetterPath is no folder: no dead letters to read"
        remove(dead_letters)
    return {
        "scenario": scenario.name, "note": scenario.note, "in": count, **counts,
        "missing": len(counts["missing_rows"]), "missing_for_kcl": len(counts["missing_for_kcl_rows"]),
        "dead_lettered": set(dead), "failed_attempts": failed_task_attempts(spark, groups), "outcome": outcome,
        "reported_but_absent": written is not None and written > counts["distinct"],
        "hit": ", ".join(f"{k} {v}" for k, v in sorted(hit.items()) if v) or "none", "seconds": duration,
    }


def violations(scenario: Scenario, result: Dict[str, Any]) -> List[str]:
    """How a row breaks what its fault must lead to, or shows a loss; empty when it does not."""
    found = []
    if not re.match(scenario.expect, result["outcome"]):
        found.append(f"outcome is not /{scenario.expect}/")
    if not result["detectable"]:
        found.append("duplicates not detectable by record id")
    if result["reported_but_absent"]:
        found.append("records reported written but absent")
    if result["unexpected"]:
        found.append(f"{result['unexpected']} unexpected records")
    if result["outcome"].startswith("success"):
        # A write that succeeds may miss only the records it dead-lettered, and dead-letters only missing ones.
        lost = (result["missing_rows"] | result["missing_for_kcl_rows"]) - result["dead_lettered"]
        if lost:
            found.append(f"{len(lost)} records missing and not dead-lettered")
        if result["dead_lettered"] - result["missing_rows"]:
            found.append("records dead-lettered that are in the stream")
    return found


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(results: List[Dict[str, Any]], count: int, started: str, host: str, spark_version: str,
           kpl_version: str, wall: float) -> str:
    lines = [
        "# Reliability: fault scenarios, measured",
        "",
        f"Generated by `scripts/reliability.sh` on {started} on {host}; Spark {spark_version}, "
        f"master `{MASTER}` (the executor kill: a standalone cluster of {CLUSTER_WORKERS} workers, one core "
        f"each), KPL {kpl_version}. Never edited by hand: re-run the script to update it "
        f"(whole run {wall:.0f} s).",
        "",
        f"Each scenario writes {count} records of 100 bytes in {PARTITIONS} Spark partitions (each row "
        f"taking {ROW_SLEEP_MS} ms to compute, so a write lasts seconds and faults meet it mid-way), with "
        "`recordId=prefix`, through the real KPL to the project's own fault-injecting Kinesis endpoint "
        "(`spark_kpl_testing.endpoint.KinesisEndpoint`, 2 shards, TLS on 127.0.0.1), then reads the stream "
        "back. *Distinct* counts distinct payloads; *duplicates* = total - distinct; *detectable* means every "
        "copy of a payload carries the same record id, so `spark_kpl.dedup` drops them all; *missing* = input "
        "records not in the stream; *missing for a KCL consumer* = input records a KCL consumer would not receive: "
        "it drops a whole KPL aggregate when any record in it hashes outside the range of the shard that stored it "
        "(after a split or merge); *failed attempts* = Spark task attempts that failed (then retried, up to 4 "
        "per task); *faults the endpoint injected*: its counters of record errors and failed calls. With "
        "`failOnError=false` the write keeps its undelivered records under `deadLetterPath`, and the outcome "
        "compares them with the missing ones. The streaming driver kill runs the query in a driver process of "
        "its own (local mode), killed the instant the sink has recorded a micro-batch as committed and Spark has "
        "not yet logged it (`spark_kpl_testing.streaming_driver`), then restarts the query here from its "
        "checkpoint.",
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
    broken = [f"{r['scenario']} ({'; '.join(r['violations'])})" for r in results if r["violations"]]
    lines += ["", "Records reported written but absent from the stream, or unexpected records: "
              + (", ".join(flagged) if flagged else "none") + ".", "",
              "Rows that break what their fault must lead to (the script checks each: the outcome expected of "
              "it, every duplicate detectable, and a write that reports success missing exactly the records it "
              "dead-lettered, no other): " + ("; ".join(broken) if broken else "none") + ".", "",
              SOAK_POINTER, ""]
    return "\n".join(lines)


#: The long-running counterpart of these scenarios, which has a generated report of its own.
SOAK_POINTER = ("Faults that come and go for 20 minutes under a streaming query held at Kinesis's quota, with "
                "memory per minute: [soak.md](soak.md), from `scripts/soak.sh`.")


def session(master: str, conf: Dict[str, str]):
    from pyspark.sql import SparkSession

    builder = spark_kpl.configure(SparkSession.builder.master(master).appName("spark-kpl-reliability"))
    for key, value in {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                       "spark.kpl.producerIdleTimeoutMs": "2000", **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_all(spark, endpoint: KinesisEndpoint, numbered: List[Tuple[int, Scenario]], count: int,
            results: Dict[int, Dict[str, Any]]) -> None:
    for number, scenario in numbered:
        result = run(spark, endpoint, scenario, number, count)
        result["violations"] = violations(scenario, result)
        print(f"{result['scenario']}: in {result['in']}, out {result['total']} "
              f"({result['distinct']} distinct), dup {result['duplicates']} "
              f"missing for KCL {result['missing_for_kcl']} (detectable {result['detectable']}), "
              f"missing {result['missing']}, failed attempts {result['failed_attempts']}, "
              f"hit [{result['hit']}], {result['outcome'][:300]} [{result['seconds']:.1f} s]"
              + (f" BROKEN: {'; '.join(result['violations'])}" if result["violations"] else ""), flush=True)
        results[number] = result


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--out", default=str(REPO / "docs" / "reliability.md"))
    parser.add_argument("--only", action="append", help="run only scenarios whose name contains this")
    args = parser.parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = summary()
    wall_start = time.monotonic()
    processes = ProcessFaults()
    chosen = [(number, scenario) for number, scenario in enumerate(scenarios(args.records, processes))
              if not args.only or any(o in scenario.name for o in args.only)]
    results: Dict[int, Dict[str, Any]] = {}
    version = ""
    with KinesisEndpoint() as endpoint:
        # Local mode first, then the cluster: one SparkContext per JVM, so each needs a session of its own.
        local = [(n, s) for n, s in chosen if not s.cluster]
        if local:
            processes.spark = session(MASTER, {})
            try:
                run_all(processes.spark, endpoint, local, args.records, results)
                version = processes.spark.version
            finally:
                processes.spark.stop()
        clustered = [(n, s) for n, s in chosen if s.cluster]
        if clustered:
            with StandaloneCluster(workers=CLUSTER_WORKERS) as processes.cluster:
                processes.spark = session(processes.cluster.master_url, processes.cluster.spark_conf())
                try:
                    run_all(processes.spark, endpoint, clustered, args.records, results)
                    version = processes.spark.version
                finally:
                    processes.spark.stop()
    shutil.rmtree(processes.native_dir, ignore_errors=True)
    ordered = [results[number] for number in sorted(results)]
    Path(args.out).write_text(render(ordered, args.records, started, host, version, bundled_kpl_version(jar_path()),
                                     time.monotonic() - wall_start))
    print(f"wrote {args.out}")
    broken = [r["scenario"] for r in ordered if r["violations"]]
    if broken:
        print(f"rows that break their expectation: {', '.join(broken)}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
