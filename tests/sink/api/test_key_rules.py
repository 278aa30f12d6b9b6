"""Kinesis's rules for a record's keys and size, as the endpoint answers them and as the sink keeps
them on every path (a record alone, or inside an executor-built aggregate): the partition key's
length counted as the KPL counts it, explicit hash keys in Kinesis's canonical form, and an
aggregate plus its own partition key within the record limit."""

from __future__ import annotations

import re

import pytest
from pyspark.sql import functions as F

import spark_kpl

#: The sink's Kinesis side: no Spark line changes it, so scripts/test.sh runs it on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line

MIB = 1 << 20
EHK_PATTERN = r"0\|\(\[1-9\]\\d\{0,38\}\)"
#: U+1F600: one character, two UTF-16 code units, four UTF-8 bytes.
EMOJI = "\U0001F600"


# -- the endpoint, by boto3: what a whole PutRecords call does with one bad entry -------------------


def _over_the_maximum(member: str, limit: int) -> str:
    """What Kinesis answers for a record over the stream's maximum (KPL issue #680, a 1 MiB stream)."""
    return (rf"ValidationException.*1 validation error detected: Value at '{re.escape(member)}' failed to "
            rf"satisfy constraint: Member must have length less than or equal to {limit}$")


def _raise_maximum(client, stream: str, kib: int) -> None:
    arn = client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    client.update_max_record_size(StreamARN=arn, MaxRecordSizeInKiB=kib)


def test_endpoint_refuses_the_whole_call_for_a_record_over_the_streams_maximum(endpoint, ep_stream):
    """Kinesis counts data plus partition key against the stream's maximum record size (1 MiB unless
    raised), and a per-record result carries only throttling or InternalFailure: an entry over it fails
    the whole call, nothing stored. Raised with UpdateMaxRecordSize, the same entry is taken."""
    client = endpoint.client()
    fits = {"Data": b"x" * (MIB - 2), "PartitionKey": "ab"}
    over = {"Data": b"x" * (MIB - 1), "PartitionKey": "ab"}
    with pytest.raises(client.exceptions.ClientError, match=_over_the_maximum("records.2.member.data", MIB)):
        client.put_records(StreamName=ep_stream, Records=[fits, over])
    with pytest.raises(client.exceptions.ClientError, match=_over_the_maximum("data", MIB)):
        client.put_record(StreamName=ep_stream, **over)
    assert endpoint.records(ep_stream) == []
    assert client.put_records(StreamName=ep_stream, Records=[fits])["FailedRecordCount"] == 0

    _raise_maximum(client, ep_stream, 1025)
    summary = client.describe_stream_summary(StreamName=ep_stream)["StreamDescriptionSummary"]
    assert summary["MaxRecordSizeInKiB"] == 1025
    assert client.put_records(StreamName=ep_stream, Records=[over])["FailedRecordCount"] == 0
    client.put_record(StreamName=ep_stream, **over)
    beyond = {"Data": b"x" * (1025 * 1024 - 1), "PartitionKey": "ab"}
    with pytest.raises(client.exceptions.ClientError, match=_over_the_maximum("records.1.member.data", 1025 * 1024)):
        client.put_records(StreamName=ep_stream, Records=[beyond])
    assert len(endpoint.records(ep_stream)) == 3


def test_endpoint_takes_10_mib_per_record_and_per_put_records_call_on_a_raised_stream(endpoint, ep_stream):
    """At 10240 KiB a record of 10 MiB (data plus key) is taken; a PutRecords call takes 10 MiB of
    records in all, partition keys included, and more fails the whole call."""
    client = endpoint.client()
    _raise_maximum(client, ep_stream, 10240)
    whole = {"Data": b"w" * (10 * MIB - 2), "PartitionKey": "ab"}
    assert client.put_records(StreamName=ep_stream, Records=[whole])["FailedRecordCount"] == 0
    half = {"Data": b"h" * (5 * MIB - 2), "PartitionKey": "ab"}
    assert client.put_records(StreamName=ep_stream, Records=[half, half])["FailedRecordCount"] == 0
    with pytest.raises(client.exceptions.InvalidArgumentException, match="^.*Records size exceeds 10 MB limit$"):
        client.put_records(StreamName=ep_stream, Records=[half, half, {"Data": b"1", "PartitionKey": "k"}])
    with pytest.raises(client.exceptions.ClientError, match=_over_the_maximum("data", 10 * MIB)):
        client.put_record(StreamName=ep_stream, Data=whole["Data"] + b"!", PartitionKey="ab")
    assert sorted(len(r.data) for r in endpoint.records(ep_stream)) == [5 * MIB - 2, 5 * MIB - 2, 10 * MIB - 2]


