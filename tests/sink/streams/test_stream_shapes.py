"""Stream shapes a lab with fresh streams never meets, end to end through the real KPL into the project's
endpoint and read back as a KCL consumer reads them (every sub-record of an aggregate inside the range
of the shard that stored it): a stream deleted and created again under its name, a stream whose
record distribution strategy is AUTO, a reshard under concurrent tasks, ListShards throttled, a
sparse key from a slow source, and a stream's own maximum record size, default or raised to 10 MiB
(docs/aggregation.md).

Every copy a KCL consumer reads counts, the KPL's byte-for-byte re-sends included: each test that
reads a stream back reports those re-sends, and bounds the rows read twice (DUPLICATES_BOUND)."""

from __future__ import annotations

import itertools
import os
import time
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl import dedup
from spark_kpl_testing.delivery import (
    DeliveryReport,
    compare,
    kcl_view,
    partition_key_hash,
    read_by_kcl,
    repeated_kinesis_records,
    without_repeated_kinesis_records,
    write_in_background,
)
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.endpoint.streams import HASH_SPACE
from spark_kpl_testing.polling import wait_for

#: The sink's Kinesis side: no Spark line changes it, so scripts/test.sh runs it on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line

ROWS = 20_000
KEYS = 1000
#: The sink's default producerIdleTimeoutMs, where the session's is shorter: the first write's producer (and
#: its daemon) is still there for the next write, as on an executor between a job's writes.
KEEP_PRODUCERS = {"producerIdleTimeoutMs": "60000"}
#: The share of rows a KCL consumer may read more than once, every copy counted.
DUPLICATES_BOUND = 0.01
#: Across a split, the Kinesis records the KPL daemon may send again byte for byte: those it had in flight
#: to the parent, predicted for it by its map from before the split ("Wrong Shard" in the KPL). Each is an
#: aggregate of up to ~1,100 of these rows, so they can be more than DUPLICATES_BOUND of a short write.
SPLIT_RESENDS_BOUND = 8
_names = itertools.count()


@pytest.fixture
def name(endpoint: KinesisEndpoint) -> Iterator[str]:
    """A stream name of the test's own; whatever stream has it at the end is deleted."""
    stream = f"shape{next(_names)}"
    yield stream
    endpoint.set_faults(Faults())
    if stream in endpoint.streams:
        endpoint.delete_stream(stream)


def _rows(spark, first: int, count: int, partitions: int = 2, pause_every: int = 0, keys: Sequence[str] = ()):
    """Rows ``first`` to ``first + count``, keyed by one of KEYS keys (of ``keys``, if given); with
    ``pause_every``, every such row sleeps 15 ms in its task (Thread.sleep by reflection, its answer cut
    to ''), so the write lasts seconds."""
    data = F.format_string("%08d", F.col("id"))
    if pause_every:
        sleep = f"reflect('java.lang.Thread', 'sleep', cast(if(id % {pause_every} = 0, 15, 0) as bigint))"
        data = F.concat(data, F.substring(F.expr(sleep), 1, 0))
    key = (F.element_at(F.array(*map(F.lit, keys)), (F.col("id") % len(keys) + 1).cast("int")) if keys
           else F.format_string("user-%d", F.col("id") % KEYS))
    return spark.range(first, first + count, numPartitions=partitions).select(
        data.alias("data"), key.alias("partitionKey"))


def _expected(first: int, count: int, keys: Sequence[str] = ()) -> Dict[bytes, str]:
    return {b"%08d" % i: keys[i % len(keys)] if keys else f"user-{i % KEYS}" for i in range(first, first + count)}


def _keys_hashed_below(limit: int, count: int) -> List[str]:
    """``count`` partition keys whose hash key, as Kinesis gives it, is below ``limit``."""
    keys = (f"user-{i}" for i in itertools.count())
    return list(itertools.islice((key for key in keys if partition_key_hash(key) < limit), count))


def _kcl_reads(endpoint: KinesisEndpoint, stream: str):
    """What a KCL consumer of the stream receives: every copy, the KPL's byte-for-byte re-sends included."""
    return kcl_view(endpoint.records(stream), endpoint.hash_ranges(stream))


