"""Many producers on one shard with keys the sink chooses: 32 writes at once from one application, each with a
producer (and daemon) of its own, into a shard the endpoint holds at Kinesis's own limits. Their budgets must add
up to what the shard takes, whether the keys are random, one constant key, or the rows go unaggregated: nothing
expires, every row is stored once, and the writes end within :data:`FLOOR_SLACK` of the shard's floor (what it
stored, at its ceilings).

The writes are tens of shard-seconds, longer than RecordTtl, so this module runs its own session and endpoint, on
the Spark 4.1 line only (scripts/test.sh), as test_hot_keys.py does.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any, Iterator, List

import pytest

import spark_kpl
from spark_kpl_testing.endpoint import (
    KINESIS_SHARD_BYTES_PER_SECOND,
    KINESIS_SHARD_RECORDS_PER_SECOND,
    KinesisEndpoint,
)

from conftest import _session

#: How much longer than the hot shard's floor the writes may take.
FLOOR_SLACK = 1.25
#: Writes at once, one task and one producer each.
PRODUCERS = 32
#: All the writes' rows together: about 40 shard-seconds whichever ceiling rules (bytes or records).
ALL_ROWS = 40_000


@pytest.fixture(scope="module")
def local_spark(limits_endpoint: KinesisEndpoint) -> Iterator[Any]:
    """Local mode with a task slot per write, warmed up by a small write so that the first test does not pay for the
    JVM's first compilation."""
    spark = _session(f"local[{PRODUCERS}]", {})
    try:
        limits_endpoint.create_stream("warm-up", shards=1)
        spark_kpl.write(own_rows(spark, 0, 2_000, 100), "warm-up", **limits_endpoint.kpl_options())
        limits_endpoint.delete_stream("warm-up")
        yield spark
    finally:
        spark.stop()


def own_rows(spark, producer: int, count: int, row_bytes: int):
    """``count`` rows of ``row_bytes`` bytes, each naming its producer and its number, in one partition."""
    from pyspark.sql import functions as F

    return spark.range(count, numPartitions=1).select(
        F.rpad(F.format_string(f"p{producer}-row-%d-", "id"), row_bytes, "x").alias("data"))


def expected_data(count: int, row_bytes: int) -> List[bytes]:
    return [f"p{p}-row-{i}-".ljust(row_bytes, "x").encode() for p in range(PRODUCERS) for i in range(count)]


def write_at_once(spark, endpoint: KinesisEndpoint, stream: str, row_bytes: int, **options: str) -> float:
    """:data:`PRODUCERS` writes at once, each of its own rows with a producer of its own; returns their seconds from the
    first record the endpoint received to the last write's end (starting 32 jobs and daemons on two loaded cores is
    not what the budgets decide), once each ended without an error and without a failed record."""
    rows_each = ALL_ROWS // PRODUCERS
    results: List[Any] = [None] * PRODUCERS
    errors: List[BaseException] = []

    def write(index: int) -> None:
        try:
            # A queueLimit of its own: a producer of its own, at the default queue limits within 1 %.
            results[index] = spark_kpl.write(own_rows(spark, index, rows_each, row_bytes), stream,
                                             queueLimit=str(100_000 - index), **options, **endpoint.kpl_options())
        except BaseException as error:  # noqa: B036 - reported below, with the others' results
            errors.append(error)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(PRODUCERS)]
    endpoint.reset_counters()
    started = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ended = time.time()
    first_put_at = endpoint.first_put_at or started
    print(f"\nthe first record {first_put_at - started:.1f} s after the writes started, the last write's end "
          f"{ended - started:.1f} s after")
    assert not errors, f"{len(errors)} of {PRODUCERS} writes failed, the first: {errors[0]}"
    assert all(r.records_failed == 0 for r in results), results
    return ended - first_put_at


def assert_stored_once_within_the_floor(endpoint: KinesisEndpoint, stream: str, seconds: float, row_bytes: int) -> None:
    """Every row stored exactly once (counting every copy), all in one shard, and the writes' time within
    :data:`FLOOR_SLACK` of that shard's floor: what it stored at its byte and record ceilings, the slower of the two."""
    stored = endpoint.records(stream)
    copies = Counter(record.data for record in stored)
    expected = expected_data(ALL_ROWS // PRODUCERS, row_bytes)
    missing = [data for data in expected if data not in copies]
    repeated = [data for data, count in copies.items() if count > 1]
    assert (len(missing), len(repeated), len(copies)) == (0, 0, len(expected)), (missing[:3], repeated[:3])
    shards = {record.shard_id for record in stored}
    assert len(shards) == 1, shards
    floor = max(sum(len(r.data) + len(r.partition_key) for r in stored) / KINESIS_SHARD_BYTES_PER_SECOND,
                len({r.sequence_number for r in stored}) / KINESIS_SHARD_RECORDS_PER_SECOND)  # Kinesis records
    stats = endpoint.stats()
    print(f"{PRODUCERS} producers into one shard: {seconds:.1f} s from the first record against its floor of "
          f"{floor:.1f} s ({seconds / floor:.2f} x); {stats['records_rejected']} throttled")
    assert seconds <= FLOOR_SLACK * floor, f"{seconds:.1f} s, floor {floor:.1f} s; {stats}"


def test_thirty_two_producers_with_random_keys_on_one_shard_neither_expire_nor_slow_past_its_floor(
        local_spark: Any, limits_endpoint: KinesisEndpoint):
    """The default partitioner (random keys), aggregated by the sink."""
    limits_endpoint.create_stream("random-keys", shards=1)
    seconds = write_at_once(local_spark, limits_endpoint, "random-keys", 1_000)
    assert_stored_once_within_the_floor(limits_endpoint, "random-keys", seconds, 1_000)
    limits_endpoint.delete_stream("random-keys")


def test_thirty_two_producers_with_one_default_partition_neither_expire_nor_slow_past_its_shards_floor(
        local_spark: Any, limits_endpoint: KinesisEndpoint):
    """One constant key for every row of every write: all of them go to one shard of four."""
    limits_endpoint.create_stream("one-key", shards=4)
    seconds = write_at_once(local_spark, limits_endpoint, "one-key", 1_000, defaultPartition="the-one-key")
    assert_stored_once_within_the_floor(limits_endpoint, "one-key", seconds, 1_000)
    limits_endpoint.delete_stream("one-key")


def test_thirty_two_producers_of_unaggregated_rows_on_one_shard_neither_expire_nor_slow_past_its_floor(
        local_spark: Any, limits_endpoint: KinesisEndpoint):
    """Each row a Kinesis record of its own (the KPL aggregating nothing), small enough that the shard's record
    ceiling rules: 1,000 records a second."""
    limits_endpoint.create_stream("unaggregated", shards=1)
    seconds = write_at_once(local_spark, limits_endpoint, "unaggregated", 200, aggregation="kpl",
                            AggregationEnabled="false")
    assert_stored_once_within_the_floor(limits_endpoint, "unaggregated", seconds, 200)
    limits_endpoint.delete_stream("unaggregated")
