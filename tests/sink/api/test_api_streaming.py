"""Structured Streaming: df.writeStream.format("kpl") over several micro-batches, read back exactly
once, and a restart after a crash between the sink's commit and Spark's commit log: the batch Spark
runs again is not re-sent."""

from __future__ import annotations

import json
import os

import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql import functions as F

from spark_kpl import dedup


def add_file(folder, number, rows=10):
    """One JSON file of ``rows`` events: one micro-batch with maxFilesPerTrigger=1."""
    temporary = os.path.join(folder, f".part-{number}.tmp")
    with open(temporary, "w") as out:
        for i in range(rows):
            out.write(json.dumps({"data": f"file-{number}-row-{i}"}) + "\n")
    os.rename(temporary, os.path.join(folder, f"part-{number}.json"))


def source_of(tmp_path, files):
    """A source folder of ``files`` JSON files (:func:`add_file`), one micro-batch each with maxFilesPerTrigger=1."""
    source = str(tmp_path / "source")
    os.makedirs(source)
    for number in range(files):
        add_file(source, number)
    return source


def run_until_caught_up(spark, source, checkpoint, stream, kinesis):
    query = (spark.readStream.schema("data string").option("maxFilesPerTrigger", 1).json(source)
             .writeStream.format("kpl").option("checkpointLocation", checkpoint).option("streamName", stream)
             .option("recordId", "prefix").options(**kinesis.kpl_options())
             .trigger(availableNow=True).start())
    query.awaitTermination()
    assert query.exception() is None
    return query


def expected(files, rows=10):
    return sorted(f"file-{n}-row-{i}".encode() for n in files for i in range(rows))


def test_micro_batches_arrive_exactly_once_and_a_replayed_batch_is_not_resent(spark, kinesis, stream, tmp_path):
    source, checkpoint = source_of(tmp_path, 3), str(tmp_path / "checkpoint")
    query = run_until_caught_up(spark, source, checkpoint, stream, kinesis)
    assert [p["batchId"] for p in query.recentProgress if p["numInputRows"]] == [0, 1, 2]
    records = kinesis.read_records(stream)
    assert sorted(dedup.strip(r.data) for r in records) == expected(range(3))
    assert {dedup.record_id(r.data).batch_id for r in records} == {0, 1, 2}

    # A crash after the sink committed batch 2 but before Spark wrote it to its commit log.
    for name in ("2", ".2.crc"):  # the entry and the checksum Hadoop's local file system keeps beside it
        os.remove(os.path.join(checkpoint, "commits", name))
    add_file(source, 3)
    query = run_until_caught_up(spark, source, checkpoint, stream, kinesis)
    replayed = [p for p in query.recentProgress if p["batchId"] == 2]
    assert replayed and replayed[0]["numInputRows"] == 10, "Spark should have run batch 2 again"
    records = kinesis.read_records(stream)
    assert sorted(dedup.strip(r.data) for r in records) == expected(range(4))
    # The query id, and so the write id of every record id, survives the restart.
    assert len({dedup.record_id(r.data).write_id for r in records}) == 1


def test_checkpoint_location_is_refused_for_a_batch_write(spark, kinesis, stream, tmp_path):
    rows = spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(IllegalArgumentException, match="'checkpointLocation' is for df.writeStream"):
        rows.write.format("kpl").option("streamName", stream).option("checkpointLocation", str(tmp_path)) \
            .options(**kinesis.kpl_options()).mode("append").save()


def test_a_named_query_writes_every_record_once(spark, kinesis, stream, tmp_path):
    """writeStream.queryName(...) reaches the sink as an option named queryName: taken, not refused."""
    source, checkpoint = source_of(tmp_path, 2), str(tmp_path / "checkpoint")
    query = (spark.readStream.schema("data string").option("maxFilesPerTrigger", 1).json(source)
             .writeStream.queryName("orders_to_kinesis").format("kpl").option("checkpointLocation", checkpoint)
             .option("streamName", stream).options(**kinesis.kpl_options()).trigger(availableNow=True).start())
    query.awaitTermination()
    assert query.exception() is None
    assert query.name == "orders_to_kinesis"
    assert sorted(r.data for r in kinesis.read_records(stream)) == expected(range(2))


def test_start_with_a_path_writes_to_the_stream_it_names(spark, kinesis, stream, tmp_path):
    """writeStream...start("clicks") works as .option("streamName", "clicks").start()."""
    source = source_of(tmp_path, 1)
    query = (spark.readStream.schema("data string").json(source)
             .writeStream.format("kpl").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .options(**kinesis.kpl_options()).trigger(availableNow=True).start(stream))
    query.awaitTermination()
    assert query.exception() is None
    assert sorted(r.data for r in kinesis.read_records(stream)) == expected([0])


def test_a_write_name_is_refused_for_a_streaming_query(spark, kinesis, stream, tmp_path):
    """A streaming query's records carry its own id, which its checkpoint keeps."""
    source = source_of(tmp_path, 1)
    query = (spark.readStream.schema("data string").json(source)
             .writeStream.format("kpl").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .option("streamName", stream).option("recordId", "prefix").option("writeName", "nightly")
             .options(**kinesis.kpl_options()).trigger(availableNow=True).start())
    with pytest.raises(Exception, match="'writeName' is for batch writes"):
        query.awaitTermination()
    assert kinesis.read_records(stream) == []


def test_a_query_resolves_its_write_once_for_all_its_micro_batches(spark, kinesis, stream, tmp_path, jvm_log):
    """Spark asks the query's table for a new write at every micro-batch: the table keeps the query's."""
    source, checkpoint = source_of(tmp_path, 20), str(tmp_path / "checkpoint")
    log4j = spark.sparkContext._jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel("sparkkpl.spark.KplTable", log4j.Level.DEBUG)
    try:
        query = run_until_caught_up(spark, source, checkpoint, stream, kinesis)
    finally:
        log4j.core.config.Configurator.setLevel("sparkkpl.spark.KplTable", log4j.Level.INFO)
    assert len([p for p in query.recentProgress if p["numInputRows"]]) == 20
    assert jvm_log.toString().count(f"Write {query.id} resolved") == 1
    assert sorted(dedup.strip(r.data) for r in kinesis.read_records(stream)) == expected(range(20))
