"""A hot shard waits, it never expires, and it does not hold the cold shards back: writes at the sink's
defaults into streams the endpoint holds at Kinesis's own per-shard limits, where the rows' keys crowd
one shard.

Each write is timed against two floors measured in the same run: the same rows with every key spread
(what the machine and the stream allow), and the hot shard's bytes at its ceiling. The write may take at
most :data:`FLOOR_SLACK` times the longer of the two. The writes are tens of shard-seconds, longer than
RecordTtl, so this module runs its own session and endpoint, on the Spark 4.1 line only (scripts/test.sh).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.endpoint import KINESIS_SHARD_BYTES_PER_SECOND, KinesisEndpoint

from conftest import _session

#: How much longer than its floor a write may take.
FLOOR_SLACK = 1.25
ROW_BYTES = 1_000
WIDE_SHARDS = 32
HOT_KEY = "hot-key"


#: Producers writing into one shard at once in the test of many producers: one write, one task each.
PRODUCERS_PER_SHARD = 32


@pytest.fixture(scope="module")
def local_spark(limits_endpoint: KinesisEndpoint) -> Iterator[Any]:
    """Local mode: one executor JVM (a failed task attempt fails the write), warmed up by a write of its own so
    that no write below pays for the JVM's first compilation, its floor no more than the write timed against it."""
    spark = _session(f"local[{PRODUCERS_PER_SHARD}]", {})
    try:
        limits_endpoint.create_stream("warm-up", shards=WIDE_SHARDS)
        spark_kpl.write(keyed_rows(spark, 30_000, 0), "warm-up", partition_key="partitionKey",
                        **limits_endpoint.kpl_options())
        limits_endpoint.delete_stream("warm-up")
        yield spark
    finally:
        spark.stop()


def keyed_rows(spark, count: int, hot_every: int, partitions: int = 2):
    """``count`` rows of :data:`ROW_BYTES`; every ``hot_every``-th has :data:`HOT_KEY`, the others a key of their own
    (``hot_every`` 0: none is hot)."""
    from pyspark.sql import functions as F

    own_key = F.format_string("key-%d", "id")
    key = own_key if hot_every == 0 else F.when(F.col("id") % hot_every == 0, F.lit(HOT_KEY)).otherwise(own_key)
    return spark.range(count, numPartitions=partitions).select(
        F.rpad(F.format_string("row-%d-", "id"), ROW_BYTES, "x").alias("data"), key.alias("partitionKey"))


def keyed_expected(count: int, hot_every: int) -> Dict[bytes, str]:
    return {f"row-{i}-".ljust(ROW_BYTES, "x").encode():
            HOT_KEY if hot_every and i % hot_every == 0 else f"key-{i}" for i in range(count)}


def timed_write(endpoint: KinesisEndpoint, rows, stream: str, **options: str) -> Tuple[float, Any]:
    started = time.monotonic()
    result = spark_kpl.write(rows, stream, partition_key="partitionKey", **options, **endpoint.kpl_options())
    return time.monotonic() - started, result


def assert_delivered_once(endpoint: KinesisEndpoint, stream: str, expected: Dict[bytes, str], result: Any) -> None:
    assert (result.records_written, result.records_failed) == (len(expected), 0), result
    report = compare(expected, ((r.data, r.partition_key) for r in endpoint.records(stream)))
    assert report.exactly_once, report.summary()  # every copy counts, byte-identical re-sends too


def busiest_shard_floor_seconds(endpoint: KinesisEndpoint, stream: str) -> float:
    """The bytes (data and key, as Kinesis counts them) the busiest shard stored, at the shard's byte ceiling:
    the hot key's rows and the spread rows whose keys hash into the same shard."""
    per_shard: Counter = Counter()
    for record in endpoint.records(stream):
        per_shard[record.shard_id] += len(record.data) + len(record.partition_key)
    return max(per_shard.values()) / KINESIS_SHARD_BYTES_PER_SECOND


