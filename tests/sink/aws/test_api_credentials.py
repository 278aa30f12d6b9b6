"""Credentials, end to end through the real KPL to the project's endpoint, which checks every
request's SigV4 signature: each route (static keys with a session token, a profile of a credentials
file, a role assumed through a loopback STS) delivers every record when its credentials are right,
and nothing when they are wrong, with an error naming Kinesis's (or STS's) answer. Secrets are never
shown in the plan, the write's description, the logs or the daemon's command line."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.processes import cmdline, driver_jvm_pid, live_children
from spark_kpl_testing.sigv4 import INVALID_TOKEN, Credentials
from spark_kpl_testing.sts import StsEndpoint

SECRET = "never-shown-9f8e7d6c5b4a"
KEY_ID = "AKIDNEVERSHOWN123"
TEMPORARY = Credentials(KEY_ID, SECRET, SECRET + "-token")  # the token starts with SECRET too
PROFILE_KEYS = Credentials("AKIDPROFILE", "profile-secret")
ROLE = "arn:aws:iam::000000000000:role/spark-kpl-writer"
ROWS = 200
#: Wrong credentials are retried until a record's time to live ends: keep it short.
SHORT_TTL = {"RecordTtl": "3000"}


def sql_plan_descriptions(spark):
    """The physical plans Spark's SQL tab shows, for every query this session ran."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return [executions.apply(i).physicalPlanDescription() + executions.apply(i).description()
            for i in range(executions.size())]


def daemon_command_lines(spark):
    """The command line of each KPL daemon of the driver JVM (local mode: the tasks'), as every local
    user can read it."""
    return [" ".join(cmdline(daemon)) for daemon in live_children(driver_jvm_pid(spark), "kinesis_producer")]


def write_numbered(spark, endpoint, stream, **options):
    return spark_kpl.write(numbered_rows(spark, ROWS), stream, partition_key="partitionKey",
                           **{**endpoint.kpl_options(), **options})


def assert_every_record_arrived_once_with_its_key(endpoint, stream, result):
    assert (result.records_written, result.records_failed) == (ROWS, 0)
    report = compare(numbered_expected(ROWS), ((r.data, r.partition_key) for r in endpoint.records(stream)))
    assert report.exactly_once, report.summary()


def assert_rejected(spark, endpoint, stream, error_pattern, **options):
    """The write fails with an error matching ``error_pattern``, and the stream holds nothing."""
    with pytest.raises(Exception) as failure:
        write_numbered(spark, endpoint, stream, **SHORT_TTL, **options)
    assert re.search(error_pattern, str(failure.value)), str(failure.value)[:2000]
    assert endpoint.records(stream) == []


@contextmanager
def credentials_file(spark, path: Path, profile: str, keys: Credentials) -> Iterator[None]:
    """``path`` holds ``profile`` with ``keys``, and is the driver JVM's (local mode: the tasks')
    shared credentials file for the duration."""
    path.write_text(f"[{profile}]\naws_access_key_id = {keys.access_key_id}\n"
                    f"aws_secret_access_key = {keys.secret_access_key}\n")
    system = spark.sparkContext._jvm.java.lang.System
    previous = system.getProperty("aws.sharedCredentialsFile")
    system.setProperty("aws.sharedCredentialsFile", str(path))
    try:
        yield
    finally:
        if previous is None:
            system.clearProperty("aws.sharedCredentialsFile")
        else:
            system.setProperty("aws.sharedCredentialsFile", previous)


def test_static_keys_with_a_session_token_deliver_and_stay_secret(spark, endpoint, ep_stream, jvm_log):
    endpoint.accept_credentials(TEMPORARY)
    level = spark.sparkContext._jvm.org.apache.logging.log4j.Level
    configurator = spark.sparkContext._jvm.org.apache.logging.log4j.core.config.Configurator
    configurator.setLevel("sparkkpl", level.INFO)  # so the producer's start, with its config, is logged
    spark.conf.set("spark.kpl.awsSecretAccessKey", SECRET)
    try:
        result = write_numbered(spark, endpoint, ep_stream, awsAccessKeyId=KEY_ID,
                                awsSessionToken=TEMPORARY.session_token)
    finally:
        spark.conf.unset("spark.kpl.awsSecretAccessKey")
        configurator.setLevel("sparkkpl", level.WARN)
    command_lines = daemon_command_lines(spark)  # the producer idles 2 s before it closes
    assert command_lines, "no KPL daemon running after the write"
    for command_line in command_lines:
        # The KPL passes its configuration to the daemon as hex-encoded protobuf.
        assert SECRET not in command_line and SECRET.encode().hex() not in command_line.lower()
    assert_every_record_arrived_once_with_its_key(endpoint, ep_stream, result)
    log = jvm_log.toString()
    assert re.search(r"Starting a KPL producer for ProducerSpec\{.*spark\.kpl\.awsAccessKeyId=\*\*\*", log)
    plans = "\n".join(sql_plan_descriptions(spark))
    assert "Kinesis (KPL) WriteOptions" in plans
    for shown in (log, plans):
        assert SECRET not in shown and KEY_ID not in shown


