"""spark_kpl.errors: the sink's error tags read out of an error's text, as Spark Connect passes it, the sink's
JVM exception classes picked out of a classic error's causes, and the exceptions' place in PySpark's
hierarchy: no Spark, no JVM."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

import pytest
from pyspark.errors import IllegalArgumentException, PySparkException

import spark_kpl
from spark_kpl import ProducerFailed, RecordsNotDelivered, StreamRecreated
from spark_kpl._facts import ERROR_CLASSES, ERROR_TAG_OPENING
from spark_kpl.errors import sink_error, translated_errors


def tag(kind: str, fields: Dict[str, Any]) -> str:
    return f"{ERROR_TAG_OPENING}{kind} {json.dumps(fields)}]"


UNDELIVERED = {"stream": "clicks", "partitionKey": "user-7", "explicitHashKey": None, "sparkPartition": 3,
               "row": 12, "column": None, "errorCode": "Expired", "errorMessage": "RecordTtl passed"}


def test_a_tagged_undelivered_record_becomes_records_not_delivered_with_its_fields() -> None:
    error = RuntimeError(f"Job aborted: task 3 failed: {tag('RecordsNotDelivered', UNDELIVERED)}\n\tat ...")

    found = sink_error(error)

    assert isinstance(found, RecordsNotDelivered)
    assert (found.stream, found.partition_key, found.spark_partition, found.row, found.error_code) == (
        "clicks", "user-7", 3, 12, "Expired")
    assert "clicks" in str(found) and "Expired" in str(found)


def test_a_tag_cut_short_on_its_way_is_passed_over_for_a_whole_one() -> None:
    whole = tag("ProducerFailed", {"recordsInDoubt": 4, "recordsAdded": 10, "reason": None})
    error = RuntimeError(f"{tag('RecordsNotDelivered', UNDELIVERED)[:60]}... (truncated)\nCaused by: {whole}")

    found = sink_error(error)

    assert isinstance(found, ProducerFailed)
    assert (found.records_in_doubt, found.records_added, found.reason) == (4, 10, None)


def test_a_recreated_stream_is_named_in_the_exception() -> None:
    found = sink_error(RuntimeError(tag("StreamRecreated", {"stream": "orders"})))

    assert isinstance(found, StreamRecreated) and found.stream == "orders" and "'orders'" in str(found)


def test_an_error_without_a_tag_stays_spark_s() -> None:
    assert sink_error(RuntimeError("a UDF failed: division by zero")) is None
    assert sink_error(RuntimeError(f"{ERROR_TAG_OPENING}NoSuchKind {{}}]")) is None


class JavaThrowable:
    """What Py4J shows of a JVM exception: its class's name, its message and its cause."""

    def __init__(self, class_name: str, message: str, cause: Optional["JavaThrowable"] = None) -> None:
        self.class_name, self.message, self.cause = class_name, message, cause

    def getClass(self) -> "JavaThrowable":
        return self

    def getName(self) -> str:
        return self.class_name

    def getMessage(self) -> str:
        return self.message

    def getCause(self) -> Optional["JavaThrowable"]:
        return self.cause


class JobFailed(Exception):
    """A classic session's error for a failed job, as Py4J raises it: the JVM exception in ``java_exception``."""

    def __init__(self, java_exception: JavaThrowable) -> None:
        super().__init__("An error occurred while calling o42.save")
        self.java_exception = java_exception


def test_on_a_classic_session_the_sink_s_exception_class_among_the_causes_decides() -> None:
    # The job's message quotes a ProducerFailed tag of an earlier attempt; the cause that failed the job
    # is the sink's undelivered record.
    undelivered = JavaThrowable(ERROR_CLASSES["RecordsNotDelivered"][0], "Row 12 ..." + tag("RecordsNotDelivered",
                                                                                             UNDELIVERED))
    job = JavaThrowable("org.apache.spark.SparkException", "Job aborted: " + tag(
        "ProducerFailed", {"recordsInDoubt": 1, "recordsAdded": 2, "reason": None}), cause=undelivered)

    found = sink_error(JobFailed(job))

    assert isinstance(found, RecordsNotDelivered) and (found.stream, found.row) == ("clicks", 12)


def test_every_kind_of_tag_has_the_jvm_classes_that_end_in_it() -> None:
    assert set(ERROR_CLASSES) == {"RecordsNotDelivered", "ProducerFailed", "StreamRecreated"}
    assert all(classes and all(name.startswith("sparkkpl.") for name in classes) for classes in ERROR_CLASSES.values())


def test_the_exceptions_are_pyspark_s_and_keep_their_python_bases() -> None:
    assert all(issubclass(exception, (spark_kpl.SparkKplError, PySparkException)) for exception in (
        spark_kpl.SparkKplError, RecordsNotDelivered, ProducerFailed, StreamRecreated, spark_kpl.WriteRefused,
        spark_kpl.SinkNotOnSession))
    assert issubclass(spark_kpl.WriteRefused, ValueError) and issubclass(spark_kpl.WriteRefused,
                                                                        IllegalArgumentException)
    assert issubclass(spark_kpl.SinkNotOnSession, RuntimeError)
    assert str(StreamRecreated("orders")).startswith("Stream 'orders' was deleted")


def test_in_place_of_spark_s_error_the_exception_is_spark_s_class_as_well_keeping_its_attributes() -> None:
    recreated = JavaThrowable(ERROR_CLASSES["StreamRecreated"][0], tag("StreamRecreated", {"stream": "orders"}))
    error = JobFailed(JavaThrowable("org.apache.spark.SparkException", "Job aborted", cause=recreated))

    with pytest.raises(StreamRecreated) as raised:
        with translated_errors():
            raise error

    assert isinstance(raised.value, JobFailed) and type(raised.value).__name__ == "StreamRecreated"
    assert raised.value.java_exception is error.java_exception and raised.value.__cause__ is error
    assert str(raised.value) == str(StreamRecreated("orders"))


def test_any_other_error_passes_the_block_unchanged() -> None:
    error = RuntimeError("a UDF failed: division by zero")
    with pytest.raises(RuntimeError) as raised:
        with translated_errors():
            raise error
    assert raised.value is error
