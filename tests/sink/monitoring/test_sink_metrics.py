"""The sink's figures where Spark users look: a streaming query's progress reports
(``query.lastProgress["sink"]["metrics"]``), and the executor's metrics source in Spark's metrics
system (``spark.plugins=sparkkpl.metrics.KplMetricsPlugin``), read here through Spark's CSV sink."""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows

from conftest import _session

PLUGIN = "sparkkpl.metrics.KplMetricsPlugin"


@pytest.fixture(scope="module")
def metrics_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-metrics")


@pytest.fixture(scope="module")
def spark(metrics_dir: Path):
    """Local mode with the sink's plugin, and Spark's CSV sink writing every metric each second."""
    csv_sink = "spark.metrics.conf.*.sink.csv."
    conf = {"spark.plugins": PLUGIN, csv_sink + "class": "org.apache.spark.metrics.sink.CsvSink",
            csv_sink + "period": "1", csv_sink + "unit": "seconds", csv_sink + "directory": str(metrics_dir)}
    session = _session("local[2]", conf)
    yield session
    session.stop()
    # PySpark keeps builder options as JVM system properties, which the next module's session would inherit.
    for key in conf:
        session.sparkContext._jvm.java.lang.System.clearProperty(key)


def add_file(folder: str, number: int, rows: int) -> None:
    temporary = os.path.join(folder, f".part-{number}.tmp")
    with open(temporary, "w") as out:
        for i in range(rows):
            out.write(json.dumps({"data": f"file-{number}-row-{i}"}) + "\n")
    os.rename(temporary, os.path.join(folder, f"part-{number}.json"))


def test_each_micro_batch_reports_its_own_figures_in_the_querys_progress(spark, kinesis, stream, tmp_path):
    source = str(tmp_path / "source")
    os.makedirs(source)
    for number, rows in enumerate((30, 50)):
        add_file(source, number, rows)
    query = (spark.readStream.schema("data string").option("maxFilesPerTrigger", 1).json(source)
             .writeStream.format("kpl").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .option("streamName", stream).options(**kinesis.kpl_options()).trigger(availableNow=True).start())
    query.awaitTermination()
    assert query.exception() is None

    reports = {p["batchId"]: p["sink"]["metrics"] for p in query.recentProgress if p["numInputRows"]}
    assert sorted(reports) == [0, 1]
    # Each batch is one file, in whichever order the source lists them.
    assert sorted(int(figures["records_written"]) for figures in reports.values()) == [30, 50]
    for figures in reports.values():
        rows = int(figures["records_written"])
        assert int(figures["bytes_written"]) > rows * len("file-0-row-00"), "data plus keys, as Kinesis counts them"
        assert (figures["records_failed"], figures["records_resent"]) == ("0", "0"), figures
        assert 1 <= int(figures["kinesis_records_written"]) <= rows, "aggregates of the batch's rows"
        assert {"backpressure_cycles", "blocked_ms", "kinesis_throttles"} <= set(figures)
    assert query.lastProgress["sink"]["metrics"] == reports[1]
    read = sorted(r.data for r in kinesis.read_records(stream))
    assert read == sorted(f"file-{n}-row-{i}".encode() for n, rows in enumerate((30, 50)) for i in range(rows))


def _latest(metrics_dir: Path, name: str) -> int:
    """The last value Spark's CSV sink wrote for the plugin's metric ``name`` (-1: none yet)."""
    files = list(metrics_dir.glob(f"*{PLUGIN}.{name}.csv"))
    if not files:
        return -1
    with files[0].open() as lines:
        rows = list(csv.reader(lines))
    return int(rows[-1][1]) if len(rows) > 1 else -1


def _await_metric(metrics_dir: Path, name: str, wanted, timeout_s: float = 20) -> int:
    deadline = time.monotonic() + timeout_s
    value = _latest(metrics_dir, name)
    while not wanted(value) and time.monotonic() < deadline:
        time.sleep(0.25)
        value = _latest(metrics_dir, name)
    return value


def _steady_metric(metrics_dir: Path, name: str, timeout_s: float = 30) -> int:
    """The metric once the CSV sink (a sample a second) has written the same value for 3 s: the JVM's totals
    outlive sessions, and a task of an earlier test in this process may still be adding to them."""
    deadline = time.monotonic() + timeout_s
    value, since = _latest(metrics_dir, name), time.monotonic()
    while time.monotonic() < deadline and (value < 0 or time.monotonic() - since < 3):
        time.sleep(0.25)
        now = _latest(metrics_dir, name)
        if now != value:
            value, since = now, time.monotonic()
    return value


def test_the_executors_metrics_source_counts_acknowledgements_and_shows_its_producer(spark, kinesis, stream,
                                                                                     metrics_dir):
    written_before = _steady_metric(metrics_dir, "tasks.records_written")
    assert written_before >= 0, f"no CSV of the plugin's metrics in {sorted(os.listdir(metrics_dir))[:5]}"

    result = spark_kpl.write(numbered_rows(spark, 2000), stream, partition_key="partitionKey",
                             **kinesis.kpl_options())

    assert result.records_written == 2000
    report = compare(numbered_expected(2000), ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.exactly_once, report.summary()
    expected = written_before + 2000
    assert _await_metric(metrics_dir, "tasks.records_written", lambda value: value >= expected) == expected
    assert _latest(metrics_dir, "tasks.kinesis_records_written") >= 1
    assert _latest(metrics_dir, "tasks.bytes_written") >= result.bytes_written
    # The producer stays open for its idle timeout (2 s here): its budget shows, nothing outstanding.
    assert _latest(metrics_dir, "producer.outstandingRecords") == 0
    assert _latest(metrics_dir, "producer.budgetRecords") != -1
