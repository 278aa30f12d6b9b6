"""A write faster than its stream waits, it never expires: executor JVMs on a standalone
cluster write into one shard that the endpoint holds at Kinesis's own limits, at the sink's defaults.

Each write is about 45 shard-seconds (45 MB), longer than RecordTtl, so these tests take a few minutes
together: they use a cluster of their own rather than the ``cluster`` fixture, are not marked
``uses_spark``, and so run on the Spark 4.1 line only (scripts/test.sh).
"""

from __future__ import annotations

import time

import pytest

import spark_kpl
from spark_kpl_testing.cluster import StandaloneCluster
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.endpoint import KINESIS_SHARD_BYTES_PER_SECOND, KinesisEndpoint

from conftest import _session

KEYS = 101
#: The shard's byte ceiling the writes must reach, as a share: what the issue asks.
GOODPUT_SHARE = 0.9


def padded_rows(spark, count: int, size: int, partitions: int):
    """``count`` rows of ``size`` bytes: "row-<i>-" padded with x, keys "key-<i mod 101>"."""
    from pyspark.sql import functions as F

    return spark.range(count, numPartitions=partitions).select(
        F.rpad(F.format_string("row-%d-", "id"), size, "x").alias("data"),
        F.format_string("key-%d", F.col("id") % KEYS).alias("partitionKey"),
    )


def padded_expected(count: int, size: int):
    return {f"row-{i}-".ljust(size, "x").encode(): f"key-{i % KEYS}" for i in range(count)}


@pytest.mark.parametrize("executors, count, size", [
    (1, 45_000, 1_000),
    (4, 450_000, 100),
], ids=["1-executor-1KB", "4-executors-100B"])
def test_a_write_held_at_one_shards_quota_waits_and_never_expires(
        two_core_workers: StandaloneCluster, limits_endpoint: KinesisEndpoint, executors: int, count: int, size: int):
    stream = f"quota-{executors}-{size}"
    limits_endpoint.create_stream(stream, shards=1)
    spark = _session(two_core_workers.master_url, {
        **two_core_workers.spark_conf(),
        "spark.executor.cores": "1",
        "spark.executor.memory": "900m",
        "spark.cores.max": str(executors),
        "spark.task.maxFailures": "1",  # a failed task attempt fails the write, rather than hiding in a retry
    })
    try:
        rows = padded_rows(spark, count, size, partitions=executors).persist()  # every row in flight at once
        rows.count()
        assert spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 == executors  # the driver aside
        limits_endpoint.reset_counters()
        result = spark_kpl.write(rows, stream, partition_key="partitionKey", **limits_endpoint.kpl_options())
        finished = time.time()
        stats = limits_endpoint.stats()
        first_put = limits_endpoint.first_put_at
    finally:
        spark.stop()

    assert (result.records_written, result.records_failed) == (count, 0), result
    report = compare(padded_expected(count, size), ((r.data, r.partition_key) for r in limits_endpoint.records(stream)))
    assert report.exactly_once, report.summary()
    assert first_put is not None
    goodput = stats["bytes_received"] / (finished - first_put)
    assert stats["record_errors"].get("ProvisionedThroughputExceededException", 0) > 0, "the shard never throttled"
    assert goodput >= GOODPUT_SHARE * KINESIS_SHARD_BYTES_PER_SECOND, (
        f"{goodput / 2**20:.3f} MiB/s into the shard over {finished - first_put:.1f} s; {stats}; {result}")
    print(f"\n{executors} executor(s), {count} x {size} B: {goodput / 2**20:.3f} MiB/s into the shard over "
          f"{finished - first_put:.1f} s, peak outstanding {result.peak_outstanding_bytes} B, blocked "
          f"{result.blocked_ms} ms, {stats['records_rejected']} throttled")
    limits_endpoint.delete_stream(stream)
