"""A stream named by ARN (``streamArn``), end to end through the real KPL to the project's endpoint and
its loopback STS: the ARN's name and region reach the KPL, the sink's own Kinesis calls name the stream
by ARN, and a stream of another account is written only through a role of that account, since the KPL
sends names only. Refusals come on the driver, before any record is sent."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.endpoint.errors import ACCOUNT
from spark_kpl_testing.sigv4 import Credentials
from spark_kpl_testing.sts import StsEndpoint

pytestmark = pytest.mark.one_spark_line

ROWS = 200
OTHER_ACCOUNT = "210987654321"
#: Keys STS knows (GetCallerIdentity answers the endpoint's account, AssumeRole grants the role), but the
#: Kinesis endpoint does not: a write into the other account can succeed only with the role's credentials.
ROLE_CALLER = Credentials("AKIDARNCALLER", "arn-caller-secret")


def stream_arn(endpoint, stream, account=ACCOUNT, region=None):
    return f"arn:aws:kinesis:{region or endpoint.region}:{account}:stream/{stream}"


def options_without_region(endpoint):
    """The endpoint's KPL properties but Region, which the ARN gives."""
    return {name: value for name, value in endpoint.kpl_options().items() if name != "Region"}


def write_by_arn(spark, endpoint, arn, **options):
    return spark_kpl.write(numbered_rows(spark, ROWS), None, partition_key="partitionKey", streamArn=arn,
                           **{**options_without_region(endpoint), **options})


def assert_every_record_arrived_once_with_its_key(endpoint, stream, result):
    assert (result.records_written, result.records_failed) == (ROWS, 0)
    report = compare(numbered_expected(ROWS), ((r.data, r.partition_key) for r in endpoint.records(stream)))
    assert report.exactly_once, report.summary()


def test_a_stream_of_the_callers_account_by_arn_gets_every_row_once_and_is_described_by_arn(
        spark, endpoint, ep_stream):
    arn = stream_arn(endpoint, ep_stream)
    endpoint.reset_counters()
    with StsEndpoint(endpoint, roles=[]) as sts:
        result = write_by_arn(spark, endpoint, arn, awsStsEndpoint=sts.url)
    assert_every_record_arrived_once_with_its_key(endpoint, ep_stream, result)
    described = endpoint.requests("DescribeStreamSummary")
    assert described and all(body.get("StreamARN") == arn and "StreamName" not in body for body in described)
    # the tasks' shard maps list by ARN too (the KPL's daemon lists by name)
    assert any(body.get("StreamARN") == arn for body in endpoint.requests("ListShards"))


def test_a_streaming_query_by_arn_gets_every_row_once_and_describes_by_arn(spark, endpoint, ep_stream, tmp_path):
    """writeStream resolves its options apart from batch writes (once per query): the ARN holds there too."""
    source = tmp_path / "source"
    numbered_rows(spark, ROWS).write.json(str(source))
    arn = stream_arn(endpoint, ep_stream)
    endpoint.reset_counters()
    with StsEndpoint(endpoint, roles=[]) as sts:
        query = (spark.readStream.schema("data string, partitionKey string").json(str(source))
                 .writeStream.format("kpl").option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .options(streamArn=arn, awsStsEndpoint=sts.url,
                          **options_without_region(endpoint))
                 .trigger(availableNow=True).start())
        query.awaitTermination()
    assert query.exception() is None
    report = compare(numbered_expected(ROWS), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
    described = endpoint.requests("DescribeStreamSummary")
    assert described and all(body.get("StreamARN") == arn and "StreamName" not in body for body in described)


def test_an_arn_in_another_region_than_region_is_refused_naming_both(spark, endpoint, ep_stream):
    arn = stream_arn(endpoint, ep_stream, region="eu-central-1")
    with pytest.raises(spark_kpl.WriteRefused, match=rf"'Region' \({endpoint.region}\) disagrees .* \(eu-central-1"):
        spark_kpl.write(numbered_rows(spark, ROWS), None, streamArn=arn, **endpoint.kpl_options())
    assert endpoint.records(ep_stream) == []


def test_a_stream_of_another_account_without_a_role_is_refused_saying_why_and_what_to_do(
        spark, endpoint, ep_stream):
    with StsEndpoint(endpoint, roles=[]) as sts, pytest.raises(spark_kpl.WriteRefused) as refused:
        write_by_arn(spark, endpoint, stream_arn(endpoint, ep_stream, account=OTHER_ACCOUNT), awsStsEndpoint=sts.url)
    message = str(refused.value)
    for part in (f"of account {ACCOUNT}", "by name only", f"Set awsRoleArn to a role in account {OTHER_ACCOUNT}"):
        assert part in message, message[:2000]
    assert endpoint.records(ep_stream) == []


def test_a_stream_of_another_account_through_a_role_of_it_gets_every_row_once(spark, endpoint, ep_stream):
    role = f"arn:aws:iam::{OTHER_ACCOUNT}:role/spark-kpl-writer"
    with StsEndpoint(endpoint, roles=[role], credentials=[ROLE_CALLER]) as sts:
        result = write_by_arn(spark, endpoint, stream_arn(endpoint, ep_stream, account=OTHER_ACCOUNT),
                              awsAccessKeyId=ROLE_CALLER.access_key_id,
                              awsSecretAccessKey=ROLE_CALLER.secret_access_key, awsRoleArn=role, awsStsEndpoint=sts.url)
    assert sts.issued, "STS granted nothing"
    assert_every_record_arrived_once_with_its_key(endpoint, ep_stream, result)


def test_rows_naming_their_streams_by_arn_reach_them_and_another_accounts_are_undelivered(spark, endpoint):
    """A streamArn column: each row goes to the stream its ARN names, once, with its key; a row naming
    a stream of another account is an undelivered record naming the column, and the others are written."""
    streams = [f"arnrows{i}" for i in range(2)]
    for stream in streams:
        endpoint.create_stream(stream, shards=2)
    foreign = stream_arn(endpoint, streams[0], account=OTHER_ACCOUNT)
    arns = [stream_arn(endpoint, stream) for stream in streams]
    rows = numbered_rows(spark, ROWS).withColumn(
        "streamArn", F.when(F.col("data") == "row-7", F.lit(foreign))
        .when(F.col("data").substr(-1, 1).isin("0", "2", "4", "6", "8"), F.lit(arns[0])).otherwise(F.lit(arns[1])))
    try:
        with StsEndpoint(endpoint, roles=[]) as sts:
            result = spark_kpl.write(rows, None, target_stream_arn="streamArn", awsStsEndpoint=sts.url,
                                     failOnError="false", **endpoint.kpl_options())
        expected = numbered_expected(ROWS)
        del expected[b"row-7"]
        assert (result.records_written, result.records_failed) == (ROWS - 1, 1)
        for parity, stream in enumerate(streams):
            mine = {data: key for data, key in expected.items() if int(data.decode()[-1]) % 2 == parity}
            report = compare(mine, ((r.data, r.partition_key) for r in endpoint.records(stream)))
            assert report.exactly_once, report.summary()
    finally:
        for stream in streams:
            endpoint.delete_stream(stream)
