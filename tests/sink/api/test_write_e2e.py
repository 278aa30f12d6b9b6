"""End to end: PySpark -> the kpl sink -> the real KPL daemon -> the embedded Kinesis, read back."""

from __future__ import annotations

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows


def assert_exactly_once(kinesis, stream, expected):
    records = kinesis.read_records(stream)
    report = compare(expected, ((r.data, r.partition_key) for r in records))
    assert report.exactly_once, report.summary()


def test_python_api_delivers_every_record_once_with_its_key(spark, kinesis, stream):
    result = spark_kpl.write(numbered_rows(spark, 5000), stream, partition_key="partitionKey",
                             **kinesis.kpl_options())
    assert (result.records_written, result.records_failed, result.tasks) == (5000, 0, 4)
    assert result.bytes_written == sum(len(d) + len(k) for d, k in numbered_expected(5000).items())
    assert_exactly_once(kinesis, stream, numbered_expected(5000))


def test_format_kpl_with_binary_data_and_explicit_hash_keys(spark, kinesis, stream):
    lowest_hash_key, highest_hash_key = "0", str(2**128 - 1)
    rows = spark.range(400, numPartitions=2).select(
        F.encode(F.format_string("row-%d", "id"), "UTF-8").alias("data"),
        F.format_string("key-%d", F.col("id") % 101).alias("partitionKey"),
        F.when(F.col("id") % 2 == 0, F.lit(lowest_hash_key)).otherwise(F.lit(highest_hash_key))
        .alias("explicitHashKey"),
    )
    rows.write.format("kpl").option("streamName", stream).options(**kinesis.kpl_options()) \
        .mode("append").save()
    records = kinesis.read_records(stream)
    assert_exactly_once(kinesis, stream, {f"row-{i}".encode(): f"key-{i % 101}" for i in range(400)})
    # An explicit hash key routes the record to the shard owning that end of the hash range.
    shard_of = {r.data: r.shard_id for r in records}
    assert shard_of[b"row-0"] != shard_of[b"row-1"]
    assert len({shard_of[f"row-{i}".encode()] for i in range(0, 400, 2)}) == 1


def test_per_row_target_stream_overrides_the_default(spark, kinesis, stream):
    other = stream + "-other"
    kinesis.create_stream(other, shards=1)
    try:
        rows = numbered_rows(spark, 1000, partitions=2).withColumn(
            "target", F.when(F.col("partitionKey").endswith("7"), F.lit(other)))
        result = spark_kpl.write(rows, stream, partition_key="partitionKey",
                                 target_stream="target", **kinesis.kpl_options())
        assert result.records_written == 1000
        routed = {d: k for d, k in numbered_expected(1000).items() if k.endswith("7")}
        default = {d: k for d, k in numbered_expected(1000).items() if not k.endswith("7")}
        assert_exactly_once(kinesis, other, routed)
        assert_exactly_once(kinesis, stream, default)
    finally:
        kinesis.delete_stream(other)


def test_rows_without_partition_key_are_spread_over_shards(spark, kinesis, stream):
    # Random keys are drawn per aggregate (one per task here), so enough tasks that all landing in one
    # of the 2 shards is out of the question (2**-39).
    rows = spark.range(2000, numPartitions=40).select(F.format_string("row-%d", "id").alias("data"))
    spark_kpl.write(rows, stream, **kinesis.kpl_options())
    records = kinesis.read_records(stream)
    assert sorted(r.data for r in records) == sorted(f"row-{i}".encode() for i in range(2000))
    assert len({r.shard_id for r in records}) == 2


def test_config_keys_configure_the_producer_and_options_win(spark, kinesis, stream):
    options = kinesis.kpl_options()
    for name, value in options.items():
        spark.conf.set(f"spark.kpl.{name}", value)
    spark.conf.set("spark.kpl.KinesisPort", "1")  # wrong on purpose: the option must win
    try:
        result = spark_kpl.write(numbered_rows(spark, 300, 2), stream, partition_key="partitionKey",
                                 kinesisport=options["KinesisPort"])
    finally:
        for name in options:
            spark.conf.unset(f"spark.kpl.{name}")
    assert result.records_written == 300
    assert_exactly_once(kinesis, stream, numbered_expected(300))


def test_save_with_a_path_writes_to_the_stream_it_names(spark, kinesis, stream):
    """save("clicks") works as .option("streamName", "clicks").save(), as delta takes a path."""
    numbered_rows(spark, 300, 2).write.format("kpl").options(**kinesis.kpl_options()).mode("append").save(stream)
    assert_exactly_once(kinesis, stream, numbered_expected(300))


def test_a_path_and_another_stream_name_are_refused_naming_both(spark, kinesis, stream):
    with pytest.raises(IllegalArgumentException, match=f"two streams: '{stream}' as the path .* and 'views' as "
                       "the option 'streamName'"):
        numbered_rows(spark, 10, 1).write.format("kpl").option("streamName", "views") \
            .options(**kinesis.kpl_options()).mode("append").save(stream)
    assert kinesis.read_records(stream) == []


def test_unknown_option_is_an_error_naming_it(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused, match="option 'RecordMaxBuferedTime'"):
        spark_kpl.write(numbered_rows(spark, 10, 1), stream, RecordMaxBuferedTime=100, **kinesis.kpl_options())


def test_bad_kpl_value_is_an_error_naming_the_property(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused, match="KPL property 'RateLimit'"):
        spark_kpl.write(numbered_rows(spark, 10, 1), stream, **{**kinesis.kpl_options(), "RateLimit": "fast"})


def test_a_row_with_an_invalid_partition_key_fails_the_task_naming_row_and_column(spark, kinesis, stream):
    rows = spark.range(3, numPartitions=1).select(
        F.format_string("row-%d", "id").alias("data"),
        F.when(F.col("id") == 2, F.lit("")).otherwise(F.lit("k")).alias("partitionKey"))
    with pytest.raises(Exception, match="Row 3 of Spark partition 0, column 'partitionKey'"):
        rows.write.format("kpl").option("streamName", stream).options(**kinesis.kpl_options()) \
            .mode("append").save()


def test_unknown_column_is_an_error_naming_it(spark, kinesis, stream):
    rows = spark.range(1).select(F.lit("x").alias("data"), F.lit("y").alias("partition_key"))
    with pytest.raises(IllegalArgumentException, match="column 'partition_key'"):
        rows.write.format("kpl").option("streamName", stream).options(**kinesis.kpl_options()) \
            .mode("append").save()
