"""Partition keys as FlinkKinesisProducer makes them (random, fixed, column, a default), explicit hash
keys from expressions, and the errors for options that contradict each other."""

from __future__ import annotations

import re

import pytest
from pyspark.sql import functions as F

import spark_kpl


def payloads(spark, count=40, partitions=2):
    return spark.range(count, numPartitions=partitions).select(F.format_string("row-%d", "id").alias("data"))


@pytest.mark.parametrize("aggregation", ["executor", "kpl"])
def test_random_keys_are_128_bit_hex_and_spread_over_shards(spark, kinesis, stream, aggregation):
    """One key per record on the per-record path; with executor aggregation one per aggregate, shared
    by every record inside, so that the aggregate routes as a single key (docs/aggregation.md)."""
    spark_kpl.write(payloads(spark, 200, partitions=40), stream, partitioner="random", aggregation=aggregation,
                    **kinesis.kpl_options())
    records = kinesis.read_records(stream)
    assert sorted(r.data for r in records) == sorted(f"row-{i}".encode() for i in range(200))
    assert all(re.fullmatch(r"[0-9a-f]{1,32}", r.partition_key) for r in records)
    keys_per_kinesis_record = {(r.shard_id, r.sequence_number): set() for r in records}
    for r in records:
        keys_per_kinesis_record[(r.shard_id, r.sequence_number)].add(r.partition_key)
    if aggregation == "kpl":
        assert len({r.partition_key for r in records}) == 200
    else:
        assert all(len(keys) == 1 for keys in keys_per_kinesis_record.values())
        assert len({r.partition_key for r in records}) == len(keys_per_kinesis_record) == 40
    assert len({r.shard_id for r in records}) == 2


def test_fixed_uses_the_spark_partition_id_as_key(spark, kinesis, stream):
    spark_kpl.write(payloads(spark), stream, partitioner="fixed", **kinesis.kpl_options())
    key_of = {r.data: r.partition_key for r in kinesis.read_records(stream)}
    # spark.range splits ids into contiguous halves: rows 0-19 in partition 0, 20-39 in partition 1.
    assert key_of == {f"row-{i}".encode(): str(i // 20) for i in range(40)}


def test_spark_kpl_write_keys_records_by_the_frame_s_own_partition_key_column(spark, kinesis, stream):
    """Without partition_key=, a partitionKey column of df (in any case, as the sink matches its columns)
    is the key, as with df.write.format("kpl"); partition_key= given wins over it."""
    rows = spark.range(6, numPartitions=2).select(F.format_string("row-%d", "id").alias("data"),
                                                  F.format_string("key-%d", "id").alias("PartitionKey"))
    spark_kpl.write(rows, stream, **kinesis.kpl_options())
    spark_kpl.write(rows, stream, partition_key=F.lit("given"), **kinesis.kpl_options())
    keys = sorted((r.data, r.partition_key) for r in kinesis.read_records(stream))
    assert keys == sorted([(f"row-{i}".encode(), f"key-{i}") for i in range(6)]
                          + [(f"row-{i}".encode(), "given") for i in range(6)])


def test_default_partition_alone_is_every_records_key(spark, kinesis, stream):
    spark_kpl.write(payloads(spark), stream, defaultPartition="all-here", **kinesis.kpl_options())
    assert {r.partition_key for r in kinesis.read_records(stream)} == {"all-here"}


def test_key_expression_with_default_partition_for_null_keys(spark, kinesis, stream):
    rows = spark.range(10, numPartitions=1)
    spark_kpl.write(rows, stream, data=F.format_string("row-%d", "id"),
                    partition_key=F.when(F.col("id") < 5, F.format_string("user-%d", F.col("id") % 2)),
                    defaultPartition="anonymous", **kinesis.kpl_options())
    key_of = {r.data: r.partition_key for r in kinesis.read_records(stream)}
    assert key_of == {f"row-{i}".encode(): f"user-{i % 2}" if i < 5 else "anonymous" for i in range(10)}


def test_explicit_hash_key_expression_routes_to_the_owning_shard(spark, kinesis, stream):
    rows = spark.range(20, numPartitions=1)
    spark_kpl.write(rows, stream, data=F.format_string("row-%d", "id"), partition_key=F.lit("same"),
                    explicit_hash_key=F.when(F.col("id") < 10, F.lit("0")).otherwise(F.lit(str(2**128 - 1))),
                    **kinesis.kpl_options())
    shard_of = {r.data: r.shard_id for r in kinesis.read_records(stream)}
    low = {shard_of[f"row-{i}".encode()] for i in range(10)}
    high = {shard_of[f"row-{i}".encode()] for i in range(10, 20)}
    assert len(low) == len(high) == 1 and low != high


@pytest.mark.parametrize("options, columns, message", [
    ({"partitioner": "column"}, {}, "partitioner=column needs a 'partitionKey' column"),
    ({"partitioner": "fixed"}, {"partition_key": "data"}, "partitioner=fixed makes its own keys"),
    ({"partitioner": "random", "defaultPartition": "k"}, {}, "'defaultPartition' would be ignored"),
    ({"defaultPartition": "x" * 257}, {}, r"'defaultPartition' \(spark.kpl.defaultPartition\): partition key must "
                                          r"have 1 to 256 UTF-16 code units \(the KPL's count: an emoji takes 2\), "
                                          r"has 257"),
    ({"partitioner": "hash"}, {}, r"'partitioner' \(spark.kpl.partitioner\): expected one of random, fixed, column"),
])
def test_contradictory_or_bad_partitioning_is_an_error(spark, kinesis, stream, options, columns, message):
    with pytest.raises(spark_kpl.WriteRefused, match=message):
        spark_kpl.write(payloads(spark, 1, 1), stream, **columns, **options, **kinesis.kpl_options())
