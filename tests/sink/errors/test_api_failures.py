"""failOnError and deadLetterPath, end to end: records Kinesis finally fails (their stream does not
exist; a short RecordTtl makes the KPL give up within a second) and rows that cannot become records."""

from __future__ import annotations

import base64
import os
import signal

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.delivery import numbered_rows, write_in_background
from spark_kpl_testing.endpoint import Faults
from spark_kpl_testing.polling import wait_for
from spark_kpl_testing.processes import daemons_placed_in, driver_jvm_pid

from missing_stream import FAST_EXPIRY, MISSING_STREAM, rows_partly_to_a_missing_stream


def test_a_record_kinesis_fails_fails_the_task_naming_stream_key_and_error(spark, kinesis, stream):
    rows = rows_partly_to_a_missing_stream(spark, stream)
    with pytest.raises(Exception) as failure:
        rows.write.format("kpl").options(**kinesis.kpl_options(), **FAST_EXPIRY).mode("append").save()
    message = str(failure.value)
    assert f"Kinesis finally failed the record for stream '{MISSING_STREAM}', partition key 'key-" in message
    assert "Expired" in message and "ResourceNotFoundException" in message
    assert "of Spark partition 0" in message


def test_a_write_with_no_stream_is_refused_on_the_driver(spark, kinesis):
    """No streamName option, config key or column: refused before any task, not row by row in them."""
    rows = spark.range(3).select(F.format_string("row-%d", "id").alias("data"))
    with pytest.raises(IllegalArgumentException, match="The kpl sink has no stream to write to: set the option "
                                                       "'streamName' .*spark.kpl.streamName.*column 'streamName'"):
        rows.write.format("kpl").options(**kinesis.kpl_options()).mode("append").save()


def test_a_row_that_cannot_become_a_record_raises_records_not_delivered_naming_its_column(spark, kinesis, stream):
    rows = spark.range(3, numPartitions=1).select(
        F.format_string("row-%d", "id").alias("data"),
        F.when(F.col("id") == 1, F.lit("")).otherwise(F.format_string("key-%d", "id")).alias("partitionKey"))
    with pytest.raises(spark_kpl.RecordsNotDelivered) as failure:
        spark_kpl.write(rows, stream, partition_key="partitionKey", **kinesis.kpl_options())
    error = failure.value
    assert (error.stream, error.partition_key, error.spark_partition, error.row, error.column, error.error_code) == (
        stream, "", 0, 2, "partitionKey", "InvalidPartitionKey")
    assert error.error_message == ("partition key must have 1 to 256 UTF-16 code units (the KPL's count: an emoji "
                                   "takes 2), has 0")
    assert str(error) == "Row 2 of Spark partition 0, column 'partitionKey': " + error.error_message


def test_with_fail_on_error_the_rows_before_the_failed_one_are_stored_when_the_write_raises(spark, endpoint,
                                                                                          ep_stream):
    # Each PutRecords is answered after a second: a task that only handed its rows to the KPL before
    # failing would report the failure (and its executor could stop) with none of them stored yet.
    endpoint.set_faults(Faults(latency=1.0))
    rows = spark.range(100, numPartitions=1).select(
        F.format_string("row-%d", "id").alias("data"),
        F.when(F.col("id") == 99, F.lit("")).otherwise(F.format_string("key-%d", "id")).alias("partitionKey"))
    with pytest.raises(spark_kpl.RecordsNotDelivered) as failure:
        spark_kpl.write(rows, ep_stream, partition_key="partitionKey", **endpoint.kpl_options())
    assert (failure.value.row, failure.value.column) == (100, "partitionKey")
    assert sorted(r.data for r in endpoint.records(ep_stream)) == sorted(f"row-{i}".encode() for i in range(99))
    assert "Rows before it were handed to Kinesis, and the task waited for them" in str(failure.value.__cause__)


def test_with_fail_on_error_false_failures_are_counted_and_dead_lettered(spark, kinesis, stream, tmp_path):
    dead_letters = str(tmp_path / "dead")
    result = spark_kpl.write(
        rows_partly_to_a_missing_stream(spark, stream), None, partition_key="partitionKey",
        target_stream="streamName", failOnError=False, deadLetterPath=dead_letters,
        **kinesis.kpl_options(), **FAST_EXPIRY)
    assert (result.records_written, result.records_failed) == (16, 4)
    assert sorted(r.data for r in kinesis.read_records(stream)) == sorted(
        f"row-{i}".encode() for i in range(20) if i % 5)
    assert not [name for name in os.listdir(dead_letters) if name.startswith(".") and "inprogress" in name]
    failed = sorted(spark.read.json(dead_letters).collect(), key=lambda r: r.row)
    assert [base64.b64decode(r.data) for r in failed] == [f"row-{i}".encode() for i in (0, 5, 10, 15)]
    assert [r.partitionKey for r in failed] == ["key-0", "key-5", "key-10", "key-15"]
    assert {(r.stream, r.errorCode, r.sparkPartition) for r in failed} == {(MISSING_STREAM, "Expired", 0)}
    assert all("ResourceNotFoundException" in r.errorMessage for r in failed)
    assert [r.row for r in failed] == [1, 6, 11, 16]


