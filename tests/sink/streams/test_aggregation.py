"""Executor-side aggregation (``aggregation=executor``, docs/aggregation.md) end to end: the
sink's own aggregates through the real KPL into the project's endpoint, read back de-aggregated, as a
KCL consumer sees them (after a split or merge mid-write too) and as awslabs' aws-kinesis-agg does."""

from __future__ import annotations

import base64
import itertools
import math
from collections import Counter
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Set, Tuple

import pytest
from aws_kinesis_agg.deaggregator import deaggregate_records
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl import dedup
from spark_kpl_testing.delivery import (
    HashRanges,
    compare,
    kcl_view,
    misplaced_aggregates,
    outside_its_shard,
    read_by_kcl,
    repeated_kinesis_records,
    without_repeated_kinesis_records,
    write_in_background,
)
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.polling import wait_for
from spark_kpl_testing.records import Record

#: The sink's aggregates as Kinesis consumers read them: no Spark line changes them, so
#: scripts/test.sh runs it on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line


@contextmanager
def _lister(spark, endpoint: KinesisEndpoint):
    """A client for the endpoint's configuration, as a producer's shard maps and the driver open one."""
    jvm = spark.sparkContext._jvm
    spec = jvm.sparkkpl.config.WriteConfig.read({}, dict(endpoint.kpl_options())).options().producer()
    api = jvm.sparkkpl.controlplane.StreamApi.open(spec)
    try:
        yield api
    finally:
        api.close()


def _ranges(shard_map) -> List[Dict[str, str]]:
    return [{"ShardId": s.id(), "StartingHashKey": s.start().toString(), "EndingHashKey": s.end().toString()}
            for s in shard_map.shards()]


def test_the_shard_map_is_listed_from_the_daemons_endpoint_every_page(spark, endpoint: KinesisEndpoint) -> None:
    """1,001 shards take two ListShards pages of 1,000: the second is asked for by NextToken alone,
    as Kinesis requires, with the KPL's endpoint, port, region and certificate settings."""
    endpoint.create_stream("agg-many-shards", shards=1001)
    try:
        with _lister(spark, endpoint) as lister:
            listed = _ranges(lister.listShards("agg-many-shards", None))
        sink_pages = endpoint.requests("ListShards")[-2:]
        expected = [{"ShardId": s["ShardId"], **s["HashKeyRange"]} for s in _boto3_shards("agg-many-shards", endpoint)]
    finally:
        endpoint.delete_stream("agg-many-shards")
    assert len(listed) == 1001
    assert listed == expected
    assert sink_pages[0]["ShardFilter"] == {"Type": "AT_LATEST"} and sink_pages[0]["MaxResults"] == 1000
    assert set(sink_pages[1]) == {"NextToken", "MaxResults"}


def _boto3_shards(stream: str, endpoint: KinesisEndpoint) -> Iterator[dict]:
    """Every shard as boto3 lists them, page by page. Not by boto3's paginator: it sends the StreamName
    again beside each NextToken, which Kinesis refuses."""
    page = endpoint.client().list_shards(StreamName=stream)
    yield from page["Shards"]
    while page.get("NextToken"):
        page = endpoint.client().list_shards(NextToken=page["NextToken"])
        yield from page["Shards"]


def test_listing_an_unknown_stream_names_it_and_kinesis_error(spark, endpoint: KinesisEndpoint) -> None:
    with _lister(spark, endpoint) as lister, pytest.raises(Exception) as failure:
        lister.listShards("agg-no-such-stream", None)
    assert "agg-no-such-stream" in str(failure.value)
    assert "ResourceNotFoundException" in str(failure.value)


@pytest.fixture
def four_shards(endpoint: KinesisEndpoint) -> Iterator[str]:
    name = f"agg{next(_names)}"
    endpoint.create_stream(name, shards=4)
    yield name
    endpoint.delete_stream(name)


_names = itertools.count()
ROWS = 40_000
DATA_BYTES = 100
KEYS = 1000


