"""spark_kpl_bench.payload_units on Kinesis records built here (aggregates by aws-kinesis-agg, in the KPL's
format): no Spark, no JVM."""

from __future__ import annotations

from typing import List

from aws_kinesis_agg.aggregator import AggRecord

from spark_kpl_bench.payload_units import ON_DEMAND_UNIT, PROVISIONED_UNIT, PayloadUnits, payload_units
from spark_kpl_testing.records import KinesisRecord

ROW = b"r" * 98  # with a key of 2 bytes, 100 B a row


def plain(shard: str, key: str, data: bytes, number: int = 0) -> KinesisRecord:
    return KinesisRecord(shard, str(number), key, data)


def aggregate(shard: str, keys: List[str], data: bytes = ROW) -> KinesisRecord:
    agg = AggRecord()
    for key in keys:
        assert agg.add_user_record(key, data)
    partition_key, _, contents = agg.get_contents()
    return KinesisRecord(shard, "1", partition_key, contents)


def test_one_full_aggregate_costs_the_fewest_units() -> None:
    record = aggregate("shard-0", [f"k{i % 10}" for i in range(200)])  # 20,000 B of rows

    units = payload_units([record])

    assert (units.writes, units.kinesis_records, units.rows, units.shards) == (1, 1, 200, 1)
    assert units.row_bytes == 200 * 100
    assert units.kinesis_bytes == record.size > units.row_bytes  # the aggregate's framing travels too
    assert (units.units, units.fewest_units, units.efficiency) == (1, 1, 1.0)
    assert units.on_demand_units == -(-record.size // ON_DEMAND_UNIT)
    assert units.fewest_on_demand_units == -(-20_000 // ON_DEMAND_UNIT) == 20
    assert units.rows_per_kinesis_record == 200


def test_rows_alone_cost_a_unit_each() -> None:
    records = [plain("shard-0", f"k{i}", ROW, i) for i in range(10)]

    units = payload_units(records)

    assert (units.kinesis_records, units.rows, units.row_bytes) == (10, 10, 1000)
    assert (units.units, units.on_demand_units) == (10, 10)  # 100 B is one unit of each kind
    assert (units.fewest_units, units.fewest_on_demand_units) == (1, 1)
    assert units.efficiency == 0.1
    assert units.per_million_rows(units.units) == 1e6


def test_the_fewest_are_counted_per_shard_that_took_rows() -> None:
    records = [aggregate(f"shard-{i}", ["a1", "b2"]) for i in range(3)]

    units = payload_units(records)

    assert (units.shards, units.units, units.fewest_units, units.efficiency) == (3, 3, 3, 1.0)


def test_a_record_over_a_unit_by_a_byte_costs_two() -> None:
    exact = plain("shard-0", "k", b"x" * (PROVISIONED_UNIT - 1))
    over = plain("shard-1", "k", b"x" * PROVISIONED_UNIT)

    assert payload_units([exact]).units == 1
    assert payload_units([over]).units == 2
    assert payload_units([over]).on_demand_units == 26  # 25 KiB and a byte: 26 units of 1 KiB


def test_writes_add_up_and_nothing_counts_nothing() -> None:
    first = payload_units([aggregate("shard-0", ["a1"])])
    second = payload_units([plain("shard-0", "b2", ROW), plain("shard-1", "c3", ROW)])

    both = first + second

    assert (both.writes, both.kinesis_records, both.rows, both.shards) == (2, 3, 3, 3)
    assert (both.units, both.fewest_units) == (3, 3)
    assert payload_units([]) == PayloadUnits()
    assert PayloadUnits().efficiency == 0.0
    assert PayloadUnits.from_dict(both.as_dict()) == both