def _read_by_kcl(endpoint: KinesisEndpoint, stream: str, expected: Dict[bytes, str]) -> DeliveryReport:
    """``expected`` against what a KCL consumer of the stream reads, every copy counted; printed, with the
    KPL's re-sends among them."""
    report = read_by_kcl(expected, endpoint.records(stream), endpoint.hash_ranges(stream))
    print(f"\na KCL consumer of {stream}: {report.summary()}")
    return report


def _delivered(report: DeliveryReport) -> bool:
    """Every row read with its key, fewer than DUPLICATES_BOUND of them more than once."""
    return report.at_least_once_with_duplicates_under(DUPLICATES_BOUND)


def _listings(endpoint: KinesisEndpoint, stream: str) -> int:
    """ListShards calls for the stream's first page: the sink's tasks' and the KPL daemon's."""
    return sum(1 for body in endpoint.requests("ListShards") if body.get("StreamName") == stream)


def _write_shaped(spark, endpoint: KinesisEndpoint, name: str, first: int, named_by_rows: bool, **options: str):
    """Rows ``first`` to ``first + ROWS`` to the stream: named by the write, or (``named_by_rows``) by each
    row's streamName column, no stream option given."""
    rows = _rows(spark, first, ROWS)
    if named_by_rows:
        return spark_kpl.write(rows.withColumn("streamName", F.lit(name)), None, target_stream="streamName",
                               partition_key="partitionKey", **options, **endpoint.kpl_options())
    return spark_kpl.write(rows, name, partition_key="partitionKey", **options, **endpoint.kpl_options())


@pytest.mark.parametrize("named_by_rows, options", [
    (False, {}), (True, {}), (False, {"aggregation": "kpl"}), (True, {"aggregation": "kpl"})],
    ids=["named-by-the-write", "named-by-rows", "named-by-the-write-kpl-aggregates", "named-by-rows-kpl-aggregates"])
def test_a_stream_created_again_under_its_name_loses_nothing_for_a_kcl_consumer(
        spark, endpoint: KinesisEndpoint, name: str, named_by_rows: bool, options: Dict[str, str]) -> None:
    """Shard ids start over in the new stream with other ranges: aggregates routed by the old
    stream's map (the tasks', or the KPL daemon's with aggregation=kpl) would land in a shard of the
    same id and count as written, and the KCL would drop the records outside its narrower range; a
    daemon predicting shards by the old map re-sends byte for byte every record stored in a shard it
    does not know. The stream is described before each write (by the driver, or once per executor JVM
    for a stream only rows name), the tasks list the shards of that incarnation only, and no daemon
    that met the old stream sends to the new one."""
    endpoint.create_stream(name, shards=2)
    first = _write_shaped(spark, endpoint, name, 0, named_by_rows, **options, **KEEP_PRODUCERS)
    assert first.records_written == ROWS
    endpoint.delete_stream(name)
    endpoint.create_stream(name, shards=4)

    second = _write_shaped(spark, endpoint, name, ROWS, named_by_rows, **options, **KEEP_PRODUCERS)

    assert second.records_written == ROWS and second.records_failed == 0
    report = _read_by_kcl(endpoint, name, _expected(ROWS, ROWS))
    assert _delivered(report), "a KCL consumer of the new stream: " + report.summary()


