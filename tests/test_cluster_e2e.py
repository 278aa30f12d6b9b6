"""End to end on a real standalone cluster: two executor JVMs, each with its own KPL daemon."""

from __future__ import annotations

from pyspark.sql import functions as F

import spark_kpl
from spark_kpl.testing.delivery import compare


def test_cluster_write_delivers_every_record_once_with_its_key(cluster_spark, kinesis, stream):
    count = 20_000
    rows = cluster_spark.range(count, numPartitions=4).select(
        F.format_string("row-%d", "id").alias("payload"),
        F.format_string("key-%d", F.col("id") % 101).alias("key"),
    )
    result = spark_kpl.write(rows, stream, data="payload", partition_key="key", **kinesis.kpl_options())
    assert (result.records_written, result.records_failed, result.tasks) == (count, 0, 4)
    records = kinesis.read_records(stream)
    expected = {f"row-{i}".encode(): f"key-{i % 101}" for i in range(count)}
    report = compare(expected, ((r.data, r.partition_key) for r in records))
    assert report.exactly_once, report.summary()
