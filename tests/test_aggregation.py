"""Executor-side aggregation (``aggregation=executor``, docs/aggregation.md) end to end: the
sink's own aggregates through the real KPL into the project's endpoint, read back de-aggregated."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from typing import Dict, Iterator, List

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl.testing.endpoint import KinesisEndpoint


def _lister(spark, endpoint: KinesisEndpoint):
    jvm = spark.sparkContext._jvm
    config = jvm.sparkkpl.config.WriteConfig.resolve({}, dict(endpoint.kpl_options()))
    return jvm.sparkkpl.aggregation.ShardLister(config)


def _ranges(shard_map) -> List[Dict[str, str]]:
    return [{"ShardId": s.id(), "StartingHashKey": s.start().toString(), "EndingHashKey": s.end().toString()}
            for s in shard_map.shards()]


def test_the_shard_map_is_listed_from_the_daemons_endpoint_every_page(spark, endpoint: KinesisEndpoint) -> None:
    """1,001 shards take two ListShards pages of 1,000: the second is asked for by NextToken alone,
    as Kinesis requires, with the KPL's endpoint, port, region and certificate settings."""
    endpoint.create_stream("agg-many-shards", shards=1001)
    try:
        lister = _lister(spark, endpoint)
        try:
            listed = _ranges(lister.list("agg-many-shards"))
        finally:
            lister.close()
        sink_pages = endpoint.requests("ListShards")[-2:]
        expected = [{"ShardId": s["ShardId"], **s["HashKeyRange"]}
                    for page in endpoint.client().get_paginator("list_shards").paginate(
                        StreamName="agg-many-shards") for s in page["Shards"]]
    finally:
        endpoint.delete_stream("agg-many-shards")
    assert len(listed) == 1001
    assert listed == expected
    assert sink_pages[0]["ShardFilter"] == {"Type": "AT_LATEST"} and sink_pages[0]["MaxResults"] == 1000
    assert set(sink_pages[1]) == {"NextToken", "MaxResults"}


def test_listing_an_unknown_stream_names_it_and_kinesis_error(spark, endpoint: KinesisEndpoint) -> None:
    lister = _lister(spark, endpoint)
    try:
        with pytest.raises(Exception) as failure:
            lister.list("agg-no-such-stream")
    finally:
        lister.close()
    assert "agg-no-such-stream" in str(failure.value)
    assert "ResourceNotFoundException" in str(failure.value)


def _hash_key(record) -> int:
    if record.explicit_hash_key is not None:
        return int(record.explicit_hash_key)
    return int.from_bytes(hashlib.md5(record.partition_key.encode("utf-8")).digest(), "big")


def _shard_ranges(endpoint: KinesisEndpoint, stream: str) -> Dict[str, range]:
    shards = endpoint.client().list_shards(StreamName=stream)["Shards"]
    return {s["ShardId"]: range(int(s["HashKeyRange"]["StartingHashKey"]),
                                int(s["HashKeyRange"]["EndingHashKey"]) + 1) for s in shards}


@pytest.fixture
def four_shards(endpoint: KinesisEndpoint) -> Iterator[str]:
    name = f"agg{next(_names)}"
    endpoint.create_stream(name, shards=4)
    yield name
    endpoint.delete_stream(name)


_names = itertools.count()
ROWS = 40_000
DATA_BYTES = 100


def test_every_row_arrives_once_inside_the_range_of_the_shard_that_stored_it(
        spark, endpoint: KinesisEndpoint, four_shards: str) -> None:
    """Keys from a column: the tasks aggregate per target shard, from the stream's shard map, so a KCL
    consumer filtering by hash range (as it does) keeps every sub-record; the KPL sends each
    aggregate as it is, never nesting them, and each Kinesis record carries about as many rows as
    51,200 bytes hold."""
    df = spark.range(ROWS, numPartitions=2).select(
        F.format_string("user-%d", F.col("id") % 1000).alias("key"),
        F.format_string(f"%0{DATA_BYTES}d", F.col("id")).alias("payload"))

    result = spark_kpl.write(df, four_shards, data="payload", partition_key="key", aggregation="executor",
                             **endpoint.kpl_options())

    records = endpoint.records(four_shards)
    assert result.records_written == ROWS and result.records_failed == 0
    assert Counter((r.partition_key, int(r.data)) for r in records) == Counter(
        (f"user-{i % 1000}", i) for i in range(ROWS))
    ranges = _shard_ranges(endpoint, four_shards)
    outside = [r for r in records if _hash_key(r) not in ranges[r.shard_id]]
    assert outside == []
    assert {r.shard_id for r in records} == set(ranges)
    kinesis_records = len({r.sequence_number for r in records})
    per_kinesis_record = ROWS / kinesis_records
    # A sub-record of 100 B costs about 108 B in the aggregate (index, length, tags), plus its key
    # once per aggregate: the size limit allows about 470 per Kinesis record.
    allowed = (51_200 - 20) // (DATA_BYTES + 8)
    print(f"user records per Kinesis record: {per_kinesis_record:.0f} ({kinesis_records} Kinesis records; "
          f"the size limit allows about {allowed})")
    assert per_kinesis_record >= 0.8 * allowed


def test_sink_chosen_keys_need_no_shard_map(spark, endpoint: KinesisEndpoint, four_shards: str) -> None:
    """partitioner=random: every row of an aggregate takes the aggregate's random key, so the
    aggregate routes as one key and no ListShards is needed; aggregates spread over the shards."""
    listed_before = endpoint.calls.get("ListShards", 0)
    df = spark.range(ROWS, numPartitions=2).select(F.format_string(f"%0{DATA_BYTES}d", F.col("id")).alias("payload"))

    result = spark_kpl.write(df, four_shards, data="payload", aggregation="executor", **endpoint.kpl_options())

    records = endpoint.records(four_shards)
    assert result.records_written == ROWS
    assert sorted(int(r.data) for r in records) == list(range(ROWS))
    ranges = _shard_ranges(endpoint, four_shards)
    assert [r for r in records if _hash_key(r) not in ranges[r.shard_id]] == []
    assert len({r.shard_id for r in records}) > 1
    # A key of its own for each Kinesis record, shared by every row inside it.
    assert len({r.partition_key for r in records}) == len({r.sequence_number for r in records})
    by_aggregate: Dict[str, set] = {}
    for r in records:
        by_aggregate.setdefault(r.sequence_number, set()).add(r.partition_key)
    assert all(len(keys) == 1 for keys in by_aggregate.values())
    # Only the KPL daemon's own ListShards (one per producer and stream), none from the tasks.
    sink_lists = [b for b in endpoint.requests("ListShards") if b.get("StreamName") == four_shards]
    assert endpoint.calls.get("ListShards", 0) - listed_before == len(sink_lists) <= 2
