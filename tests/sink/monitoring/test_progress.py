"""A long batch write shows its progress while it runs: one line on stderr from spark_kpl.write, read from
the figures the Spark UI's SQL tab shows for the write node (Spark's status store)."""

from __future__ import annotations

import re
import threading
from typing import Any, Dict, Iterator

import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.endpoint import Faults

from conftest import _session

#: Executors send running tasks' figures with each heartbeat: every second here, not every ten.
CONF = {"spark.executor.heartbeatInterval": "1s"}
PROGRESS = re.compile(r"kpl write: ([\d,]+) of [\d,]+ records acknowledged, [\d,]+/s, tasks \d+/\d+, "
                      r"[\d,.]+ s of task time")


@pytest.fixture(scope="module")
def spark():
    session = _session("local[2]", CONF)
    yield session
    session.stop()
    # PySpark keeps builder options as JVM system properties, which the next module's session would inherit.
    for key in CONF:
        session.sparkContext._jvm.java.lang.System.clearProperty(key)


def scala_items(collection) -> Iterator[Any]:
    items = collection.iterator()
    while items.hasNext():
        yield items.next()


def sql_tab_figures(spark) -> Dict[str, int]:
    """The write node's figures of the session's last kpl write, as the Spark UI's SQL tab shows them."""
    keys = dict(spark.sparkContext._jvm.sparkkpl.metrics.SparkUiMetrics.keysBySparkType())
    store = spark._jsparkSession.sharedState().statusStore()
    writes = [(execution.executionId(), {metric.accumulatorId(): keys[metric.metricType()]
                                         for metric in scala_items(execution.metrics()) if metric.metricType() in keys})
              for execution in scala_items(store.executionsList())]
    execution_id, names = max(write for write in writes if write[1])
    return {names[value._1()]: int(value._2()) for value in scala_items(store.executionMetrics(execution_id))
            if value._1() in names}


def acknowledged_counts(stderr: str) -> list:
    return [int(match.group(1).replace(",", "")) for match in PROGRESS.finditer(stderr)]


def test_a_long_write_shows_records_acknowledged_as_they_grow(spark, endpoint, ep_stream, capsys):
    rows = 6000
    # One Kinesis record per row, 300 a second per shard on two shards: the write lasts about ten seconds.
    endpoint.set_faults(Faults(shard_records_per_second=300))
    result = spark_kpl.write(numbered_rows(spark, rows), ep_stream, partition_key="partitionKey",
                             AggregationEnabled="false", progress=True, **endpoint.kpl_options())
    stderr = capsys.readouterr().err

    assert result.records_written == rows
    # The live lines come before the last one, which the write prints once every task has committed.
    lines = [line for line in stderr.splitlines() if line.startswith("kpl write:")]
    *live, last = lines
    counts = acknowledged_counts("\n".join(live))
    assert len(counts) >= 2 and counts == sorted(counts) and counts[0] < counts[-1] < rows + 1, stderr
    assert last.startswith(f"kpl write: done, {rows:,} records acknowledged in "), stderr
    report = compare(numbered_expected(rows), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
    # The live lines are the SQL tab's figures; its last reading of each task comes after Kinesis acknowledged
    # the task's records from Spark 4.0 on (DataWriter.writeAll); on 3.5 before the commit sends the last
    # records and waits for them.
    figures = sql_tab_figures(spark)
    if int(spark.version.split(".")[0]) >= 4:
        assert figures["records_written"] == figures["records_added"] == rows, figures
    else:
        assert 0 < figures["records_written"] <= figures["records_added"] <= rows, figures


def test_no_progress_line_unless_asked_when_stderr_is_not_a_terminal(spark, endpoint, ep_stream, capsys):
    spark_kpl.write(numbered_rows(spark, 200), ep_stream, partition_key="partitionKey", **endpoint.kpl_options())
    spark_kpl.write(numbered_rows(spark, 200), ep_stream, partition_key="partitionKey", progress=False,
                    **endpoint.kpl_options())
    assert "kpl write:" not in capsys.readouterr().err


def test_a_failed_write_ends_its_progress_line_and_stops_polling(spark, endpoint, ep_stream, capsys):
    from pyspark.sql import functions as F

    rows = numbered_rows(spark, 200).withColumn("data", F.when(F.col("data") != "row-150", F.col("data")))
    with pytest.raises(spark_kpl.RecordsNotDelivered):
        spark_kpl.write(rows, ep_stream, partition_key="partitionKey", progress=True, **endpoint.kpl_options())
    stderr = capsys.readouterr().err
    assert re.search(r"kpl write: failed after [\d.]+ s, [\d,]+ records acknowledged by then\n$", stderr), stderr
    assert not [thread for thread in threading.enumerate() if thread.name == "spark-kpl-progress"]
