"""The minimal IAM policy of docs/aws.md is enough, and nothing less is silently accepted: the project's
endpoint refuses every action the policy does not grant, as Kinesis does (AccessDeniedException)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

import spark_kpl
from spark_kpl.errors import translated_errors
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.endpoint.policy import granted_actions
from spark_kpl_testing.polling import wait_for

DOCS = Path(__file__).resolve().parents[3] / "docs" / "aws.md"
#: The calls the sink and the KPL make: no Spark line changes them, so scripts/test.sh runs it on 4.1 only.
pytestmark = pytest.mark.one_spark_line


def documented_statements():
    """The two JSON blocks of the policy section: the writer's policy, and the metrics statement."""
    section = DOCS.read_text().split("## The minimal IAM policy", 1)[1].split("\n## ", 1)[0]
    policy, metrics = (json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, re.S))
    return granted_actions(policy), granted_actions({"Statement": [metrics]})


WRITER, METRICS = documented_statements()


@pytest.fixture
def granted(endpoint):
    yield endpoint.grant_only
    endpoint.grant_only(None)


def test_the_endpoint_refuses_an_action_the_policy_does_not_grant(endpoint, ep_stream, granted):
    granted({"kinesis:PutRecords"})
    with pytest.raises(ClientError) as refused:
        endpoint.client().list_shards(StreamName=ep_stream)
    error = refused.value.response["Error"]
    assert error["Code"] == "AccessDeniedException"
    assert re.fullmatch(rf"User: arn:aws:iam::000000000000:user/\S+ is not authorized to perform: kinesis:ListShards "
                        rf"on resource: arn:aws:kinesis:us-east-1:000000000000:stream/{ep_stream} because no "
                        r"identity-based policy allows the kinesis:ListShards action", error["Message"])


