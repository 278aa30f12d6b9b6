"""recordId=prefix: ids that stay the same when Spark retries a task, so consumers can drop the
duplicates that retries send; and the refusal of spark.speculation unless duplicates are accepted.

This module's session has spark.speculation on and allows task retries (local[2,4])."""

from __future__ import annotations

import uuid

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl import dedup

from conftest import _session

ACCEPT = {"allowDuplicates": "true"}


@pytest.fixture(scope="module")
def spark():
    session = _session("local[2,4]", {"spark.speculation": "true"})
    yield session
    session.stop()
    # PySpark keeps builder options as JVM system properties, which the next module's session would inherit.
    session.sparkContext._jvm.java.lang.System.clearProperty("spark.speculation")


def payloads(spark, count, partitions):
    return spark.range(count, numPartitions=partitions).select(F.format_string("row-%d", "id").alias("data"))


def test_speculation_is_refused_unless_duplicates_are_allowed(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused, match="spark.speculation=true runs duplicate attempts"):
        spark_kpl.write(payloads(spark, 1, 1), stream, **kinesis.kpl_options())


def test_each_record_carries_its_write_partition_and_content(spark, kinesis, stream):
    rows = spark.range(40, numPartitions=2).select(F.format_string("row-%d", F.col("id") % 10).alias("data"))
    spark_kpl.write(rows, stream, recordId="prefix", **ACCEPT, **kinesis.kpl_options())
    ids = [(dedup.strip(r.data), dedup.record_id(r.data)) for r in kinesis.read_records(stream)]
    assert sorted(data for data, _ in ids) == sorted(f"row-{i % 10}".encode() for i in range(40))
    assert len({rid.write_id for _, rid in ids}) == 1
    assert isinstance(ids[0][1].write_id, uuid.UUID)
    assert len({rid for _, rid in ids}) == 40, "every record has an id of its own"
    # spark.range puts ids 0-19 in partition 0 and 20-39 in partition 1: each partition holds each
    # of row-0 to row-9 twice, numbered 0 and 1 among identical records.
    assert {(data, rid.partition, rid.occurrence) for data, rid in ids} == {
        (f"row-{i}".encode(), p, n) for i in range(10) for p in (0, 1) for n in (0, 1)}
    assert all(rid.batch_id == 0 and len(rid.content) == 12 for _, rid in ids)


def test_a_retried_task_resends_under_the_same_ids_so_consumers_drop_the_copies(spark, kinesis, stream):
    @F.udf("string")
    def payload_failing_once(i):
        import time

        from pyspark import TaskContext

        if i == 250 and TaskContext.get().attemptNumber() == 0:
            time.sleep(1)  # lets the KPL send the rows already added, so the retry duplicates them
            raise RuntimeError("injected failure of the first attempt")
        return f"row-{i}"

    rows = spark.range(300, numPartitions=1).select(payload_failing_once("id").alias("data"))
    result = spark_kpl.write(rows, stream, recordId="prefix", **ACCEPT, **kinesis.kpl_options())
    assert result.records_written == 300
    records = kinesis.read_records(stream)
    assert len(records) > 300, "the first attempt's records should have arrived too"
    first_copy = {}
    for record in records:
        first_copy.setdefault(dedup.record_id(record.data), dedup.strip(record.data))
    assert sorted(first_copy.values()) == sorted(f"row-{i}".encode() for i in range(300))
    for record in records:  # every copy of an id carries the same data
        assert first_copy[dedup.record_id(record.data)] == dedup.strip(record.data)


def test_a_rerun_of_a_named_write_resends_under_the_same_ids_so_dedup_brings_the_stream_to_exactly_once(
        spark, kinesis, stream, tmp_path):
    rerun = tmp_path / "second-run"

    @F.udf("string")
    def payload_failing_in_the_first_run(i):
        if i == 350 and not rerun.exists():  # every attempt of the first run fails: the job fails
            raise RuntimeError("injected failure of the first run")
        return f"row-{i}"

    rows = spark.range(400, numPartitions=4).select(payload_failing_in_the_first_run("id").alias("data"))
    named = {"recordId": "prefix", "writeName": "nightly-copy-2026-11-25", **ACCEPT, **kinesis.kpl_options()}
    with pytest.raises(Exception, match="injected failure of the first run"):
        spark_kpl.write(rows, stream, **named)
    first_run = kinesis.read_records(stream)
    assert 0 < len(first_run) < 400, "the first run should have delivered part of the rows"

    rerun.touch()
    assert spark_kpl.write(rows, stream, **named).records_written == 400

    records = kinesis.read_records(stream)
    assert len(records) >= 400 + len(first_run)
    assert {dedup.record_id(r.data).write_id for r in records} == {dedup.write_id("nightly-copy-2026-11-25")}
    kept = {}
    for record in records:
        kept.setdefault(dedup.record_id(record.data), dedup.strip(record.data))
    assert sorted(kept.values()) == sorted(f"row-{i}".encode() for i in range(400))


def test_a_write_name_needs_record_ids(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused, match="'writeName' names the write in record ids: it needs recordId="):
        spark_kpl.write(payloads(spark, 1, 1), stream, writeName="nightly", **ACCEPT, **kinesis.kpl_options())


def test_data_without_a_header_is_refused_by_the_helper():
    with pytest.raises(ValueError, match="recordId='prefix'"):
        dedup.record_id(b"plain data")
