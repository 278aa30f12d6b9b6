"""The bad-input table: one row per case, each a write through the real KPL to the
project's own endpoint. Each case must fail (or, where the sink documents it, succeed) with an error
naming the culprit -- row, column, option or stream -- within a bounded time, and must lose nothing
the task had already accepted: rows before a bad row stay added (docs/api.md, failOnError: "Records
the task added before it stay added"), so the stream must hold them; and a failed write never
reports success.

Wrong credentials are rejected by the endpoint as by Kinesis (it checks every request's SigV4
signature): the KPL retries until RecordTtl and the error names Kinesis's answer. What the sink itself
checks on the driver (a profile that does not exist, a key id without its secret) fails sooner.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.env import LOOPBACK_AWS_ENV
from spark_kpl_testing.net import free_port
from spark_kpl_testing.polling import poll_until

#: No case may take longer than this: an error must come, not a hang.
BOUND_SECONDS = 90
#: The KPL retries a missing stream or an unreachable endpoint until a record's time to live ends.
SHORT_TTL = {"RecordTtl": "3000"}

def closed_port() -> int:
    return free_port()  # nothing listens there


def rows_with_bad_third(spark, data=None, key=None, ehk=None):
    """Rows 1, 2 good ('row-0', 'row-1'), row 3 bad, row 4 good, in one Spark partition.

    ``data``/``key``/``ehk``: the bad row's value as a SQL expression (others: good values).
    """
    data, key, ehk = (None if e is None else F.expr(e) for e in (data, key, ehk))
    rows = spark.range(4, numPartitions=1)
    bad = F.col("id") == 2
    good_data = F.format_string("row-%d", "id")
    columns = [(F.when(bad, data).otherwise(good_data) if data is not None else good_data).alias("data"),
               (F.when(bad, key).otherwise(F.lit("k")) if key is not None else F.lit("k")).alias("partitionKey")]
    if ehk is not None:
        columns.append(F.when(bad, ehk).otherwise(F.lit("0")).alias("explicitHashKey"))
    return rows.select(*columns)


def plain_rows(spark, count=20, partitions=1):
    return spark.range(count, numPartitions=partitions).select(
        F.format_string("row-%d", "id").alias("data"), F.lit("k").alias("partitionKey"))


@dataclass
class Case:
    """``write(spark, endpoint, stream)`` performs the write; ``error``: regex the message must match
    (None: the write must succeed); ``accepted``: data the stream must hold afterwards."""

    write: Callable
    error: Optional[str]
    accepted: List[bytes] = field(default_factory=list)


def sink(df, stream, endpoint, **options):
    """``df.write.format("kpl")`` with the endpoint's KPL options."""
    return (df.write.format("kpl").option("streamName", stream)
            .options(**endpoint.kpl_options(), **options).mode("append").save())


def bad_row(data=None, key=None, ehk=None, **options):
    return lambda spark, ep, stream: sink(rows_with_bad_third(spark, data, key, ehk), stream, ep, **options)


def kpl_write(df_of, **options):
    return lambda spark, ep, stream: spark_kpl.write(df_of(spark), stream, partition_key="partitionKey",
                                                     **{**ep.kpl_options(), **options})


def empty_data(spark, ep, stream):
    df = spark.createDataFrame([(b"", "k"), (b"after-empty", "k")], "data binary, partitionKey string").coalesce(1)
    result = spark_kpl.write(df, stream, partition_key="partitionKey", **ep.kpl_options())
    assert (result.records_written, result.records_failed) == (2, 0)


def stream_deleted_mid_job(spark, ep, stream):
    """The endpoint deletes the stream inside the PutRecords call that stores its 100th record, so
    the deletion lands mid-write however fast or slow the machine is."""
    ep.delete_stream_after(stream, 100)
    spark_kpl.write(plain_rows(spark, 3000, 1), stream, partition_key="partitionKey",
                    AggregationEnabled="false", **SHORT_TTL, **ep.kpl_options())


def unreachable_endpoint(spark, ep, stream):
    options = {**ep.kpl_options(), "KinesisPort": str(closed_port()), **SHORT_TTL}
    spark_kpl.write(plain_rows(spark, 10), stream, partition_key="partitionKey", **options)


ROW3 = r"Row 3 of Spark partition 0"
KEY_LENGTH = r"partition key must have 1 to 256 UTF-16 code units \(the KPL's count: an emoji takes 2\)"
BEFORE = [b"row-0", b"row-1"]  # rows 1 and 2, added before the bad row 3