def _keyed_rows(spark, count: int, pause_every: int = 0, pause_ms: int = 0):
    """``count`` rows in 2 Spark partitions: ``data`` the row's number in DATA_BYTES digits,
    ``partitionKey`` one of KEYS user keys. With ``pause_every``, every such row sleeps ``pause_ms`` in
    the task, so the write lasts seconds: Thread.sleep by reflection, whose answer ('null') is cut to ''
    and appended to the data, so that Spark cannot leave the call out."""
    data = F.format_string(f"%0{DATA_BYTES}d", F.col("id"))
    if pause_every:
        sleep = f"reflect('java.lang.Thread', 'sleep', cast(if(id % {pause_every} = 0, {pause_ms}, 0) as bigint))"
        data = F.concat(data, F.substring(F.expr(sleep), 1, 0))
    return spark.range(count, numPartitions=2).select(
        data.alias("data"), F.format_string("user-%d", F.col("id") % KEYS).alias("partitionKey"))


def _expected(count: int) -> Dict[bytes, str]:
    """What :func:`_keyed_rows` writes: data -> partition key."""
    return {f"%0{DATA_BYTES}d".encode() % i: f"user-{i % KEYS}" for i in range(count)}


#: Caps a write of ROWS never reaches, not even the starting budget of a lane (1/1024 of them).
OUT_OF_REACH = {"queueLimit": str(10**9), "queueLimitBytes": str(2**40)}


@pytest.mark.parametrize("queue_limit", [None, 1000], ids=["no backpressure", "queueLimit=1000"])
def test_every_row_arrives_once_inside_the_range_of_the_shard_that_stored_it(
        spark, endpoint: KinesisEndpoint, four_shards: str, queue_limit) -> None:
    """Keys from a column: the tasks aggregate per target shard, from the stream's shard map, so a KCL
    consumer filtering by hash range (as it does) keeps every sub-record; the KPL sends each
    aggregate as it is, never nesting them, and each Kinesis record carries about as many rows as
    51,200 bytes hold. A queue limit of about two aggregates makes the tasks wait for room all the
    time: waiting must not cut their open aggregates short. RecordMaxBufferedTime=1000: an aggregate
    open that long is sealed however full (docs/aggregation.md), and on a loaded machine a task's rows
    for one shard can take longer than the default 100 ms to fill one."""
    result = spark_kpl.write(_keyed_rows(spark, ROWS), four_shards, partition_key="partitionKey",
                             aggregation="executor", RecordMaxBufferedTime=1000,
                             **({"queueLimit": queue_limit} if queue_limit else OUT_OF_REACH),
                             **endpoint.kpl_options())

    records = endpoint.records(four_shards)
    assert result.records_written == ROWS and result.records_failed == 0
    report = compare(_expected(ROWS), ((r.data, r.partition_key) for r in records))
    assert report.exactly_once, report.summary()
    ranges = endpoint.hash_ranges(four_shards)
    outside = [r for r in records if outside_its_shard(r, ranges)]
    assert outside == []
    assert {r.shard_id for r in records} == set(ranges)
    kinesis_records = len({r.sequence_number for r in records})
    per_kinesis_record = ROWS / kinesis_records
    # A sub-record of 100 B costs about 108 B in the aggregate (index, length, tags), plus its key
    # once per aggregate: the size limit allows about 470 per Kinesis record.
    allowed = (51_200 - 20) // (DATA_BYTES + 8)
    print(f"user records per Kinesis record: {per_kinesis_record:.0f} ({kinesis_records} Kinesis records; "
          f"the size limit allows about {allowed})")
    assert per_kinesis_record >= 0.9 * allowed
    assert (result.backpressure_cycles > 0) == (queue_limit is not None), result


