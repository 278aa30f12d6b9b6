"""The faults a scenario brings on mid-write, beyond the endpoint's own: processes killed, jobs
cancelled, streams deleted, reshaped or created again, a dead-letter folder made unwritable."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import spark_kpl
from spark_kpl_bench.reliability.scenario import PARTITIONS
from spark_kpl_bench.reliability.writes import naming
from spark_kpl_testing.cluster import StandaloneCluster
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.polling import poll_until
from spark_kpl_testing.processes import daemons_placed_in, driver_jvm_pid
from spark_kpl_testing.records import Record

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


class AttemptInterruption:
    """Once the write's tasks run and one of their ListShards has reached the endpoint (which the scenario
    holds), kills one running task attempt by interrupting its thread, as Spark kills a speculative attempt
    whose task's other attempt won; Spark runs the task again. The attempt is either the one making the
    listing that the other task waits for, or the one waiting."""

    def __init__(self, processes: ProcessFaults) -> None:
        self.processes = processes
        self.killed: Optional[int] = None

    def __call__(self, endpoint: KinesisEndpoint) -> None:
        context = self.processes.spark.sparkContext._jsc.sc()
        listings = endpoint.calls.get("ListShards", 0)
        running = poll_until(lambda: running_attempts(context), 60)
        if running and poll_until(lambda: endpoint.calls.get("ListShards", 0) > listings, 30):
            time.sleep(0.2)  # the listing is held at the endpoint, and shared
            context.killTaskAttempt(running[0], True, "another attempt of the task succeeded")
            self.killed = running[0]

    def summary(self) -> str:
        return (f"task attempt {self.killed} interrupted during the listing" if self.killed is not None
                else "NO attempt interrupted: no listing met a running task")


def running_attempts(context: Any) -> List[int]:
    """The task ids of the attempts running now, from Spark's status store (a Scala Seq through Py4J)."""
    store = context.statusStore()
    stages = store.activeStages()
    found = []
    for s in range(stages.size()):
        stage = stages.apply(s)
        tasks = store.taskList(stage.stageId(), stage.attemptId(), 1000)
        found += [tasks.apply(t).taskId() for t in range(tasks.size()) if tasks.apply(t).status() == "RUNNING"]
    return found


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


def rows_write_then_create_again(spark, endpoint: KinesisEndpoint, stream: str, options: Dict[str, str]) -> None:
    """As :func:`write_then_create_again`, the earlier write's rows naming the stream."""
    earlier_write(spark, stream, options, named_by_rows=True)
    shards = endpoint.streams[stream]
    endpoint.delete_stream(stream)
    endpoint.create_stream(stream, shards=2 * shards)


def write_then_switch_to_auto(spark, endpoint: KinesisEndpoint, stream: str, options: Dict[str, str]) -> None:
    """One write to the (on-demand) stream, then its record distribution strategy switched to AUTO."""
    earlier_write(spark, stream, options)
    endpoint.set_record_distribution(stream, "AUTO")


def earlier_write(spark, stream: str, options: Dict[str, str], named_by_rows: bool = False) -> None:
    from pyspark.sql import functions as F

    earlier = spark.range(1000, numPartitions=PARTITIONS).select(
        F.concat(F.lit(EARLIER_WRITE.decode()), F.col("id").cast("string")).alias("data"),
        F.format_string("key-%d", F.col("id") % 101).alias("partitionKey"))
    if named_by_rows:
        spark_kpl.write(naming(earlier, stream), None, target_stream="streamName", partition_key="partitionKey",
                        **options)
    else:
        spark_kpl.write(earlier, stream, partition_key="partitionKey", **options)


class DeadLettersTurnedIntoFile:
    """A deadLetterPath that stops being writable mid-write: its folder is replaced by a file."""

    def __init__(self) -> None:
        self.path = Path(tempfile.gettempdir()) / f"spark-kpl-reliability-dead-letters-{os.getpid()}"

    def __call__(self, _: KinesisEndpoint) -> None:
        shutil.rmtree(self.path)
        self.path.write_text("not a folder\n")


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

