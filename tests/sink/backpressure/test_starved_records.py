"""A record Kinesis refuses for its shard's throughput in every attempt until RecordTtl (other writers kept
outrunning it at a busy shard) was never stored: its task sends it again rather than fail the write
(docs/backpressure.md). With ``ordering=key`` the rows behind it in its shard went on once it was answered, so
there it fails the write, naming its row, as before."""

from __future__ import annotations

import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint

#: How the sink's tasks handle the KPL's answers: no Spark line changes it, so it runs on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line

ROWS = 5_000
#: The row whose Kinesis record the endpoint starves: no other row's data holds these bytes.
STARVED_ROW = 1_234
TTL_MS = 3_000
#: Past one RecordTtl, within two: the first copy expires, the one sent again gets through.
STARVED_SECONDS = 4.5


def starve(endpoint: KinesisEndpoint) -> None:
    endpoint.set_faults(Faults(starved_data=f"row-{STARVED_ROW}".encode(), starved_seconds=STARVED_SECONDS))


def test_a_record_starved_past_record_ttl_is_sent_again_and_stored_once(spark, endpoint: KinesisEndpoint) -> None:
    stream = "starved"
    endpoint.create_stream(stream, shards=2)
    starve(endpoint)
    try:
        result = spark_kpl.write(numbered_rows(spark, ROWS, partitions=2), stream, partition_key="partitionKey",
                                 RecordTtl=str(TTL_MS), **endpoint.kpl_options())
        stats = endpoint.stats()
        report = compare(numbered_expected(ROWS), ((r.data, r.partition_key) for r in endpoint.records(stream)))
    finally:
        endpoint.set_faults(Faults())
        endpoint.delete_stream(stream)
    assert (result.records_written, result.records_failed) == (ROWS, 0), result
    assert result.records_resent >= 1, result  # the starved aggregate's rows, once or more
    assert stats["record_errors"].get("ProvisionedThroughputExceededException", 0) >= 2, stats
    assert report.exactly_once, report.summary()


def test_in_key_order_a_starved_record_fails_the_write_naming_its_row(spark, endpoint: KinesisEndpoint) -> None:
    stream = "starved-in-order"
    endpoint.create_stream(stream, shards=2)
    starve(endpoint)
    try:
        with pytest.raises(spark_kpl.RecordsNotDelivered) as failure:
            spark_kpl.write(numbered_rows(spark, ROWS, partitions=2), stream, partition_key="partitionKey",
                            ordering="key", RecordTtl=str(TTL_MS), **endpoint.kpl_options())
    finally:
        endpoint.set_faults(Faults())
        endpoint.delete_stream(stream)
    error = failure.value
    assert (error.stream, error.error_code) == (stream, "Expired"), error
    assert "ProvisionedThroughputExceededException" in error.error_message, error.error_message