CASES: Dict[str, Case] = {
    "null data (nullData=fail, the default)": Case(
        bad_row(data="CAST(NULL AS STRING)"), ROW3 + r", column 'data': data is null", BEFORE),
    "empty data (valid in Kinesis: sent)": Case(empty_data, None, [b"", b"after-empty"]),
    "oversized record (over maxRecordBytes)": Case(
        bad_row(data="repeat('x', 1048576)"),
        ROW3 + r", column 'data': the record has 1048577 bytes .*over maxRecordBytes=1048576", BEFORE),
    "partition key empty": Case(
        bad_row(key="''"), ROW3 + r", column 'partitionKey': " + KEY_LENGTH + ", has 0", BEFORE),
    "partition key 257 characters": Case(
        bad_row(key="repeat('p', 257)"),
        ROW3 + r", column 'partitionKey': " + KEY_LENGTH + ", has 257", BEFORE),
    "partition key not a string (int column)": Case(
        lambda spark, ep, stream: sink(spark.range(3).select(F.lit("x").alias("data"),
                                                             F.col("id").cast("int").alias("partitionKey")),
                                       stream, ep),
        r"Column 'partitionKey' must be string .*but is int"),
    "explicit hash key 'abc'": Case(bad_row(ehk="'abc'"), ROW3 + r", column 'explicitHashKey'", BEFORE),
    "explicit hash key '-1'": Case(bad_row(ehk="'-1'"), ROW3 + r", column 'explicitHashKey'", BEFORE),
    "explicit hash key 2^128": Case(bad_row(ehk=f"'{2**128}'"), ROW3 + r", column 'explicitHashKey'", BEFORE),
    "unknown stream": Case(
        lambda spark, ep, stream: spark_kpl.write(plain_rows(spark, 10), "no-such-stream",
                                                  partition_key="partitionKey", **SHORT_TTL, **ep.kpl_options()),
        r"(?s)stream 'no-such-stream'.*ResourceNotFoundException"),
    "stream deleted mid-job": Case(stream_deleted_mid_job, r"(?s)stream '{stream}'.*ResourceNotFoundException"),
    "wrong credentials: rejected by Kinesis": Case(
        kpl_write(plain_rows, awsAccessKeyId="AKIDUNKNOWN", awsSecretAccessKey="x", **SHORT_TTL),
        r"stream '{stream}'.*UnrecognizedClientException: The security token included in the request is invalid\."),
    "wrong credentials: wrong secret": Case(
        kpl_write(plain_rows, awsAccessKeyId=LOOPBACK_AWS_ENV["AWS_ACCESS_KEY_ID"], awsSecretAccessKey="not-it",
                  **SHORT_TTL),
        r"stream '{stream}'.*InvalidSignatureException: The request signature we calculated does not match the "
        r"signature you provided\. Check your AWS Secret Access Key"),
    "wrong credentials: unknown awsProfile": Case(
        kpl_write(plain_rows, awsProfile="no-such-profile"), r"no profile 'no-such-profile'"),
    "wrong credentials: key id without secret": Case(
        kpl_write(plain_rows, awsAccessKeyId="AKIDEXAMPLE"), r"awsAccessKeyId|awsSecretAccessKey"),
    "unreachable endpoint (closed loopback port)": Case(
        unreachable_endpoint, r"(?s)describes stream '{stream}'.*Connection refused"),
    "unknown option": Case(kpl_write(plain_rows, RecordMaxBuferedTime="100"), r"option 'RecordMaxBuferedTime'"),
    "bad KPL property value": Case(kpl_write(plain_rows, RecordTtl="10"),
                                   r"Invalid value for KPL property 'RecordTtl'"),
    "bad sink option value": Case(kpl_write(plain_rows, nullData="drop"),
                                  r"'nullData' \(spark.kpl.nullData\): expected one of fail, skip, got 'drop'"),
}


def wait_for_records(endpoint, stream, wanted, timeout=20.0):
    """What ``stream`` holds once it holds every record of ``wanted``, or after ``timeout``."""
    def held():
        return [r.data for r in endpoint.records(stream)] if stream in endpoint.streams else []

    poll_until(lambda: all(w in held() for w in wanted), timeout, every=0.2)
    return held()


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(spark, endpoint, ep_stream, name):
    case = CASES[name]
    started = time.monotonic()
    error: Optional[BaseException] = None
    try:
        case.write(spark, endpoint, ep_stream)
    except Exception as e:  # the outcome under test
        error = e
    elapsed = time.monotonic() - started
    assert elapsed < BOUND_SECONDS, f"{name}: took {elapsed:.0f} s"
    if case.error is None:
        assert error is None, f"{name}: expected success, got {error}"
    else:
        assert error is not None, f"{name}: the write reported success"
        pattern = case.error.replace("{stream}", ep_stream)
        import re
        assert re.search(pattern, str(error)), f"{name}: {pattern!r} not in: {str(error)[:2000]}"
    if case.accepted:
        held = wait_for_records(endpoint, ep_stream, case.accepted)
        missing = [w for w in case.accepted if w not in held]
        assert not missing, f"{name}: accepted before the failure but not in the stream: {missing}; holds {held}"
