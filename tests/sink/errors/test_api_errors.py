"""The exceptions a Python caller catches when a write fails, each test on a classic session and on Spark
Connect (``any_spark``): spark_kpl.write's, df.write.format("kpl").save()'s inside
spark_kpl.errors.translated_errors() or, bare, after spark_kpl.errors.install(), and a streaming query's
through spark_kpl.errors.sink_error or, after install(), from awaitTermination itself; every one
a spark_kpl exception with Spark's error as its __cause__, and still an instance of Spark's error's class."""

from __future__ import annotations

import json
from typing import Dict

import pytest
from pyspark.errors import AnalysisException, IllegalArgumentException, PySparkException, StreamingQueryException
from pyspark.sql import functions as F

import spark_kpl
import spark_kpl.errors
from spark_kpl.errors import sink_error, translated_errors

from missing_stream import FAST_EXPIRY, MISSING_STREAM, rows_partly_to_a_missing_stream

#: STS at a loopback port nothing listens on: no credentials for the role, at once.
UNREACHABLE_STS = {"awsRoleArn": "arn:aws:iam::000000000000:role/writer", "awsStsEndpoint": "http://127.0.0.1:9"}


def assert_first_failed_record(error: spark_kpl.RecordsNotDelivered) -> None:
    """``error`` names the first record of rows_partly_to_a_missing_stream that Kinesis failed."""
    assert (error.stream, error.spark_partition, error.column, error.error_code) == (MISSING_STREAM, 0, None, "Expired")
    # Rows 1, 6, 11 and 16 (ids 0, 5, 10, 15) target the missing stream; Kinesis fails them together.
    assert error.row in (1, 6, 11, 16) and error.partition_key == f"key-{error.row - 1}"
    assert error.explicit_hash_key is None
    assert "ResourceNotFoundException" in error.error_message
    assert str(error).startswith(f"Row {error.row} of Spark partition 0: Kinesis finally failed the record for "
                                 f"stream '{MISSING_STREAM}', partition key '{error.partition_key}': Expired: ")
    assert "Kinesis finally failed the record" in str(error.__cause__)
    assert isinstance(error, PySparkException)


def test_spark_kpl_write_raises_records_not_delivered_with_the_first_failed_record(any_spark, endpoint, ep_stream):
    with pytest.raises(spark_kpl.RecordsNotDelivered) as failure:
        spark_kpl.write(rows_partly_to_a_missing_stream(any_spark, ep_stream), None, partition_key="partitionKey",
                        target_stream="streamName", **endpoint.kpl_options(), **FAST_EXPIRY)
    assert_first_failed_record(failure.value)


def test_df_write_save_in_translated_errors_raises_records_not_delivered_still_caught_as_sparks_error(
        any_spark, endpoint, ep_stream):
    def save(options: Dict[str, str]) -> None:
        (rows_partly_to_a_missing_stream(any_spark, ep_stream).write.format("kpl").options(**options)
         .mode("append").save())

    options = {**endpoint.kpl_options(), **FAST_EXPIRY}
    with pytest.raises(Exception) as untranslated:
        save(options)
    assert not isinstance(untranslated.value, spark_kpl.SparkKplError)
    with pytest.raises(spark_kpl.RecordsNotDelivered) as failure:
        with translated_errors():
            save(options)
    assert_first_failed_record(failure.value)
    # An except clause written for Spark's error (Py4JJavaError, Connect's SparkException) still catches it.
    assert isinstance(failure.value, type(untranslated.value))
    assert type(failure.value.__cause__) is type(untranslated.value)


def _query_with_a_row_for_a_missing_stream(spark, endpoint, stream: str, tmp_path):
    """A started streaming query of 10 rows into ``stream``, one of them naming a stream that does not exist."""
    source = tmp_path / "source"
    source.mkdir()
    lines = [{"data": f"row-{i}", "partitionKey": f"key-{i}", "streamName": MISSING_STREAM if i == 3 else stream}
             for i in range(10)]
    (source / "part-0.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return (spark.readStream.schema("data string, partitionKey string, streamName string").json(str(source))
            .coalesce(1).writeStream.format("kpl").option("checkpointLocation", str(tmp_path / "checkpoint"))
            .options(**endpoint.kpl_options(), **FAST_EXPIRY).trigger(availableNow=True).start())


def test_a_streaming_query_s_failure_is_records_not_delivered_through_sink_error(any_spark, endpoint, ep_stream,
                                                                                 tmp_path):
    query = _query_with_a_row_for_a_missing_stream(any_spark, endpoint, ep_stream, tmp_path)
    try:
        with pytest.raises(StreamingQueryException) as stopped:
            query.awaitTermination(120)
    finally:
        query.stop()
    for failed in (stopped.value, query.exception()):
        error = sink_error(failed)
        assert isinstance(error, spark_kpl.RecordsNotDelivered), failed
        assert (error.stream, error.partition_key, error.row, error.error_code) == (
            MISSING_STREAM, "key-3", 4, "Expired")
        assert error.__cause__ is failed and isinstance(error, StreamingQueryException)
    assert sink_error(RuntimeError("not the sink's")) is None


