"""Another KPL jar before the sink's on the classpath (EMR and Glue images, the awslabs connector's
shaded jar): it carries a native daemon at the same resource name, of a KPL line that cannot talk to
the sink's KPL. The sink must still place and run its own, the one whose SHA-256 its build recorded."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

import spark_kpl

from example_job import REPO, submit_example_job

pytestmark = pytest.mark.uses_spark  # spark-submit of this Spark line

#: Fetched by the build (build.gradle, foreignKplJar): the last KPL of the com.amazonaws line.
FOREIGN_KPL = REPO / "build" / "foreign-kpl" / "amazon-kinesis-producer-0.15.12.jar"
ROWS = 2000


def recorded_daemon_digests() -> set:
    with zipfile.ZipFile(spark_kpl.jar_path()) as jar:
        lines = jar.read("sparkkpl/natives/daemon-sha256.properties").decode().splitlines()
    return {line.split("=", 1)[1] for line in lines if "=" in line}


def test_a_kpl_jar_first_on_the_classpath_changes_nothing(endpoint, ep_stream, tmp_path: Path) -> None:
    assert FOREIGN_KPL.is_file(), "scripts/build.sh foreignKplJar fetches it"
    native = tmp_path / "native"
    options = [arg for name, value in {**endpoint.kpl_options(), "nativeDir": str(native)}.items()
               for arg in ("--option", f"{name}={value}")]

    spark_args = ["--master", "local[2]", "--conf", f"spark.pyspark.python={sys.executable}",
                  "--conf", f"spark.pyspark.driver.python={sys.executable}"]
    printed = submit_example_job(spark_args, ["--stream", ep_stream, "--rows", str(ROWS), *options],
                                 jars_before=[FOREIGN_KPL])

    assert (printed["RESULT"]["records_written"], printed["RESULT"]["records_failed"]) == (ROWS, 0)
    assert sorted(r.data for r in endpoint.records(ep_stream)) == sorted(f"row-{i}".encode() for i in range(ROWS))
    placed = [path.parent.name for path in native.glob("*/kinesis_producer")]
    assert len(placed) == 1 and any(digest.startswith(placed[0]) for digest in recorded_daemon_digests()), (
        f"placed {placed}, not this jar's daemon")
