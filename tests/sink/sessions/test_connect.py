"""Spark Connect: a client session with no JVM of its own writes through a Connect server that has the
sink's jar, to the project's endpoint: df.write and df.writeStream with format kpl, spark_kpl.write with
its figures and its settings helpers, all read back or compared exactly (its exceptions: errors/test_api_errors.py)."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows


def assert_exactly_once(endpoint, stream, expected):
    report = compare(expected, ((r.data, r.partition_key) for r in endpoint.records(stream)))
    assert report.exactly_once, report.summary()


def test_the_session_is_a_connect_client(connect_spark):
    assert type(connect_spark).__module__ == "pyspark.sql.connect.session"


def test_format_kpl_batch_write_from_connect(connect_spark, endpoint, ep_stream):
    (numbered_rows(connect_spark, 2000).write.format("kpl").option("streamName", ep_stream)
     .options(**endpoint.kpl_options()).mode("append").save())
    assert_exactly_once(endpoint, ep_stream, numbered_expected(2000))


def test_format_kpl_streaming_write_from_connect(connect_spark, endpoint, ep_stream, tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    expected = {}
    for number in range(3):  # one micro-batch per file
        lines = [{"data": f"file-{number}-row-{i}", "partitionKey": f"key-{i % 7}"} for i in range(50)]
        expected.update({line["data"].encode(): line["partitionKey"] for line in lines})
        (source / f"part-{number}.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    query = (connect_spark.readStream.schema("data string, partitionKey string").option("maxFilesPerTrigger", 1)
             .json(str(source)).writeStream.format("kpl").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .option("streamName", ep_stream).options(**endpoint.kpl_options())
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination(120)
        assert query.exception() is None
        assert [(p.batchId, p.numInputRows) for p in query.recentProgress if p.numInputRows] == [
            (0, 50), (1, 50), (2, 50)]
    finally:
        query.stop()
    assert_exactly_once(endpoint, ep_stream, expected)


def test_spark_kpl_write_on_connect_returns_the_exact_figures(connect_spark, endpoint, ep_stream):
    result = spark_kpl.write(numbered_rows(connect_spark, 3000), ep_stream, data=F.col("data"),
                             partition_key="partitionKey", **endpoint.kpl_options())
    assert (result.records_written, result.records_failed, result.records_skipped, result.tasks) == (3000, 0, 0, 4)
    assert result.bytes_written == sum(len(d) + len(k) for d, k in numbered_expected(3000).items())
    assert_exactly_once(endpoint, ep_stream, numbered_expected(3000))


def test_settings_and_stats_helpers_work_on_connect(connect_spark, endpoint, ep_stream):
    settings = spark_kpl.write_settings(connect_spark, RecordTtl=60000, **endpoint.kpl_options())
    assert (settings["spark.kpl.RecordTtl"], settings["spark.kpl.failOnError"]) == ("60000", "true")
    spark_kpl.write(numbered_rows(connect_spark, 10, partitions=1), ep_stream, partition_key="partitionKey",
                    RecordTtl=60000, **endpoint.kpl_options())
    # The server's producers (local mode: its tasks'), until they close when idle.
    assert any(p.get("spark.kpl.RecordTtl") == "60000" for p in spark_kpl.producer_settings(connect_spark))
    assert all(stats["outstandingRecords"] == 0 for stats in spark_kpl.producer_stats(connect_spark))


def test_configure_on_a_connect_builder_says_the_jar_belongs_on_the_server(connect_server):
    with pytest.raises(spark_kpl.SinkNotOnSession,
                       match=r"the jar belongs on the server. Start it with --jars \S+\.jar") as refused:
        spark_kpl.configure(SparkSession.builder.remote(connect_server.url))
    assert isinstance(refused.value, RuntimeError)