@pytest.mark.parametrize("hot_every, count, aggregation", [
    (2, 60_000, "executor"),    # the hot shard's floor rules: 31 MB into one shard
    (10, 300_000, "executor"),  # the hot shard's floor rules, 38 MB: the shape that expired after 41 s
    (100, 300_000, "executor"),  # the spread floor rules: the hot shard takes 4 % of the rows
    (10, 300_000, "kpl"),  # the KPL aggregates: the tasks route each row to its shard's budget
], ids=["1-in-2", "1-in-10", "1-in-100", "1-in-10-kpl"])
def test_a_hot_key_on_a_wide_stream_at_its_limits_neither_expires_nor_slows_the_write_past_its_floor(
        local_spark: Any, limits_endpoint: KinesisEndpoint, hot_every: int, count: int, aggregation: str):
    spread_stream, hot_stream = f"spread-{hot_every}-{aggregation}", f"hot-{hot_every}-{aggregation}"
    limits_endpoint.create_stream(spread_stream, shards=WIDE_SHARDS)
    limits_endpoint.create_stream(hot_stream, shards=WIDE_SHARDS)
    spread_rows = keyed_rows(local_spark, count, 0).persist()
    hot_rows = keyed_rows(local_spark, count, hot_every).persist()
    spread_rows.count(), hot_rows.count()
    try:
        spread_seconds, spread_result = timed_write(limits_endpoint, spread_rows, spread_stream,
                                                    aggregation=aggregation)
        limits_endpoint.reset_counters()
        hot_started = time.time()
        hot_seconds, hot_result = timed_write(limits_endpoint, hot_rows, hot_stream, aggregation=aggregation)
        stats = limits_endpoint.stats()
        first_put_after = (limits_endpoint.first_put_at or hot_started) - hot_started
    finally:
        spread_rows.unpersist(), hot_rows.unpersist()

    assert_delivered_once(limits_endpoint, spread_stream, keyed_expected(count, 0), spread_result)
    assert_delivered_once(limits_endpoint, hot_stream, keyed_expected(count, hot_every), hot_result)
    hot_floor = busiest_shard_floor_seconds(limits_endpoint, hot_stream)
    floor = max(spread_seconds, hot_floor)
    print(f"\naggregation={aggregation}, 1 in {hot_every} hot, {count} x {ROW_BYTES} B into {WIDE_SHARDS} shards: "
          f"{hot_seconds:.1f} s against "
          f"{spread_seconds:.1f} s spread and {hot_floor:.1f} s for the hot shard "
          f"({hot_seconds / floor:.2f} x the floor), the first record after {first_put_after:.1f} s; blocked "
          f"{hot_result.blocked_ms} ms, "
          f"{stats['records_rejected']} throttled")
    assert hot_seconds <= FLOOR_SLACK * floor, (
        f"{hot_seconds:.1f} s, floor {floor:.1f} s (spread {spread_seconds:.1f} s); {hot_result}; {stats}")
    limits_endpoint.delete_stream(spread_stream)
    limits_endpoint.delete_stream(hot_stream)


def test_thirty_two_producers_on_one_shard_at_its_limits_neither_expire_nor_slow_the_writes_past_the_shards_floor(
        local_spark: Any, limits_endpoint: KinesisEndpoint):
    """32 writes at once from one application, each with a producer (and daemon) of its own, into one shard."""
    stream = "narrow"
    limits_endpoint.create_stream(stream, shards=1)
    rows_each = 40_000 // PRODUCERS_PER_SHARD
    results: List[Any] = [None] * PRODUCERS_PER_SHARD
    errors: List[BaseException] = []

    def write(index: int) -> None:
        try:
            own_rows = keyed_rows(local_spark, rows_each, 0, partitions=1)
            rows = own_rows.selectExpr(f"concat('p{index}-', data) AS data", "partitionKey")
            # A queueLimit of its own: a producer of its own, at the default queue limits within 1 %.
            results[index] = spark_kpl.write(rows, stream, partition_key="partitionKey",
                                             queueLimit=str(100_000 - index), **limits_endpoint.kpl_options())
        except BaseException as error:  # noqa: B036 - reported below, with the others' results
            errors.append(error)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(PRODUCERS_PER_SHARD)]
    limits_endpoint.reset_counters()
    started = time.monotonic()
    wall_started = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    first_put_after = (limits_endpoint.first_put_at or wall_started) - wall_started
    stats = limits_endpoint.stats()

    assert not errors, errors
    expected = {f"p{i}-".encode() + data: key for i in range(PRODUCERS_PER_SHARD)
                for data, key in keyed_expected(rows_each, 0).items()}
    report = compare(expected, ((r.data, r.partition_key) for r in limits_endpoint.records(stream)))
    assert report.exactly_once, report.summary()
    assert all(r.records_failed == 0 for r in results), results
    floor = sum(len(data) + len(key) for data, key in expected.items()) / KINESIS_SHARD_BYTES_PER_SECOND
    print(f"\n{PRODUCERS_PER_SHARD} producers into one shard: {seconds:.1f} s against the shard's floor of "
          f"{floor:.1f} s ({seconds / floor:.2f} x); first record after {first_put_after:.1f} s, "
          f"{stats['records_rejected']} throttled, {stats['bytes_received'] / 2**20:.1f} MiB received")
    assert seconds <= FLOOR_SLACK * floor, f"{seconds:.1f} s, floor {floor:.1f} s; {results}"
    limits_endpoint.delete_stream(stream)