def test_a_refused_option_is_a_value_error_naming_it_with_sparks_error_as_cause(any_spark, endpoint, ep_stream):
    """An option value the sink refuses (``nullData="drop"``): a ValueError naming the option, its Spark
    config key and the values it takes."""
    rows = any_spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(ValueError) as failure:
        spark_kpl.write(rows, ep_stream, nullData="drop", **endpoint.kpl_options())
    refusal = failure.value
    assert isinstance(refusal, spark_kpl.WriteRefused)
    assert str(refusal) == ("Invalid value for option 'nullData' (spark.kpl.nullData): "
                            "expected one of fail, skip, got 'drop'")
    assert isinstance(refusal.__cause__, IllegalArgumentException) and isinstance(refusal, IllegalArgumentException)
    assert endpoint.records(ep_stream) == []


def test_a_misspelt_option_is_refused_suggesting_the_name_meant(any_spark, endpoint, ep_stream):
    """A misspelt option, in Python's keyword style or one letter off: refused with a "did you mean"."""
    rows = any_spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused, match=r"^Unknown option 'fail_on_error' for the kpl sink\. "
                       r"Did you mean 'failOnError'\? It takes the sink options \["):
        spark_kpl.write(rows, ep_stream, fail_on_error=False, **endpoint.kpl_options())
    with pytest.raises(IllegalArgumentException, match=r"Unknown option 'stramName' for the kpl sink\. "
                       r"Did you mean 'streamName'\?"):
        rows.write.format("kpl").option("stramName", ep_stream).options(**endpoint.kpl_options()) \
            .mode("append").save()
    assert endpoint.records(ep_stream) == []


def test_credentials_the_driver_cannot_get_refuse_the_write(any_spark, endpoint, ep_stream):
    rows = any_spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused, match=r"^No AWS credentials from role 'arn:aws:iam::000000000000:"
                       r"role/writer' \(awsRoleArn\) assumed through STS at http://127.0.0.1:9") as failure:
        spark_kpl.write(rows, ep_stream, **endpoint.kpl_options(), **UNREACHABLE_STS)
    assert "No AWS credentials from role" in str(failure.value.__cause__)


def test_a_sink_failure_in_a_task_raises_producer_failed_with_the_jvm_error(any_spark, endpoint, ep_stream, tmp_path):
    """Tasks that cannot place the KPL daemon (nativeDir is a file): a ProducerFailed carrying the JVM's
    reason, with 0 records in doubt."""
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    rows = any_spark.range(3, numPartitions=1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.ProducerFailed) as failure:
        spark_kpl.write(rows, ep_stream, nativeDir=str(not_a_folder), **endpoint.kpl_options())
    error = failure.value
    assert (error.records_in_doubt, error.records_added) == (0, 0)
    assert error.reason is not None and "KPL native daemon" in error.reason and str(not_a_folder) in error.reason
    assert error.reason in str(error) and str(not_a_folder) in str(error.__cause__)


def test_a_column_argument_that_does_not_resolve_refuses_the_write(any_spark, endpoint, ep_stream):
    rows = any_spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused, match="no_such_column") as failure:
        spark_kpl.write(rows, ep_stream, partition_key="no_such_column", **endpoint.kpl_options())
    assert type(failure.value.__cause__).__name__ == "AnalysisException"
    assert endpoint.records(ep_stream) == []


@pytest.fixture
def errors_installed():
    """spark_kpl.errors.install() for one test, undone after it: the module's other tests see Spark's errors."""
    spark_kpl.errors.install()
    yield
    spark_kpl.errors.uninstall()


def test_after_install_a_bare_df_write_raises_the_sinks_exceptions_and_other_writes_sparks(
        any_spark, endpoint, ep_stream, tmp_path, errors_installed):
    rows = rows_partly_to_a_missing_stream(any_spark, ep_stream)
    with pytest.raises(spark_kpl.RecordsNotDelivered) as failure:
        rows.write.format("kpl").options(**endpoint.kpl_options(), **FAST_EXPIRY).mode("append").save()
    assert_first_failed_record(failure.value)
    assert not isinstance(failure.value.__cause__, spark_kpl.SparkKplError)
    with pytest.raises(spark_kpl.WriteRefused, match="queueLimit") as refused:
        rows.write.format("kpl").options(**endpoint.kpl_options(), queueLimit="0").mode("append").save()
    assert isinstance(refused.value, IllegalArgumentException)
    # Another source's refusal stays Spark's: the folder exists already.
    with pytest.raises(AnalysisException) as sparks:
        rows.write.format("json").mode("error").save(str(tmp_path))
    assert not isinstance(sparks.value, spark_kpl.SparkKplError)


def test_after_install_a_streaming_query_raises_records_not_delivered(any_spark, endpoint, ep_stream, tmp_path,
                                                                       errors_installed):
    query = _query_with_a_row_for_a_missing_stream(any_spark, endpoint, ep_stream, tmp_path)
    try:
        with pytest.raises(spark_kpl.RecordsNotDelivered) as failure:
            query.awaitTermination(120)
    finally:
        query.stop()
    error = failure.value
    assert (error.stream, error.partition_key, error.row, error.error_code) == (MISSING_STREAM, "key-3", 4, "Expired")
    # Still what an except clause written for Spark's error catches.
    assert isinstance(error, StreamingQueryException) and isinstance(error.__cause__, StreamingQueryException)
