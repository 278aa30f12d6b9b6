"""A scenario's write, as a batch write or a streaming query (restarted, or run in a driver that gets
killed), and the one line of its error that the report shows."""

from __future__ import annotations

import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import spark_kpl
from spark_kpl import dedup
from spark_kpl_bench.reliability.scenario import (
    HOT_KEY,
    OVERSIZED_BYTES,
    PARTITIONS,
    ROW_SLEEP_MS,
    SLOW_STREAM,
    Scenario,
)
from spark_kpl_bench.reliability.streaming_driver import kill_between_sink_and_spark_commit, start_query
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.polling import poll_until


def rows(spark, count: int, oversized: bool = False, row_bytes: int = 100, hot_key_every: int = 0, first: int = 0,
         keyed: bool = True):
    """Rows ``first`` to ``first + count``, keyed ``key-<i mod 101>``, or HOT_KEY every ``hot_key_every``-th;
    without a partitionKey column when not ``keyed``."""
    from pyspark.sql import functions as F

    # Each row sleeps ROW_SLEEP_MS in the task (Thread.sleep by reflection; '' appended), so a write lasts
    # seconds and faults hit it mid-way, as they would a long job.
    pause = F.coalesce(F.expr(f"reflect('java.lang.Thread', 'sleep', cast({ROW_SLEEP_MS} + id % 1 as bigint))"),
                       F.lit(""))
    # An oversized row is its normal row padded on: its first 100 bytes still name it.
    length = f"IF(id % 100 = 99, {OVERSIZED_BYTES}, {row_bytes})" if oversized else str(row_bytes)
    key = F.format_string("key-%d", F.col("id") % 101)
    if hot_key_every:
        key = F.when(F.col("id") % hot_key_every == 0, F.lit(HOT_KEY)).otherwise(key)
    data = F.concat(F.expr(f"rpad(format_string('row-%d ', id), {length}, '.')"), pause).alias("data")
    return spark.range(first, first + count, numPartitions=PARTITIONS).select(
        data, *([key.alias("partitionKey")] if keyed else []))


def naming(rows, stream: str):
    """``rows`` with a streamName column naming ``stream``, for a write whose rows name their stream."""
    from pyspark.sql import functions as F

    return rows.withColumn("streamName", F.lit(stream))


def body(data: bytes) -> bytes:
    """The row a record was made of: without its record id and what the row's pause appended."""
    return dedup.strip(data)[:100]


#: How long the operator waits before restarting a failed query: not in a tight loop, which would use up
#: its restarts while a stream being created again does not exist yet.
RESTART_PAUSE_S = 2.0


def run_streaming(spark, rows, stream: str, options: Dict[str, str], run_ids: List[str],
                  max_restarts: int = 3) -> str:
    """Writes ``rows`` through a streaming query, one micro-batch per Spark partition, restarting it
    from its checkpoint after a failure, RESTART_PAUSE_S later, as an operator would. Each run's id (the
    job group of its Spark jobs) is added to ``run_ids``."""
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
                time.sleep(RESTART_PAUSE_S)
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
    if scenario.producers > 1:
        return write_through_producers(spark, scenario, stream, options, count, groups[0])
    if scenario.beside_a_slow_query:
        queries = scenario.beside_a_slow_query
        return run_beside_a_slow_query(spark, endpoint, queries, stream, options, count, groups), None
    data = rows(spark, count, scenario.oversized_rows, scenario.row_bytes, scenario.hot_key_every)
    if scenario.driver_killed:
        return run_with_driver_killed(spark, endpoint, data, stream, options, groups), None
    if scenario.streaming:
        return run_streaming(spark, data, stream, options, groups), None
    if scenario.named_by_rows:
        result = spark_kpl.write(naming(data, stream), None, target_stream="streamName", partition_key="partitionKey",
                                 recordId="prefix", **options)
    else:
        result = spark_kpl.write(data, stream, partition_key="partitionKey", recordId="prefix", **options)
    return f"success: {result.records_written} written, {result.records_failed} failed", result.records_written


def write_through_producers(spark, scenario: Scenario, stream: str, options: Dict[str, str], count: int,
                            group: str) -> Tuple[str, Optional[int]]:
    """``scenario.producers`` batch writes at once, of an equal share of the rows each, each with a queueLimit
    of its own and so a producer (and daemon) of its own, in the scenario's job group; the outcome is the
    first error, or their sums."""
    share = count // scenario.producers
    outcomes: List[Tuple[int, int]] = []
    errors: List[BaseException] = []

    def write_share(index: int) -> None:
        spark.sparkContext.setJobGroup(group, scenario.name)  # per thread: the failed attempts are counted by it
        data = rows(spark, share, row_bytes=scenario.row_bytes, hot_key_every=scenario.hot_key_every,
                    first=index * share, keyed=not scenario.keys_by_sink)
        try:  # the partitionKey column, where the rows have one
            result = spark_kpl.write(data, stream, recordId="prefix",
                                     **{**options, "queueLimit": str(100_000 - index)})
            outcomes.append((result.records_written, result.records_failed))
        except Exception as error:  # the first one is the outcome, as for a single write
            errors.append(error)

    threads = [threading.Thread(target=write_share, args=(i,)) for i in range(scenario.producers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    written, failed = (sum(column) for column in zip(*outcomes))
    return f"success: {written} written, {failed} failed", written


#: The calls a query's look at its stream makes, which SLOW_STREAM's scenario holds.
LOOK_CALLS = ("DescribeStreamSummary", "ListShards")


def run_beside_a_slow_query(spark, endpoint: KinesisEndpoint, queries: int, stream: str, options: Dict[str, str],
                            count: int, run_ids: List[str]) -> str:
    """``queries`` streaming queries, each writing its share of the rows into ``stream``, started once a
    query into SLOW_STREAM (whose look's calls the scenario's faults hold) made its first call; that one is
    stopped when they end. The outcome says how many micro-batches the slow one had committed by then.
    SLOW_STREAM stays: the stopped query's held calls end later, and must not meet a missing stream then."""
    if SLOW_STREAM not in endpoint.streams:
        endpoint.create_stream(SLOW_STREAM, shards=1)
    bounds = [count * n // queries for n in range(queries + 1)]
    with tempfile.TemporaryDirectory(prefix="spark-kpl-reliability-") as folder:
        def started(name: str, data, target: str):
            source = Path(folder, name)
            data.write.parquet(str(source))
            query = start_query(spark, source, Path(folder, f"{name}-checkpoint"), target,
                                {**options, "recordId": "prefix"})
            run_ids.append(str(query.runId))
            return query

        def look_calls() -> int:
            return sum(endpoint.calls.get(operation, 0) for operation in LOOK_CALLS)

        before = look_calls()
        slow = started("slow", rows(spark, 100, first=count), SLOW_STREAM)
        fast = []
        try:
            poll_until(lambda: look_calls() > before, 30)
            began = time.monotonic()
            fast = [started(f"fast{n}", rows(spark, bounds[n + 1] - bounds[n], first=bounds[n]), stream)
                    for n in range(queries)]
            for query in fast:
                query.awaitTermination()
            seconds = time.monotonic() - began
            committed = sum(1 for progress in slow.recentProgress if progress["numInputRows"])
        finally:
            for query in [*fast, slow]:
                query.stop()
    return (f"success: the {queries} queries wrote their rows in {seconds:.1f} s, while the query on the slow "
            f"stream had committed {committed} micro-batches")