def test_a_stream_rows_name_created_again_between_micro_batches_loses_nothing_for_a_kcl_consumer(
        spark, endpoint: KinesisEndpoint, name: str, tmp_path) -> None:
    """A running streaming query whose rows name the stream: micro-batch 0 to the 2-shard stream, which is
    then deleted and created again with 4 shards, then micro-batch 1. A KCL consumer of the new stream reads
    every row of batch 1, and fewer than DUPLICATES_BOUND twice; or the batch fails with StreamRecreated and
    the query, restarted from its checkpoint, sends it again."""
    endpoint.create_stream(name, shards=2)
    source, staged, checkpoint = tmp_path / "source", tmp_path / "staged", tmp_path / "checkpoint"
    for batch, folder in enumerate((source, staged)):
        _rows(spark, batch * ROWS, ROWS, partitions=1).withColumn("streamName", F.lit(name)).write.parquet(str(folder))

    def start():
        return (spark.readStream.schema("data string, partitionKey string, streamName string").parquet(str(source))
                .writeStream.format("kpl").option("checkpointLocation", str(checkpoint))
                .options(**endpoint.kpl_options(), **KEEP_PRODUCERS)
                .trigger(processingTime="200 milliseconds").start())

    query = start()
    try:
        query.processAllAvailable()
        endpoint.delete_stream(name)
        endpoint.create_stream(name, shards=4)
        for part in staged.glob("part-*"):  # micro-batch 1, moved in whole
            part.rename(source / ("batch-1-" + part.name))
        try:
            query.processAllAvailable()
        except Exception as error:  # a batch that may have lost rows for a KCL consumer: the restart sends it again
            assert "StreamRecreated" in str(error), error
            query = start()
            query.processAllAvailable()
    finally:
        query.stop()

    report = _read_by_kcl(endpoint, name, _expected(ROWS, ROWS))
    assert _delivered(report), "a KCL consumer of the new stream: " + report.summary()