def test_sink_chosen_keys_need_no_shard_map(spark, endpoint: KinesisEndpoint, four_shards: str) -> None:
    """partitioner=random: every row of an aggregate takes the aggregate's random key, so the
    aggregate routes as one key and no ListShards is needed; aggregates spread over the shards."""
    listed_before = endpoint.calls.get("ListShards", 0)
    df = spark.range(ROWS, numPartitions=2).select(F.format_string(f"%0{DATA_BYTES}d", F.col("id")).alias("payload"))

    result = spark_kpl.write(df, four_shards, data="payload", aggregation="executor", **endpoint.kpl_options())

    records = endpoint.records(four_shards)
    assert result.records_written == ROWS
    assert sorted(int(r.data) for r in records) == list(range(ROWS))
    ranges = endpoint.hash_ranges(four_shards)
    assert [r for r in records if outside_its_shard(r, ranges)] == []
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


# -- a reshard mid-write ------------------------------------------------------------------------

RESHARD_ROWS = 40_000
#: Every 100th row sleeps 15 ms: each task takes 3 s or more, so the tasks keep grouping rows for
#: seconds after the reshard, with aggregates open and in flight when it happens.
PAUSE_EVERY, PAUSE_MS = 100, 15
#: The copies of a row a reshard mid-write may store: its aggregate, the KPL's re-send of it, and the sink's.
MOST_COPIES = 3

Reshard = Callable[[KinesisEndpoint, str], None]


def _stored_per_shard(endpoint: KinesisEndpoint, stream: str) -> Counter:
    return Counter(r.shard_id for r in endpoint.records(stream))