def test_static_keys_with_a_wrong_session_token_deliver_nothing(spark, endpoint, ep_stream):
    endpoint.accept_credentials(TEMPORARY)
    assert_rejected(spark, endpoint, ep_stream, r"UnrecognizedClientException: " + re.escape(INVALID_TOKEN),
                    awsAccessKeyId=KEY_ID, awsSecretAccessKey=SECRET, awsSessionToken="expired-token")


def test_a_profile_of_a_credentials_file_delivers(spark, endpoint, ep_stream, tmp_path):
    endpoint.accept_credentials(PROFILE_KEYS)
    with credentials_file(spark, tmp_path / "credentials", "writer", PROFILE_KEYS):
        result = write_numbered(spark, endpoint, ep_stream, awsProfile="writer")
    assert_every_record_arrived_once_with_its_key(endpoint, ep_stream, result)


def test_a_profile_with_keys_kinesis_does_not_know_delivers_nothing(spark, endpoint, ep_stream, tmp_path):
    with credentials_file(spark, tmp_path / "credentials", "stale", Credentials("AKIDREVOKED", "revoked")):
        assert_rejected(spark, endpoint, ep_stream, r"UnrecognizedClientException: " + re.escape(INVALID_TOKEN),
                        awsProfile="stale")


def test_a_profile_that_does_not_exist_is_a_clear_error(spark, endpoint, ep_stream):
    rows = spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"'awsProfile' \(spark.kpl.awsProfile\): no profile 'nobody-has-this'"):
        spark_kpl.write(rows, ep_stream, awsProfile="nobody-has-this", **endpoint.kpl_options())


#: Keys that may assume the role through STS, but that the Kinesis endpoint does not accept: a write
#: with them can only succeed with the role's temporary credentials.
ROLE_CALLER = Credentials("AKIDROLECALLER", "role-caller-secret")


def test_a_role_assumed_through_sts_delivers_with_its_temporary_credentials(spark, endpoint, ep_stream):
    with StsEndpoint(endpoint, roles=[ROLE], credentials=[ROLE_CALLER]) as sts:
        result = write_numbered(spark, endpoint, ep_stream, awsAccessKeyId=ROLE_CALLER.access_key_id,
                                awsSecretAccessKey=ROLE_CALLER.secret_access_key, awsRoleArn=ROLE,
                                awsStsEndpoint=sts.url)
    assert sts.issued, "STS granted nothing"
    assert_every_record_arrived_once_with_its_key(endpoint, ep_stream, result)


@pytest.mark.parametrize("aggregation", ["executor", "kpl"])
def test_a_role_sts_refuses_delivers_nothing_and_the_error_says_why(spark, endpoint, ep_stream, aggregation):
    other = ROLE + "-other"
    with StsEndpoint(endpoint, roles=[ROLE], credentials=[ROLE_CALLER]) as sts:
        assert_rejected(spark, endpoint, ep_stream,
                        rf"No AWS credentials from role '{other}' \(awsRoleArn\) assumed through STS at {sts.url} "
                        rf"with the static keys \(awsAccessKeyId\): User: \S+ is not authorized to perform: "
                        rf"sts:AssumeRole on resource: {other}",
                        awsAccessKeyId=ROLE_CALLER.access_key_id, awsSecretAccessKey=ROLE_CALLER.secret_access_key,
                        awsRoleArn=other, awsStsEndpoint=sts.url, aggregation=aggregation)
        assert not sts.issued


def test_a_streaming_query_neither_assumes_its_role_nor_describes_its_stream_at_every_micro_batch(
        spark, endpoint, ep_stream, tmp_path):
    """Spark builds a query's write anew for each micro-batch, and the driver checks the stream at each
    commit: a client per call assumed the role again each time (an STS call and a new connection per
    micro-batch), and the stream was described every micro-batch, not once per 5 s."""
    batches, rows = 6, 5
    describes = endpoint.stats()["calls"].get("DescribeStreamSummary", 0)
    source = tmp_path / "source"
    source.mkdir()
    for batch in range(batches):  # one file per micro-batch
        (source / f"part-{batch}.json").write_text("".join(f'{{"data": "b{batch}-r{row}"}}\n' for row in range(rows)))
    with StsEndpoint(endpoint, roles=[ROLE], credentials=[ROLE_CALLER]) as sts:
        query = (spark.readStream.schema("data string").option("maxFilesPerTrigger", 1).json(str(source))
                 .writeStream.format("kpl").option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .option("streamName", ep_stream).options(**endpoint.kpl_options())
                 .options(awsAccessKeyId=ROLE_CALLER.access_key_id, awsSecretAccessKey=ROLE_CALLER.secret_access_key,
                          awsRoleArn=ROLE, awsStsEndpoint=sts.url)
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        assert query.exception() is None
        assert len([p for p in query.recentProgress if p["numInputRows"]]) == batches
        assert len(sts.issued) < batches, f"the role was assumed {len(sts.issued)} times for {batches} micro-batches"
    describes = endpoint.stats()["calls"].get("DescribeStreamSummary", 0) - describes
    assert describes < batches, f"the stream was described {describes} times for {batches} micro-batches"
    assert sorted(r.data for r in endpoint.records(ep_stream)) == sorted(
        f"b{batch}-r{row}".encode() for batch in range(batches) for row in range(rows))
