"""End to end on a real standalone cluster: two executor JVMs, each with its own KPL daemon."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections import Counter

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl import dedup
from spark_kpl_testing.delivery import compare, warm_up

from example_job import REPO, submit_example_job


def spark_submit(cluster, stream, options, extra_args, python):
    conf = {**cluster.spark_conf(), "spark.pyspark.python": str(python),
            "spark.pyspark.driver.python": str(python)}
    spark_args = [*extra_args, *(arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}"))]
    job_args = ["--stream", stream, "--rows", "500",
                *(arg for name, value in options.items() for arg in ("--option", f"{name}={value}"))]
    return submit_example_job(spark_args, job_args)["RESULT"]


# These run first in the module: a spark-submit application needs the cluster's cores, which the
# module's own session (cluster_spark) holds once it starts.
@pytest.mark.parametrize("route", ["installed package", "py-files"])
def test_spark_submit_with_jars_writes_every_record(cluster, kinesis, stream, route, tmp_path):
    if route == "installed package":
        extra_args, python = [], sys.executable
    else:
        # A Python without spark_kpl installed: the package travels with --py-files.
        bare = tmp_path / "bare"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
        package = tmp_path / "spark_kpl.zip"
        with zipfile.ZipFile(package, "w") as archive:
            # As docs/deploying.md's `zip -r spark_kpl.zip spark_kpl` packs it: VERSION and py.typed too.
            for path in (REPO / "python" / "spark_kpl").rglob("*"):
                if path.is_file() and "__pycache__" not in path.parts:
                    archive.write(path, path.relative_to(REPO / "python"))
        extra_args, python = ["--py-files", str(package)], bare / "bin" / "python"
    result = spark_submit(cluster, stream, kinesis.kpl_options(), extra_args, python)
    assert result["records_written"] == 500
    records = kinesis.read_records(stream)
    report = compare({f"row-{i}".encode(): f"key-{i % 10}" for i in range(500)},
                     ((r.data, r.partition_key) for r in records))
    assert report.exactly_once, report.summary()


def test_a_dead_letter_folder_on_each_machines_own_disk_is_refused_on_a_cluster(cluster_spark, kinesis, stream,
                                                                              tmp_path):
    rows = cluster_spark.range(10).select(F.format_string("row-%d", "id").alias("data"))
    options = {**kinesis.kpl_options(), "failOnError": "false"}
    with pytest.raises(Exception, match="deadLetterPath.*local disk of each machine.*file: URI"):
        spark_kpl.write(rows, stream, deadLetterPath=str(tmp_path / "dead"), **options)
    # An explicit file: URI says the folder is mounted at that path on every node (here: one host).
    result = spark_kpl.write(rows, stream, deadLetterPath=(tmp_path / "dead").as_uri(), **options)
    assert (result.records_written, result.records_failed) == (10, 0)


def test_record_ids_survive_a_retry_that_sees_its_rows_in_another_order(cluster_spark, endpoint, ep_stream):
    # Defined here, so that it travels to the executors by value.
    def permuted_and_failing_once(index, rows):
        """The retry of partition 0 sees its rows in another order than its first attempt, which fails
        half-way, after the KPL had time to send what it was given (as a shuffle's map outputs arriving
        in another order would reorder them; Spark promises no order after a shuffle)."""
        import random
        import time

        from pyspark import TaskContext

        attempt = TaskContext.get().attemptNumber()
        rows = list(rows)
        random.Random(attempt).shuffle(rows)
        for number, row in enumerate(rows):
            if index == 0 and attempt == 0 and number == len(rows) // 2:
                time.sleep(2)
                raise RuntimeError("injected failure of the first attempt")
            yield row

    count = 4000
    rows = cluster_spark.range(count, numPartitions=4).select(
        F.format_string("row-%d", "id").alias("data"), F.format_string("key-%d", F.col("id") % 7).alias("partitionKey"))
    shuffled = rows.repartition(4, "partitionKey")
    retried = shuffled.rdd.mapPartitionsWithIndex(permuted_and_failing_once).toDF(shuffled.schema)
    result = spark_kpl.write(retried, ep_stream, partition_key="partitionKey", recordId="prefix",
                             **endpoint.kpl_options())
    assert result.records_written == count
    records = endpoint.records(ep_stream)
    assert len(records) > count, "the failed attempt's records should have arrived too"
    kept = {}
    for record in records:  # the dedup docs/api.md describes: keep the first copy of each id
        kept.setdefault(dedup.record_id(record.data), (dedup.strip(record.data), record.partition_key))
    report = compare({f"row-{i}".encode(): f"key-{i % 7}" for i in range(count)}, kept.values())
    assert report.exactly_once, report.summary()


def test_cluster_write_delivers_every_record_once_with_its_key(cluster_spark, kinesis, stream):
    count = 20_000
    rows = cluster_spark.range(count, numPartitions=4).select(
        F.format_string("row-%d", "id").alias("payload"),
        F.format_string("key-%d", F.col("id") % 101).alias("key"),
    )
    expected = warm_up(cluster_spark, stream, **kinesis.kpl_options())
    result = spark_kpl.write(rows, stream, data="payload", partition_key="key", **kinesis.kpl_options())
    assert (result.records_written, result.records_failed, result.tasks) == (count, 0, 4)
    records = kinesis.read_records(stream)
    expected.update({f"row-{i}".encode(): f"key-{i % 101}" for i in range(count)})
    report = compare(expected, ((r.data, r.partition_key) for r in records))
    assert report.exactly_once, report.summary()


def test_executors_starting_together_place_the_daemon_safely_every_time(cluster_spark, cluster, kinesis,
                                                                       stream, tmp_path):
    """Seed 000: executors of one host start their producers at the same moment from an empty
    folder. Each round uses a fresh folder, so every round races the placement again."""
    rows = cluster_spark.range(400, numPartitions=4).select(
        F.format_string("row-%d", "id").alias("data"), F.lit("k").alias("partitionKey"))
    for round_number in range(3):
        native_dir = tmp_path / f"round-{round_number}"
        result = spark_kpl.write(rows, stream, nativeDir=str(native_dir), producerIdleTimeoutMs=500,
                                 **kinesis.kpl_options())
        assert result.records_written == 400
        placed = list(native_dir.glob("*/kinesis_producer"))
        assert len(placed) == 1, placed
    assert len(cluster.executor_pids()) == 2
    records = kinesis.read_records(stream)
    assert Counter(r.data for r in records) == Counter({f"row-{i}".encode(): 3 for i in range(400)})