def test_rows_that_cannot_become_records_are_dead_lettered_with_their_column(spark, kinesis, stream, tmp_path):
    dead_letters = str(tmp_path / "dead")
    rows = spark.range(6, numPartitions=2).select(
        F.format_string("row-%d", "id").alias("data"),
        F.when(F.col("id") == 4, F.lit("")).otherwise(F.format_string("key-%d", "id")).alias("partitionKey"),
        F.when(F.col("id") == 5, F.lit("-1")).alias("explicitHashKey"))
    result = spark_kpl.write(rows, stream, partition_key="partitionKey", explicit_hash_key="explicitHashKey",
                             failOnError="false", deadLetterPath=dead_letters, **kinesis.kpl_options())
    assert (result.records_written, result.records_failed) == (4, 2)
    failed = {r.errorCode: r for r in spark.read.json(dead_letters).collect()}
    assert set(failed) == {"InvalidPartitionKey", "InvalidExplicitHashKey"}
    assert base64.b64decode(failed["InvalidExplicitHashKey"].data) == b"row-5"
    assert (failed["InvalidPartitionKey"].sparkPartition, failed["InvalidPartitionKey"].row) == (1, 2)
    assert sorted(r.data for r in kinesis.read_records(stream)) == [b"row-0", b"row-1", b"row-2", b"row-3"]


def test_failures_are_logged_in_bounded_volume(spark, kinesis, stream, jvm_log):
    rows = spark.range(30, numPartitions=1).select(F.format_string("row-%d", "id").alias("data"),
                                                   F.lit(MISSING_STREAM).alias("streamName"))
    result = spark_kpl.write(rows, None, target_stream="streamName", failOnError=False,
                             **kinesis.kpl_options(), **FAST_EXPIRY)
    assert (result.records_written, result.records_failed) == (0, 30)
    log = jvm_log.toString()
    assert log.count("Not delivered to Kinesis: Row") == 10
    assert "Spark partition 0: 30 records not delivered to Kinesis (10 logged above); no deadLetterPath" in log


def test_dead_letter_path_without_fail_on_error_false_is_an_error(spark, kinesis, stream, tmp_path):
    rows = spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused, match="'deadLetterPath' needs failOnError=false"):
        spark_kpl.write(rows, stream, deadLetterPath=str(tmp_path), **kinesis.kpl_options())


def test_a_bad_fail_on_error_value_names_option_and_conf_key(spark, kinesis, stream):
    rows = spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"'failOnError' \(spark.kpl.failOnError\): expected true or false, got 'maybe'"):
        spark_kpl.write(rows, stream, failOnError="maybe", **kinesis.kpl_options())


def test_a_killed_daemon_raises_producer_failed_whatever_fail_on_error_says(spark, endpoint, tmp_path):
    stream, native = "producer-failed", tmp_path / "native"
    endpoint.create_stream(stream, shards=1)
    # One slow shard, unaggregated: the KPL holds thousands of records when its daemon is killed.
    endpoint.set_faults(Faults(shard_records_per_second=300))
    jvm = driver_jvm_pid(spark)
    try:
        thread, outcome = write_in_background(
            spark, numbered_rows(spark, 3000, partitions=1), stream, **endpoint.kpl_options(),
            AggregationEnabled="false", RecordTtl="120000", failOnError="false", nativeDir=str(native))
        wait_for(lambda: sum(s["kplOutstandingRecords"] for s in spark_kpl.producer_stats(spark)) >= 1000, 60,
                 "1000 records held by the KPL")
        os.kill(wait_for(lambda: daemons_placed_in([jvm], native), 10, "the write's KPL daemon")[0], signal.SIGKILL)
        thread.join(120)
    finally:
        endpoint.set_faults(Faults())
        endpoint.delete_stream(stream)
    error = outcome.get("error")
    assert isinstance(error, spark_kpl.ProducerFailed), f"got {outcome}"
    assert not isinstance(error, spark_kpl.RecordsNotDelivered)
    assert 1 <= error.records_in_doubt <= error.records_added <= 3000
    assert "The KPL producer failed at least" in str(error.__cause__)


# The failures that spark_kpl.write and df.write raise alike on classic sessions and Spark Connect are in
# tests/sink/errors/test_api_errors.py.

def test_pythons_own_refusals_are_write_refused(spark, endpoint, ep_stream):
    rows = spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused, match="stream must be a non-empty stream name or None, got ''"):
        spark_kpl.write(rows, "", **endpoint.kpl_options())
    with pytest.raises(spark_kpl.WriteRefused, match="give a stream, or target_stream"):
        spark_kpl.write(rows, None, **endpoint.kpl_options())


def test_a_failure_of_the_dataframe_itself_stays_sparks_own(spark, endpoint, ep_stream):
    rows = spark.range(1).select(F.raise_error(F.lit("the input broke")).cast("string").alias("data"))
    with pytest.raises(Exception, match="the input broke") as failure:
        spark_kpl.write(rows, ep_stream, **endpoint.kpl_options())
    assert not isinstance(failure.value, spark_kpl.SparkKplError)
    assert endpoint.records(ep_stream) == []
