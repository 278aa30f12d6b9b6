"""scripts/build-cds-archive.sh, the class-data archive docs/tuning.md offers short-lived executors: a
training spark-submit writes it, and a later one given it maps the sink's classes from it and still
delivers every row once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

import spark_kpl
from spark_kpl_testing.cluster import spark_home
from spark_kpl_testing.delivery import compare

from conftest import TEST_SPARK_CONF
from example_job import REPO, run_spark

pytestmark = [pytest.mark.uses_spark, pytest.mark.one_spark_line]  # the JDK's archive, whatever the Spark line
ROWS = 300
#: What -Xlog:class+load says of a class the JVM mapped from the archive.
FROM_ARCHIVE = re.compile(r" (sparkkpl\.[\w.$]+) source: shared objects file")


def submit_args(endpoint, stream: str) -> List[str]:
    """spark-submit's arguments (local mode, the jar on --jars) and the example job's, for ROWS rows."""
    conf = {**TEST_SPARK_CONF, "spark.pyspark.python": sys.executable, "spark.pyspark.driver.python": sys.executable}
    options = [arg for name, value in endpoint.kpl_options().items() for arg in ("--option", f"{name}={value}")]
    return ["--master", "local[2]", "--jars", str(spark_kpl.jar_path()),
            *(arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")),
            str(REPO / "scripts" / "example_job.py"), "--stream", stream, "--rows", str(ROWS), *options]


def test_a_job_given_the_archive_maps_the_sinks_classes_from_it_and_writes_every_row(endpoint, ep_stream,
                                                                                    tmp_path: Path):
    archive = tmp_path / "spark-kpl.jsa"
    endpoint.create_stream("cds-training", shards=2)
    # As a user runs it: spark-submit from the PATH of the Spark the writers use.
    env = {**os.environ, "PATH": f"{spark_home()}/bin{os.pathsep}{os.environ['PATH']}"}
    training = subprocess.run([str(REPO / "scripts" / "build-cds-archive.sh"), str(archive),
                               *submit_args(endpoint, "cds-training")],
                              capture_output=True, text=True, timeout=300, env=env)
    assert training.returncode == 0, training.stderr[-3000:]
    assert archive.stat().st_size > 0

    class_log = tmp_path / "classes.log"
    args = submit_args(endpoint, ep_stream)
    run_spark("spark-submit", ["--conf", f"spark.driver.extraJavaOptions=-XX:SharedArchiveFile={archive} "
                               f"-Xlog:class+load=info:file={class_log}", *args])

    mapped = set(FROM_ARCHIVE.findall(class_log.read_text()))
    assert {"sparkkpl.spark.KplDataWriter", "sparkkpl.producer.SharedProducer"} <= mapped, sorted(mapped)[:20]
    expected = {f"row-{i}".encode(): f"key-{i % 10}" for i in range(ROWS)}
    report = compare(expected, ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
