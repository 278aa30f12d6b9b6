"""End to end on a real standalone cluster: two executor JVMs, each with its own KPL daemon."""

from __future__ import annotations

from collections import Counter

from pyspark.sql import functions as F

import spark_kpl
from spark_kpl.testing.delivery import compare, warm_up


def test_cluster_write_delivers_every_record_once_with_its_key(cluster_spark, kinesis, stream):
    count = 20_000
    rows = cluster_spark.range(count, numPartitions=4).select(
        F.format_string("row-%d", "id").alias("payload"),
        F.format_string("key-%d", F.col("id") % 101).alias("key"),
    )
    expected = warm_up(cluster_spark, stream, **kinesis.kpl_options())
    result = spark_kpl.write(rows, stream, data="payload", partition_key="key", **kinesis.kpl_options())
    assert (result.records_written, result.records_failed, result.tasks) == (count, 0, 4)
    records = kinesis.read_records(stream)
    expected.update({f"row-{i}".encode(): f"key-{i % 101}" for i in range(count)})
    report = compare(expected, ((r.data, r.partition_key) for r in records))
    assert report.exactly_once, report.summary()


def test_executors_starting_together_place_the_daemon_safely_every_time(cluster_spark, cluster, kinesis,
                                                                       stream, tmp_path):
    """Seed 000: executors of one host start their producers at the same moment from an empty
    folder. Each round uses a fresh folder, so every round races the placement again."""
    rows = cluster_spark.range(400, numPartitions=4).select(
        F.format_string("row-%d", "id").alias("data"), F.lit("k").alias("partitionKey"))
    for round_number in range(3):
        native_dir = tmp_path / f"round-{round_number}"
        result = spark_kpl.write(rows, stream, nativeDir=str(native_dir), producerIdleTimeoutMs=500,
                                 **kinesis.kpl_options())
        assert result.records_written == 400
        placed = list(native_dir.glob("*/kinesis_producer"))
        assert len(placed) == 1, placed
    assert len(cluster.executor_pids()) == 2
    records = kinesis.read_records(stream)
    assert Counter(r.data for r in records) == Counter({f"row-{i}".encode(): 3 for i in range(400)})
