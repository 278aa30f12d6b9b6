"""spark_kpl.errors reading the sink's error tags out of an error's text, as Spark Connect passes it: no
Spark, no JVM."""

from __future__ import annotations

import json
from typing import Any, Dict

from spark_kpl import ProducerFailed, RecordsNotDelivered, StreamRecreated
from spark_kpl._facts import ERROR_TAG_OPENING
from spark_kpl.errors import translated


def tag(kind: str, fields: Dict[str, Any]) -> str:
    return f"{ERROR_TAG_OPENING}{kind} {json.dumps(fields)}]"


UNDELIVERED = {"stream": "clicks", "partitionKey": "user-7", "explicitHashKey": None, "sparkPartition": 3,
               "row": 12, "column": None, "errorCode": "Expired", "errorMessage": "RecordTtl passed"}


def test_a_tagged_undelivered_record_becomes_records_not_delivered_with_its_fields() -> None:
    error = RuntimeError(f"Job aborted: task 3 failed: {tag('RecordsNotDelivered', UNDELIVERED)}\n\tat ...")

    found = translated(error)

    assert isinstance(found, RecordsNotDelivered)
    assert (found.stream, found.partition_key, found.spark_partition, found.row, found.error_code) == (
        "clicks", "user-7", 3, 12, "Expired")
    assert "clicks" in str(found) and "Expired" in str(found)


def test_a_tag_cut_short_on_its_way_is_passed_over_for_a_whole_one() -> None:
    whole = tag("ProducerFailed", {"recordsInDoubt": 4, "recordsAdded": 10, "reason": None})
    error = RuntimeError(f"{tag('RecordsNotDelivered', UNDELIVERED)[:60]}... (truncated)\nCaused by: {whole}")

    found = translated(error)

    assert isinstance(found, ProducerFailed)
    assert (found.records_in_doubt, found.records_added, found.reason) == (4, 10, None)


def test_a_recreated_stream_is_named_in_the_exception() -> None:
    found = translated(RuntimeError(tag("StreamRecreated", {"stream": "orders"})))

    assert isinstance(found, StreamRecreated) and found.stream == "orders" and "'orders'" in str(found)


def test_an_error_without_a_tag_stays_spark_s() -> None:
    assert translated(RuntimeError("a UDF failed: division by zero")) is None
    assert translated(RuntimeError(f"{ERROR_TAG_OPENING}NoSuchKind {{}}]")) is None