def test_endpoint_sets_a_streams_maximum_record_size_as_kinesis_does(endpoint):
    """UpdateMaxRecordSize (by StreamARN, as its input has no StreamName) and CreateStream take 1024 to
    10240 KiB, refusing others with ValidationException; DescribeStreamSummary reports it."""
    client = endpoint.client()
    client.create_stream(StreamName="maxsize-created", ShardCount=1, MaxRecordSizeInKiB=4096)
    try:
        summary = client.describe_stream_summary(StreamName="maxsize-created")["StreamDescriptionSummary"]
        assert summary["MaxRecordSizeInKiB"] == 4096
        # (boto3 itself refuses a value under the model's minimum, 1024, before sending it)
        with pytest.raises(client.exceptions.ClientError, match="ValidationException.*got 10241"):
            client.update_max_record_size(StreamARN=summary["StreamARN"], MaxRecordSizeInKiB=10241)
        with pytest.raises(client.exceptions.ClientError, match="ValidationException.*got 20480"):
            client.create_stream(StreamName="maxsize-refused", ShardCount=1, MaxRecordSizeInKiB=20480)
        assert "maxsize-refused" not in endpoint.streams
    finally:
        endpoint.delete_stream("maxsize-created")


@pytest.mark.parametrize("key", ["+5", "007", "00", " 5", "5 ", "1" * 40])
def test_endpoint_refuses_the_whole_call_for_an_explicit_hash_key_off_the_pattern(endpoint, ep_stream, key):
    client = endpoint.client()
    good = {"Data": b"good", "PartitionKey": "k", "ExplicitHashKey": "5"}
    bad = {"Data": b"bad", "PartitionKey": "k", "ExplicitHashKey": key}
    with pytest.raises(client.exceptions.ClientError,
                       match=rf"ValidationException.*1 validation error detected: Value '{re.escape(key)}' at "
                             rf"'records.2.member.explicitHashKey' failed to satisfy constraint: Member must "
                             rf"satisfy regular expression pattern: {EHK_PATTERN}"):
        client.put_records(StreamName=ep_stream, Records=[good, bad])
    with pytest.raises(client.exceptions.ClientError, match=r"ValidationException.*at 'explicitHashKey'"):
        client.put_record(StreamName=ep_stream, **bad)
    assert endpoint.records(ep_stream) == []


def test_endpoint_takes_canonical_hash_keys_to_2_128_minus_1_and_refuses_beyond(endpoint, ep_stream):
    client = endpoint.client()
    keys = ["0", "5", str(2**128 - 1)]
    answer = client.put_records(StreamName=ep_stream, Records=[{"Data": b"d", "PartitionKey": "k",
                                                                "ExplicitHashKey": k} for k in keys])
    assert answer["FailedRecordCount"] == 0
    with pytest.raises(client.exceptions.InvalidArgumentException, match=str(2**128)):
        client.put_records(StreamName=ep_stream, Records=[{"Data": b"d", "PartitionKey": "k",
                                                           "ExplicitHashKey": str(2**128)}])


# -- the sink ---------------------------------------------------------------------------------


def varint_bytes(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def aggregate_bytes(sizes, key=b"k"):
    """The size of the KPL aggregate of records of these data sizes under one partition key (no
    explicit hash key), as the KPL counts it: magic, protobuf, MD5."""
    key_table = 1 + varint_bytes(len(key)) + len(key)
    records = 0
    for size in sizes:
        body = 2 + 1 + varint_bytes(size) + size  # partition key index 0, then the data
        records += 1 + varint_bytes(body) + body
    return 4 + key_table + records + 16


def rows_making_an_aggregate_of(spark, total):
    """Two rows with the key 'k' whose aggregate has exactly ``total`` bytes."""
    second = total - aggregate_bytes([1000]) - 6  # first guess; the varints settle it below
    while aggregate_bytes([1000, second]) < total:
        second += 1
    while aggregate_bytes([1000, second]) > total:
        second -= 1
    assert aggregate_bytes([1000, second]) == total
    return spark.range(2, numPartitions=1).select(
        F.expr(f"CASE WHEN id = 0 THEN repeat('a', 1000) ELSE repeat('b', {second}) END").alias("data"),
        F.lit("k").alias("partitionKey")), second


def stored_kinesis_records(endpoint, stream):
    """(data bytes, partition key) of each Kinesis record as stored, aggregates not opened."""
    client = endpoint.client()
    out = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard["ShardId"],
                                             ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        out.extend((r["Data"], r["PartitionKey"]) for r in client.get_records(ShardIterator=iterator)["Records"])
    return out


def test_an_aggregate_plus_its_partition_key_stays_within_the_record_limit(spark, endpoint, ep_stream):
    """An executor aggregate travels as one Kinesis record under the key 'a': with the KPL's largest
    AggregationMaxSize (1 MiB) a full aggregate plus that byte is over Kinesis's 1 MiB, so the
    option is refused before any row is read; one byte less fills the record exactly, and arrives."""
    rows, second = rows_making_an_aggregate_of(spark, MIB)
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"'AggregationMaxSize' \(1048576\).*at most 1048575.*partition key 'a'"):
        spark_kpl.write(rows, ep_stream, partition_key="partitionKey", AggregationMaxSize=str(MIB),
                        RecordTtl="3000", **endpoint.kpl_options())
    rows, second = rows_making_an_aggregate_of(spark, MIB - 1)
    result = spark_kpl.write(rows, ep_stream, partition_key="partitionKey", AggregationMaxSize=str(MIB - 1),
                             **endpoint.kpl_options())
    assert (result.records_written, result.records_failed) == (2, 0)
    assert sorted(len(r.data) for r in endpoint.records(ep_stream)) == [1000, second]
    stored = stored_kinesis_records(endpoint, ep_stream)
    assert [(len(data), key) for data, key in stored] == [(MIB - 1, "a")]  # one aggregate, 1 MiB with its key


