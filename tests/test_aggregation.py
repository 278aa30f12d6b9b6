"""Executor-side aggregation (``aggregation=executor``, docs/aggregation.md) end to end: the
sink's own aggregates through the real KPL into the project's endpoint, read back de-aggregated."""

from __future__ import annotations

from typing import Dict, List

import pytest

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