def _split_the_busiest_shard(endpoint: KinesisEndpoint, stream: str) -> None:
    """At the middle of its hash range, as an operator adds capacity where the traffic is."""
    busiest = _stored_per_shard(endpoint, stream).most_common(1)[0][0]
    start, end = endpoint.hash_ranges(stream)[busiest]
    endpoint.split_shard(stream, busiest, (start + end + 1) // 2)


def _merge_the_busiest_neighbours(endpoint: KinesisEndpoint, stream: str) -> None:
    stored = _stored_per_shard(endpoint, stream)
    ranges = endpoint.hash_ranges(stream)
    by_range = sorted(ranges, key=lambda shard_id: ranges[shard_id][0])
    low, high = max(zip(by_range, by_range[1:]), key=lambda pair: stored[pair[0]] + stored[pair[1]])
    endpoint.merge_shards(stream, low, high)


def _task_and_row(record: Record) -> Tuple[int, int]:
    return dedup.record_id(record.data).partition, int(dedup.strip(record.data))


def _rows_grouped_by_a_stale_map(records: List[Record], ranges: HashRanges,
                                 children: Set[str]) -> List[Tuple[int, int]]:
    """The (task, row) pairs that a task put into a misplaced aggregate (one built for a shard that
    closed) AFTER it had grouped an earlier row of its own by the new shards. A task groups its rows
    in order, so a sink that lists the stream again once it notices the reshard has none: only what
    it had grouped before noticing can be misplaced. Rows in a child's in-range aggregates that were
    never misplaced are the ones the task grouped by the new shards."""
    misplaced = misplaced_aggregates(records, ranges)
    misplaced_rows = {_task_and_row(r) for r in records if (r.shard_id, r.sequence_number) in misplaced}
    first_grouped_anew: Dict[int, int] = {}
    for record in records:
        task, row = _task_and_row(record)
        if (record.shard_id in children and record.sub_sequence_number is not None
                and (record.shard_id, record.sequence_number) not in misplaced
                and (task, row) not in misplaced_rows):
            first_grouped_anew[task] = min(row, first_grouped_anew.get(task, row))
    assert first_grouped_anew, "no task grouped a row by the new shards: the sink never noticed the reshard"
    return sorted((task, row) for task, row in misplaced_rows if row > first_grouped_anew.get(task, math.inf))


def _write_through_a_reshard(spark, endpoint: KinesisEndpoint, stream: str, reshard: Reshard) -> None:
    """Keys from a column, aggregation=executor, recordId=prefix; ``reshard`` once a quarter of the rows
    are stored. A KCL consumer must get every row: any aggregate stored where it drops it must have
    been sent again, grouped by the new shards. Its only duplicates may be the KPL's own: when its
    shard map is stale (after a merge too) it re-sends a Kinesis record stored in an unexpected shard,
    byte for byte, so the KCL reads both copies where both lie inside the shard; their record ids
    make them detectable."""
    thread, outcome = write_in_background(
        spark, _keyed_rows(spark, RESHARD_ROWS, PAUSE_EVERY, PAUSE_MS), stream, aggregation="executor",
        recordId="prefix", **endpoint.kpl_options())
    shards_before = set(endpoint.hash_ranges(stream))
    stored_before = wait_for(lambda: (stored := len(endpoint.records(stream))) >= RESHARD_ROWS // 4 and stored,
                             60, "a quarter of the rows stored", every=0.1)
    reshard(endpoint, stream)
    thread.join(120)
    assert not thread.is_alive(), "the write did not end within 120 s"
    assert "error" not in outcome, outcome.get("error")
    result = outcome["result"]

    records = endpoint.records(stream)
    ranges = endpoint.hash_ranges(stream)
    children = set(ranges) - shards_before
    kcl = kcl_view(records, ranges)
    _print_counts(reshard.__name__, stored_before, records, kcl, misplaced_aggregates(records, ranges), result)

    assert result.records_written == RESHARD_ROWS and result.records_failed == 0
    stored_in = Counter(r.shard_id for r in records)
    assert stored_before < RESHARD_ROWS and all(stored_in[shard] for shard in children), (
        f"not mid-write: {stored_before} stored before the reshard; after it, per shard {stored_in}")
    every_copy = read_by_kcl(_expected(RESHARD_ROWS), records, ranges, data=dedup.strip)
    print(f"a KCL consumer, every copy: {every_copy.summary()}")
    assert every_copy.at_least_once, "a KCL consumer: " + every_copy.summary()
    for_kcl = compare(_expected(RESHARD_ROWS),
                      ((dedup.strip(r.data), r.partition_key) for r in without_repeated_kinesis_records(kcl)))
    assert for_kcl.exactly_once, "a KCL consumer, the KPL's byte-for-byte re-sends aside: " + for_kcl.summary()
    _assert_every_copy_is_detectable(records)
    _assert_duplicates_are_the_resends(records, result)
    stale = _rows_grouped_by_a_stale_map(records, ranges, children)
    assert not stale, f"{len(stale)} (task, row) grouped for a closed shard after the task had regrouped: {stale[:5]}"


def _print_counts(reshard: str, stored_before: int, records: List[Record], kcl: List[Record],
                  dropped: Set[Tuple[str, str]], result) -> None:
    rows = len({r.data for r in records})
    print(f"\n{reshard}: {stored_before} user records stored when it happened; in the end {len(records)} "
          f"stored in {len({(r.shard_id, r.sequence_number) for r in records})} Kinesis records "
          f"({repeated_kinesis_records(records)} of them repeats of another, byte for byte): {rows} distinct rows, "
          f"{len(records) - rows} duplicates; the KCL view drops {len(dropped)} aggregates holding "
          f"{len(records) - len(kcl)} user records and keeps {len(kcl)}; {result}")


def _assert_duplicates_are_the_resends(records: List[Record], result) -> None:
    """Every extra copy of a row is one of the two re-sends a reshard causes: the sink's (``records_resent``: the
    records of an aggregate stored where a record inside lies outside the storing shard, grouped again by the new
    shards) or the KPL's (a Kinesis record stored again byte for byte after "Wrong Shard"). So no row is stored more
    than :data:`MOST_COPIES` times: its aggregate, the KPL's copy of it, and the sink's re-send."""
    copies = Counter(dedup.strip(r.data) for r in records)
    duplicates = len(records) - len(copies)
    repeated_by_kpl = len(records) - len(without_repeated_kinesis_records(records))
    most = max(copies.values())
    print(f"duplicates {duplicates}: the sink re-sent {result.records_resent} rows, the KPL's repeated Kinesis records "
          f"hold {repeated_by_kpl}; rows stored twice {sum(1 for c in copies.values() if c == 2)}, three times "
          f"{sum(1 for c in copies.values() if c == 3)}, most copies of a row {most}")
    assert duplicates <= result.records_resent + repeated_by_kpl, (duplicates, result.records_resent, repeated_by_kpl)
    assert most <= MOST_COPIES, most


def _assert_every_copy_is_detectable(records: List[Record]) -> None:
    """With recordId=prefix every copy of a row carries the row's one id, and no two rows share an id:
    a consumer dropping ids it has seen drops exactly the extra copies."""
    ids_per_row: Dict[bytes, set] = {}
    for record in records:
        ids_per_row.setdefault(dedup.strip(record.data), set()).add(dedup.record_id(record.data))
    assert all(len(ids) == 1 for ids in ids_per_row.values()), "a copy carries an id of its own: not detectable"
    assert len(set().union(*ids_per_row.values())) == len(ids_per_row)


def test_a_split_mid_write_loses_nothing_for_a_kcl_consumer(spark, endpoint: KinesisEndpoint, four_shards: str) -> None:
    _write_through_a_reshard(spark, endpoint, four_shards, _split_the_busiest_shard)


def test_a_merge_mid_write_loses_nothing_for_a_kcl_consumer(spark, endpoint: KinesisEndpoint, four_shards: str) -> None:
    _write_through_a_reshard(spark, endpoint, four_shards, _merge_the_busiest_neighbours)


# -- a consumer library of AWS's own --------------------------------------------------------------


def _stored_kinesis_records(endpoint: KinesisEndpoint, stream: str) -> Iterator[dict]:
    """Every Kinesis record of the stream as GetRecords returns it: each shard from TRIM_HORIZON."""
    client = endpoint.client()
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard["ShardId"],
                                             ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = client.get_records(ShardIterator=iterator)
            yield from page["Records"]
            # An open shard always has a next iterator: its end is an empty page with nothing behind.
            iterator = page.get("NextShardIterator") if page["Records"] or page["MillisBehindLatest"] else None


def _as_lambda_delivers(record: dict) -> dict:
    """``deaggregate_records`` takes records as Lambda delivers them (base64 data, camelCase): boto3's
    shape it converts only in ``iter_deaggregate_records(..., data_format="Boto3")``, and a record
    without ``kinesisSchemaVersion`` or ``approximateArrivalTimestamp`` fails it."""
    return {"kinesis": {
        "kinesisSchemaVersion": "1.0", "partitionKey": record["PartitionKey"],
        "sequenceNumber": record["SequenceNumber"], "data": base64.b64encode(record["Data"]).decode(),
        "approximateArrivalTimestamp": record["ApproximateArrivalTimestamp"].timestamp()}}


def test_a_consumer_library_this_project_did_not_write_reads_every_row(
        spark, endpoint: KinesisEndpoint, four_shards: str) -> None:
    """awslabs' aws-kinesis-agg (the de-aggregator of AWS's Lambda examples) reads the sink's
    aggregates as GetRecords returns them: every row once, with its key and data. It prints and drops
    an aggregate it cannot parse, so every row is counted."""
    result = spark_kpl.write(_keyed_rows(spark, ROWS), four_shards, partition_key="partitionKey",
                             aggregation="executor", **endpoint.kpl_options())

    stored = list(_stored_kinesis_records(endpoint, four_shards))
    user_records = deaggregate_records([_as_lambda_delivers(r) for r in stored])
    print(f"\naws-kinesis-agg: {len(user_records)} user records out of {len(stored)} Kinesis records, "
          f"{sum(1 for r in user_records if r['kinesis'].get('aggregated'))} of them from aggregates")
    assert result.records_written == ROWS
    report = compare(_expected(ROWS), ((base64.b64decode(r["kinesis"]["data"]), r["kinesis"]["partitionKey"])
                                       for r in user_records))
    assert report.exactly_once, report.summary()
    assert len(stored) < ROWS / 100, "the rows were not aggregated"
