"""The record size limit and null data, enforced before the KPL sees a record."""

from __future__ import annotations

import base64

import pytest
from pyspark.sql import functions as F

import spark_kpl


def sized_rows(spark, sizes):
    """One row per size: data of that many bytes ('a'...), key 'k<i>' (2 bytes)."""
    rows = [(f"k{i}", "a" * size) for i, size in enumerate(sizes)]
    return spark.createDataFrame(rows, "partitionKey string, data string").coalesce(1)


def test_a_record_over_max_record_bytes_fails_naming_row_and_limit(spark, kinesis, stream):
    rows = sized_rows(spark, [10, (1 << 20) - 1])
    with pytest.raises(spark_kpl.RecordsNotDelivered,
                       match=r"Row 2 of Spark partition 0, column 'data': the record has 1048577 bytes "
                             r"\(data 1048575 plus partition key\), over maxRecordBytes=1048576"):
        spark_kpl.write(rows, stream, partition_key="partitionKey", **kinesis.kpl_options())


def test_records_over_the_limit_are_dead_lettered_the_rest_arrive(spark, kinesis, stream, tmp_path):
    dead = str(tmp_path / "dead")
    result = spark_kpl.write(sized_rows(spark, [50, 200, 98, 99]), stream, partition_key="partitionKey",
                             maxRecordBytes=100, failOnError=False, deadLetterPath=dead, **kinesis.kpl_options())
    assert (result.records_written, result.records_failed) == (2, 2)
    assert sorted(len(r.data) for r in kinesis.read_records(stream)) == [50, 98]
    failed = sorted(spark.read.json(dead).collect(), key=lambda r: r.row)
    assert [(r.row, r.errorCode, len(base64.b64decode(r.data))) for r in failed] == [
        (2, "RecordTooLarge", 200), (4, "RecordTooLarge", 99)]


def test_max_record_bytes_is_capped_at_the_kpl_limit(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"'maxRecordBytes' \(spark.kpl.maxRecordBytes\): expected 1 to 10485760"):
        spark_kpl.write(sized_rows(spark, [1]), stream, maxRecordBytes=20_000_000, **kinesis.kpl_options())


def test_the_kpl_size_property_is_refused_in_favour_of_max_record_bytes(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused, match="Set the option 'maxRecordBytes' instead"):
        spark_kpl.write(sized_rows(spark, [1]), stream, MaxUserRecordSize=2000, **kinesis.kpl_options())


def null_data_rows(spark):
    return spark.range(6, numPartitions=1).select(
        F.when(F.col("id") % 3 == 0, F.lit(None)).otherwise(F.format_string("row-%d", "id")).alias("data"))


def test_null_data_fails_by_default_naming_row_and_column(spark, kinesis, stream):
    with pytest.raises(spark_kpl.RecordsNotDelivered, match=r"Row 1 of Spark partition 0, column 'data': data is null"):
        spark_kpl.write(null_data_rows(spark), stream, **kinesis.kpl_options())


def test_null_data_skip_counts_skipped_rows(spark, kinesis, stream):
    result = spark_kpl.write(null_data_rows(spark), stream, nullData="skip", **kinesis.kpl_options())
    assert (result.records_written, result.records_skipped, result.records_failed) == (4, 2, 0)
    assert sorted(r.data for r in kinesis.read_records(stream)) == [b"row-1", b"row-2", b"row-4", b"row-5"]


def test_a_bad_null_data_value_names_the_choices(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"'nullData' \(spark.kpl.nullData\): expected one of fail, skip, got 'drop'"):
        spark_kpl.write(null_data_rows(spark), stream, nullData="drop", **kinesis.kpl_options())