@pytest.mark.parametrize("named_by_rows", [False, True], ids=["named-by-the-write", "named-by-rows"])
def test_a_stream_created_again_during_a_write_fails_it_and_its_rerun_loses_nothing_for_a_kcl_consumer(
        spark, endpoint: KinesisEndpoint, name: str, named_by_rows: bool) -> None:
    """The stream is deleted once a quarter of the rows are stored and created again a second later
    with twice the shards (shard ids start over, with other ranges). An aggregate built on the old
    stream's map and first sent after that is stored in the new shard of the same id, where a KCL
    consumer drops what lies outside its range, and Kinesis reports it written: the sink cannot tell
    which, so the write fails once its tasks are done, and its rerun under the same writeName
    delivers every row, the first run's copies dropped by record id. A stream that only rows name is
    confirmed at the commit as the write's own is, in the incarnation each task's JVM described."""
    endpoint.create_stream(name, shards=2)
    rows = 40_000
    options = {"recordId": "prefix", "writeName": "nightly", **endpoint.kpl_options()}
    stream: Optional[str] = name

    def shaped(data):
        return data.withColumn("streamName", F.lit(name)) if named_by_rows else data

    if named_by_rows:
        stream, options = None, {**options, "target_stream": "streamName"}
    thread, outcome = write_in_background(spark, shaped(_rows(spark, 0, rows, pause_every=100)), stream, **options)
    wait_for(lambda: len(endpoint.records(name)) >= rows // 4, 60, "a quarter of the rows stored", every=0.1)
    endpoint.delete_stream(name)
    time.sleep(1)
    endpoint.create_stream(name, shards=4)
    thread.join(120)
    assert isinstance(outcome.get("error"), spark_kpl.StreamRecreated), outcome
    assert outcome["error"].stream == name

    rerun = spark_kpl.write(shaped(_rows(spark, 0, rows)), stream, partition_key="partitionKey", **options)

    assert rerun.records_written == rows
    kept: Dict[dedup.RecordId, Tuple[bytes, str]] = {}
    for record in _kcl_reads(endpoint, name):
        kept.setdefault(dedup.record_id(record.data), (dedup.strip(record.data), record.partition_key))
    report = compare(_expected(0, rows), kept.values())
    assert report.exactly_once, "a KCL consumer of the new stream, duplicates dropped by record id: " + report.summary()
    every_copy = read_by_kcl(_expected(0, rows), endpoint.records(name), endpoint.hash_ranges(name), data=dedup.strip)
    print(f"\na KCL consumer, every copy of the failed run's and the rerun's: {every_copy.summary()}")
    assert every_copy.at_least_once, every_copy.summary()


def test_a_stream_that_places_records_itself_gets_one_row_per_kinesis_record(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    """Under AUTO Kinesis ignores partition and explicit hash keys, so an aggregate lands in any shard
    and a KCL consumer drops what lies outside its range. A stream switched to AUTO between two writes
    is seen by the second: one Kinesis record per row, every row read back by the KCL."""
    endpoint.create_stream(name, shards=4, on_demand=True)
    aggregated = spark_kpl.write(_rows(spark, 0, ROWS), name, partition_key="partitionKey", **endpoint.kpl_options())
    assert aggregated.records_written == ROWS
    assert len({r.sequence_number for r in endpoint.records(name)}) < ROWS / 10, "not aggregated before the switch"
    endpoint.set_record_distribution(name, "AUTO")

    result = spark_kpl.write(_rows(spark, ROWS, ROWS), name, partition_key="partitionKey", **endpoint.kpl_options())

    assert result.records_written == ROWS and result.records_failed == 0
    assert result.records_unaggregated == ROWS and aggregated.records_unaggregated == 0
    kcl = _kcl_reads(endpoint, name)
    report = _read_by_kcl(endpoint, name, {**_expected(0, ROWS), **_expected(ROWS, ROWS)})
    assert _delivered(report), "a KCL consumer: " + report.summary()
    after_switch = [r for r in kcl if int(r.data) >= ROWS]
    assert all(r.sub_sequence_number is None for r in after_switch), "rows aggregated into an AUTO stream"
    assert len({r.shard_id for r in after_switch}) == 4


@pytest.mark.parametrize("keys", [{"partition_key": "partitionKey"}, {"partitioner": "random"}],
                         ids=["row-keys", "sink-chosen-keys"])
def test_a_stream_only_rows_name_that_places_records_itself_gets_one_row_per_kinesis_record(
        spark, endpoint: KinesisEndpoint, name: str, keys: Dict[str, str]) -> None:
    """The driver describes the write's own stream only; an executor describes a stream that only rows
    name (once per JVM and 5 minutes), so it never builds aggregates for an AUTO stream, where Kinesis
    would place each anywhere and a KCL consumer drop the records outside the storing shard's range."""
    endpoint.create_stream(name, shards=4, on_demand=True)
    endpoint.set_record_distribution(name, "AUTO")
    row_keys = "partition_key" in keys
    rows = _rows(spark, 0, 4000).withColumn("streamName", F.lit(name))
    if not row_keys:
        rows = rows.drop("partitionKey")

    result = spark_kpl.write(rows, None, target_stream="streamName", **keys, **endpoint.kpl_options())

    assert result.records_written == 4000 and result.records_failed == 0
    stored = endpoint.records(name)
    assert len(stored) == 4000 and all(r.sub_sequence_number is None for r in stored), "rows aggregated or repeated"
    expected = _expected(0, 4000) if row_keys else dict.fromkeys(_expected(0, 4000), "")  # "": any sink-made key
    kcl = kcl_view(stored, endpoint.hash_ranges(name))
    report = compare(expected, ((r.data, r.partition_key if row_keys else "") for r in kcl),
                     resent=repeated_kinesis_records(kcl))
    assert report.exactly_once, "a KCL consumer: " + report.summary()


def test_aggregation_asked_for_on_a_stream_that_places_records_itself_is_refused(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    endpoint.create_stream(name, shards=2, on_demand=True)
    endpoint.set_record_distribution(name, "AUTO")
    for option in ({"aggregation": "executor"}, {"aggregation": "kpl", "AggregationEnabled": "true"}):
        with pytest.raises(spark_kpl.WriteRefused) as refused:
            spark_kpl.write(_rows(spark, 0, 10), name, partition_key="partitionKey", **option,
                            **endpoint.kpl_options())
        assert name in str(refused.value) and "AUTO" in str(refused.value)
        assert list(option)[-1] in str(refused.value)
    assert endpoint.records(name) == []


def _descriptions(endpoint: KinesisEndpoint, stream: str) -> int:
    """DescribeStreamSummary calls for the stream: the driver's look, and any KPL daemon's own."""
    return sum(1 for body in endpoint.requests("DescribeStreamSummary") if body.get("StreamName") == stream
               or str(body.get("StreamARN", "")).endswith("/" + stream))


def test_the_daemon_is_told_how_the_stream_places_records(spark, endpoint: KinesisEndpoint, name: str) -> None:
    """KPL 1.1's daemon learns each stream's record distribution strategy itself; left to find it, it
    describes the stream on its first record (one call per executor, against 20 a second per account)
    and sends what comes meanwhile as if Kinesis placed it: aggregates without their explicit hash key,
    stored in the wrong shard and sent again. Told the driver's answer, it never asks."""
    endpoint.create_stream(name, shards=4)  # provisioned: records go where their keys say

    result = spark_kpl.write(_rows(spark, 0, ROWS), name, partition_key="partitionKey", **endpoint.kpl_options())

    assert result.records_written == ROWS and result.records_failed == 0
    assert _descriptions(endpoint, name) == 1, "only the driver describes the stream"
    records = endpoint.records(name)
    stored = compare(_expected(0, ROWS), ((r.data, r.partition_key) for r in records),
                     resent=repeated_kinesis_records(records))
    assert stored.exactly_once, "stored: " + stored.summary()
    report = _read_by_kcl(endpoint, name, _expected(0, ROWS))
    assert _delivered(report), "a KCL consumer: " + report.summary()


def test_a_split_under_concurrent_tasks_is_listed_once_per_change(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    """Two tasks of one executor JVM each notice the split in several misplaced aggregates; they share
    one listing per change instead of one per aggregate, and lose nothing for a KCL consumer."""
    endpoint.create_stream(name, shards=4)
    rows = 40_000
    slow = _rows(spark, 0, rows, pause_every=100)
    before = _listings(endpoint, name)
    thread, outcome = write_in_background(spark, slow, name, **endpoint.kpl_options())
    wait_for(lambda: len(endpoint.records(name)) >= rows // 4, 60, "a quarter of the rows stored", every=0.1)
    for shard_id, (start, end) in list(endpoint.hash_ranges(name).items()):
        endpoint.split_shard(name, shard_id, (start + end + 1) // 2)
    thread.join(120)
    assert "error" not in outcome, outcome.get("error")

    listings = _listings(endpoint, name) - before
    print(f"\nthe stream was listed {listings} times; {outcome['result']}")
    assert outcome["result"].records_written == rows
    report = _read_by_kcl(endpoint, name, _expected(0, rows))
    assert _delivered(report), "a KCL consumer: " + report.summary()
    # The tasks: one listing before the split and one per change seen after it (at most a few more
    # while ListShards does not show the children yet); the KPL daemon: one at start, one per change.
    assert listings <= 6


def test_children_listed_late_after_a_split_do_not_make_the_sink_send_stored_rows_again(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    """Right after a split, ListShards may not show the children yet (it is eventually consistent); here
    the sink's listings show the stream as before the split for 1.5 s, the KPL daemon's do not. Every
    key hashes into the lower child, so each aggregate built for the parent and stored in that child
    stands for a KCL consumer: the sink lists again, with pauses, until it sees the child, and sends no
    row a second time."""
    endpoint.create_stream(name, shards=1)
    endpoint.list_late(name, 1.5, "spark-kpl/")
    keys = _keys_hashed_below(HASH_SPACE // 2, KEYS)
    rows = 40_000
    thread, outcome = write_in_background(spark, _rows(spark, 0, rows, pause_every=100, keys=keys), name,
                                          **endpoint.kpl_options())
    wait_for(lambda: len(endpoint.records(name)) >= rows // 4, 60, "a quarter of the rows stored", every=0.1)
    endpoint.split_shard(name, "shardId-000000000000", HASH_SPACE // 2)
    thread.join(120)

    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"].records_written == rows
    expected = _expected(0, rows, keys)
    report = _read_by_kcl(endpoint, name, expected)
    assert report.at_least_once, "a KCL consumer: " + report.summary()
    # A row read twice only inside a Kinesis record the daemon sent again, never sent again by the sink.
    assert report.resent is not None and report.resent <= SPLIT_RESENDS_BOUND, report.summary()
    once_each = read_by_kcl(expected, without_repeated_kinesis_records(endpoint.records(name)),
                            endpoint.hash_ranges(name))
    assert not once_each.duplicated, "the sink sent stored rows again: " + once_each.summary()


def test_rows_naming_their_streams_are_stored_once_however_slow_describing_is(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    """A stream only rows name is described by the sink's executor JVM, never by the KPL's daemon: a
    daemon left to describe it sends what comes before its answer as if Kinesis placed it, so with
    DescribeStreamSummary slowed to 300 ms some aggregates were stored in the wrong shard and sent again.
    Rows naming a keyed and an AUTO stream in one write: the keyed one's rows travel aggregated, the AUTO
    one's one per Kinesis record, every row stored once."""
    auto = name + "-auto"
    endpoint.create_stream(name, shards=4)
    endpoint.create_stream(auto, shards=4, on_demand=True)
    endpoint.set_record_distribution(auto, "AUTO")
    endpoint.set_faults(Faults(latency=0.3, operations=frozenset({"DescribeStreamSummary"})))
    try:
        rows = _rows(spark, 0, ROWS).withColumn(
            "streamName", F.when(F.col("data").cast("int") % 4 == 0, F.lit(auto)).otherwise(F.lit(name)))

        result = spark_kpl.write(rows, None, target_stream="streamName", partition_key="partitionKey",
                                 **endpoint.kpl_options())

        assert result.records_written == ROWS and result.records_failed == 0
        assert result.records_unaggregated == ROWS // 4, "the AUTO stream's rows, one per Kinesis record"
        expected = _expected(0, ROWS)
        to_auto = {data: key for data, key in expected.items() if int(data) % 4 == 0}
        to_keyed = {data: key for data, key in expected.items() if int(data) % 4 != 0}
        keyed = endpoint.records(name)
        stored = compare(to_keyed, ((r.data, r.partition_key) for r in keyed), resent=repeated_kinesis_records(keyed))
        assert stored.exactly_once, "keyed stream, stored: " + stored.summary()
        assert len({r.sequence_number for r in keyed}) < len(to_keyed) / 10, "sent one by one, not aggregated"
        placed = endpoint.records(auto)
        assert all(r.sub_sequence_number is None for r in placed), "rows aggregated for an AUTO stream"
        stored = compare(to_auto, ((r.data, r.partition_key) for r in placed), resent=repeated_kinesis_records(placed))
        assert stored.exactly_once, "AUTO stream, stored: " + stored.summary()
        assert _descriptions(endpoint, name) == 1 and _descriptions(endpoint, auto) == 1, \
            "one description per stream, by the executor JVM, none by a daemon"
    finally:
        endpoint.set_faults(Faults())
        endpoint.delete_stream(auto)


def test_list_shards_throttled_is_waited_out(spark, endpoint: KinesisEndpoint, name: str) -> None:
    """Kinesis allows ListShards 1,000 times a second per stream, for every caller: two of three calls
    refused with LimitExceededException are retried with backoff, and the rows still travel aggregated."""
    endpoint.create_stream(name, shards=4)
    endpoint.set_faults(Faults(limit_exceeded_rate=0.67, operations=frozenset({"ListShards"})))

    result = spark_kpl.write(_rows(spark, 0, ROWS), name, partition_key="partitionKey", **endpoint.kpl_options())

    assert endpoint.call_errors.get("LimitExceededException", 0) > 0
    assert result.records_written == ROWS
    records = endpoint.records(name)
    report = _read_by_kcl(endpoint, name, _expected(0, ROWS))
    assert _delivered(report), "a KCL consumer: " + report.summary()
    assert len({r.sequence_number for r in records}) < ROWS / 10, "sent one by one, not aggregated"


def test_a_sparse_key_from_a_slow_source_waits_no_longer_than_the_kpl_would_buffer_it(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    """One task reads 60 rows, 50 ms apart; every 20th row has a key of its own, the others share one.
    Each row is sent within about RecordMaxBufferedTime (here 200 ms) of being read, not when the
    task ends 3 s later: the sparse key's open aggregate is sealed for its age."""
    endpoint.create_stream(name, shards=4)
    read_at = F.expr("reflect('java.lang.System', 'currentTimeMillis')")
    pause = F.expr("reflect('java.lang.Thread', 'sleep', 50L)")
    rows = spark.range(60, numPartitions=1).select(
        F.concat(F.format_string("%03d-", F.col("id")), read_at, F.substring(pause, 1, 0)).alias("data"),
        F.when(F.col("id") % 20 == 0, F.format_string("sparse-%d", F.col("id"))).otherwise("busy")
        .alias("partitionKey"))

    spark_kpl.write(rows, name, partition_key="partitionKey", RecordMaxBufferedTime="200", **endpoint.kpl_options())

    arrivals = _arrivals(endpoint, name)
    assert len(arrivals) == 60
    # From row 20 on: the first rows also wait for the task's KPL daemon to start.
    waits = sorted(arrived - read for row, (read, arrived) in arrivals.items() if int(row) >= 20)
    print(f"\nwaits from read to stored (s): median {waits[len(waits) // 2]:.2f}, most {waits[-1]:.2f}")
    assert waits[-1] < 1.0, f"a row waited {waits[-1]:.2f} s in the executor"


def _arrivals(endpoint: KinesisEndpoint, stream: str) -> Dict[str, tuple]:
    """Row -> (when the task read it, when the endpoint stored it), epoch seconds."""
    stored = endpoint.stored_arrivals(stream)
    return {data.split(b"-")[0].decode(): (int(data.split(b"-")[1]) / 1000, arrived) for data, arrived in stored}


def test_a_record_over_the_streams_own_maximum_is_refused_naming_it(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    """maxRecordBytes allows 2 MiB, the stream takes 1 MiB (its MaxRecordSizeInKiB, as Kinesis
    reports it): the row is refused before the KPL sees it, naming the stream's maximum."""
    endpoint.create_stream(name, shards=1)
    big = spark.range(1, numPartitions=1).select(F.expr("repeat('x', 1500000)").alias("data"))
    started = time.monotonic()
    with pytest.raises(spark_kpl.RecordsNotDelivered) as failed:
        spark_kpl.write(big, name, maxRecordBytes=str(2 << 20), **endpoint.kpl_options())
    assert "MaxRecordSizeInKiB" in str(failed.value) and name in str(failed.value)
    assert time.monotonic() - started < 20, "retried by the KPL instead of refused at once"


def test_a_5_mib_record_among_100_000_small_ones_arrives_whole_on_a_stream_raised_to_10_mib(
        spark, endpoint: KinesisEndpoint, name: str) -> None:
    """Kinesis takes records up to the stream's maximum, raised with UpdateMaxRecordSize up to 10 MiB, and
    PutRecords calls up to 10 MiB; the KPL (MaxUserRecordSize, set from maxRecordBytes) sends such a
    record alone. One 5 MiB record of random bytes in the middle of a task's 100 B rows, written with
    the defaults (aggregation=executor) but maxRecordBytes: every row read back once by a KCL consumer
    with its key, the large one byte for byte and on its own, the small ones still aggregated."""
    endpoint.create_stream(name, shards=4)
    client = endpoint.client()
    arn = client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]
    client.update_max_record_size(StreamARN=arn, MaxRecordSizeInKiB=10240)
    small_rows = 100_000
    large = os.urandom(5 << 20)
    expected = {(b"%08d" % i).ljust(100, b"x"): f"user-{i % KEYS}" for i in range(small_rows)}
    rows = [(data, key) for data, key in expected.items()]
    rows.insert(small_rows // 4, (large, "large"))  # inside the first of the two tasks

    result = spark_kpl.write(spark.createDataFrame(rows, "data binary, partitionKey string"), name,
                             partition_key="partitionKey", maxRecordBytes=str(10 << 20), **endpoint.kpl_options())

    assert result.records_written == small_rows + 1 and result.records_failed == 0
    kcl = _kcl_reads(endpoint, name)
    small = [r for r in kcl if r.partition_key != "large"]
    report = read_by_kcl(expected, [r for r in endpoint.records(name) if r.partition_key != "large"],
                         endpoint.hash_ranges(name))
    print(f"\na KCL consumer, the small rows: {report.summary()}")
    assert _delivered(report), "a KCL consumer: " + report.summary()
    # (length, same bytes, stored alone) of each copy: a report of the record itself would be 5 MiB long
    assert [(len(r.data), r.data == large, r.sub_sequence_number) for r in kcl if r.partition_key == "large"] \
        == [(len(large), True, None)]
    assert len({(r.shard_id, r.sequence_number) for r in small}) < small_rows / 100, "small rows not aggregated"