@pytest.mark.parametrize("rows", [1, 2000], ids=["alone", "aggregated"])
def test_a_partition_key_over_256_utf16_units_is_refused_naming_column_and_length(spark, endpoint, ep_stream,
                                                                                  rows):
    """200 emoji: 200 characters, 400 UTF-16 units, over the KPL's String.length() <= 256. Refused
    before the KPL sees it, whether the row would travel alone or inside an aggregate."""
    df = spark.range(rows, numPartitions=1).select(F.format_string("row-%d", "id").alias("data"),
                                                   F.lit(EMOJI * 200).alias("partitionKey"))
    with pytest.raises(spark_kpl.RecordsNotDelivered,
                       match=r"Row 1 of Spark partition 0, column 'partitionKey': partition key must have 1 to "
                             r"256 UTF-16 code units.*has 400 \(200 characters\)"):
        spark_kpl.write(df, ep_stream, partition_key="partitionKey", **endpoint.kpl_options())
    assert endpoint.records(ep_stream) == []


@pytest.mark.parametrize("rows", [1, 2000], ids=["alone", "aggregated"])
def test_a_partition_key_of_256_utf16_units_arrives(spark, endpoint, ep_stream, rows):
    key = EMOJI * 128
    df = spark.range(rows, numPartitions=1).select(F.format_string("row-%d", "id").alias("data"),
                                                   F.lit(key).alias("partitionKey"))
    result = spark_kpl.write(df, ep_stream, partition_key="partitionKey", **endpoint.kpl_options())
    assert (result.records_written, result.records_failed) == (rows, 0)
    records = endpoint.records(ep_stream)
    assert sorted(r.data for r in records) == sorted(f"row-{i}".encode() for i in range(rows))
    assert {r.partition_key for r in records} == {key}


#: What BigInteger parses in 0 to 2^128-1, each with its canonical form.
HASH_KEYS = {"+5": "5", "007": "7", "+0": "0", "000": "0", "0" * 45 + "9": "9", str(2**127): str(2**127),
             "+" + str(2**128 - 1): str(2**128 - 1)}


@pytest.mark.parametrize("aggregation", ["executor", "kpl"])
def test_explicit_hash_keys_are_sent_in_canonical_form_and_the_daemon_takes_each(spark, endpoint, ep_stream,
                                                                                aggregation):
    """Every form the sink accepts reaches Kinesis as the canonical decimal Kinesis's pattern asks
    for, inside aggregates too, in the shard that owns it; the endpoint refuses none of the calls,
    so the daemon neither retries nor fails any."""
    endpoint.reset_counters()
    keys = list(HASH_KEYS)
    df = spark.range(len(keys) * 50, numPartitions=1).select(
        F.format_string("row-%d", "id").alias("data"), F.lit("k").alias("partitionKey"),
        F.element_at(F.array(*[F.lit(k) for k in keys]), (F.col("id") % len(keys) + 1).cast("int"))
        .alias("explicitHashKey"))
    result = spark_kpl.write(df, ep_stream, partition_key="partitionKey", explicit_hash_key="explicitHashKey",
                             aggregation=aggregation, **endpoint.kpl_options())
    assert (result.records_written, result.records_failed) == (len(keys) * 50, 0)
    ranges = endpoint.hash_ranges(ep_stream)
    records = endpoint.records(ep_stream)
    assert sorted(r.data for r in records) == sorted(f"row-{i}".encode() for i in range(len(keys) * 50))
    for r in records:
        canonical = HASH_KEYS[keys[int(r.data[4:]) % len(keys)]]
        assert r.explicit_hash_key in (canonical, None), r  # None: a record stored alone, not aggregated
        start, end = ranges[r.shard_id]
        assert start <= int(canonical) <= end
    # A daemon just started may send its first ListShards before its credentials arrive by pipe
    # (answered MissingAuthenticationTokenException, listed again a second later): no key's doing.
    assert set(endpoint.call_errors) <= {"MissingAuthenticationTokenException"}, endpoint.call_errors
    assert endpoint.record_errors == {}