def test_a_keyed_write_succeeds_under_exactly_the_documented_policy(spark, endpoint, ep_stream, granted):
    assert WRITER == {"kinesis:PutRecords", "kinesis:ListShards", "kinesis:DescribeStreamSummary"}
    granted(WRITER)
    endpoint.reset_counters()
    result = spark_kpl.write(numbered_rows(spark, 2000), ep_stream, partition_key="partitionKey",
                             **endpoint.kpl_options())
    report = compare(numbered_expected(2000), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert result.records_written == 2000 and report.exactly_once, report.summary()
    assert "AccessDeniedException" not in endpoint.call_errors
    assert {"ListShards", "DescribeStreamSummary", "PutRecords"} <= set(endpoint.calls)


def test_kpl_metrics_need_the_documented_metrics_statement(spark, endpoint, ep_stream, granted):
    granted(WRITER | METRICS)
    endpoint.reset_counters()
    spark_kpl.write(numbered_rows(spark, 200, partitions=1), ep_stream, partition_key="partitionKey",
                    **{**endpoint.kpl_options(), "MetricsLevel": "summary", "MetricsUploadDelay": "1000"})
    wait_for(lambda: endpoint.calls.get("cloudwatch:PutMetricData"), 30, "the KPL's PutMetricData")
    assert "AccessDeniedException" not in endpoint.call_errors


def kpl_metrics_options(endpoint, **metrics: str) -> dict:
    """The endpoint's KPL options as a user would give them: without the harness's MetricsLevel=none (CloudWatch
    still pointed at the endpoint, so any upload is counted there), the KPL's uploads every second, and the
    producer kept 5 s after the write, long enough for several."""
    options = {name: value for name, value in endpoint.kpl_options().items() if name != "MetricsLevel"}
    return {**options, "MetricsUploadDelay": "1000", "producerIdleTimeoutMs": "5000", **metrics}


def write_and_let_the_producer_close(spark, endpoint, stream, options) -> None:
    """200 keyed rows, every one arriving once; returns once the write's producer (and its daemon) closed."""
    result = spark_kpl.write(numbered_rows(spark, 200, partitions=1), stream, partition_key="partitionKey", **options)
    report = compare(numbered_expected(200), ((r.data, r.partition_key) for r in endpoint.records(stream)))
    assert result.records_written == 200 and report.exactly_once, report.summary()
    wait_for(lambda: not spark_kpl.producer_settings(spark), 60, "the write's producer to close")


def test_a_default_write_uploads_no_kpl_metrics_so_the_policy_needs_no_cloudwatch(spark, endpoint, ep_stream,
                                                                                  granted):
    granted(WRITER)
    endpoint.reset_counters()
    write_and_let_the_producer_close(spark, endpoint, ep_stream, kpl_metrics_options(endpoint))
    assert "cloudwatch:PutMetricData" not in endpoint.calls, endpoint.calls
    assert "AccessDeniedException" not in endpoint.call_errors


def test_kpl_metrics_asked_for_without_the_permission_are_refused(spark, endpoint, ep_stream, granted):
    granted(WRITER)
    endpoint.reset_counters()
    write_and_let_the_producer_close(spark, endpoint, ep_stream, kpl_metrics_options(endpoint, MetricsLevel="detailed"))
    assert endpoint.calls.get("cloudwatch:PutMetricData"), endpoint.calls
    assert endpoint.call_errors.get("AccessDeniedException") == endpoint.calls["cloudwatch:PutMetricData"]


def test_without_list_shards_a_keyed_write_is_refused_naming_the_permission(spark, endpoint, ep_stream, granted):
    granted(WRITER - {"kinesis:ListShards"})
    with pytest.raises(spark_kpl.WriteRefused, match=r"the tasks list the shards of stream '\w+' \(the "
                       r"kinesis:ListShards permission\), and Kinesis refused: .*AccessDeniedException.* Grant "
                       r"kinesis:ListShards on the stream, or set aggregation=kpl"):
        spark_kpl.write(numbered_rows(spark, 100), ep_stream, partition_key="partitionKey", **endpoint.kpl_options())
    assert endpoint.records(ep_stream) == []


@pytest.mark.parametrize("choice", [{"aggregation": "kpl"}, {"partition_key": None}], ids=["aggregation-kpl",
                                                                                          "sink-keys"])
def test_without_list_shards_the_documented_ways_out_deliver_every_row(spark, endpoint, ep_stream, granted, choice):
    granted(WRITER - {"kinesis:ListShards"})
    options = {"partition_key": "partitionKey", **endpoint.kpl_options(), **choice}
    rows = numbered_rows(spark, 500)
    if options["partition_key"] is None:
        rows = rows.drop("partitionKey")  # the sink chooses the keys: the frame has none of its own to use
    result = spark_kpl.write(rows, ep_stream, **options)
    assert result.records_written == 500 and len(endpoint.records(ep_stream)) == 500


def test_rows_naming_a_stream_that_cannot_be_described_fail_where_the_kpl_would_aggregate_them(
        spark, endpoint, ep_stream, granted):
    """A stream rows name whose description is refused has an unknown incarnation: the task builds no
    aggregates for it (a record alone is always read), but the KPL's own aggregates would be built on its
    daemon's map, which a reused daemon may hold of a stream created again. Before, that write reported
    every row written."""
    from pyspark.sql import functions as F

    granted(WRITER - {"kinesis:DescribeStreamSummary"})
    rows = numbered_rows(spark, 200).withColumn("streamName", F.lit(ep_stream))
    with pytest.raises(spark_kpl.SparkKplError, match=rf"Rows name stream '{ep_stream}', which could not be described "
                       r"\(.*AccessDeniedException.*\): with the KPL's own aggregation \(aggregation=kpl\)"):
        with translated_errors():
            rows.write.format("kpl").options(aggregation="kpl", **endpoint.kpl_options()).mode("append").save()
    assert endpoint.records(ep_stream) == []

    # aggregation=executor (the default): each row alone
    rows.write.format("kpl").options(**endpoint.kpl_options()).mode("append").save()
    report = compare(numbered_expected(200), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
