"""Another KPL jar before the sink's on the classpath (EMR and Glue images, the awslabs connector's
shaded jar): it carries a native daemon at the same resource name, of a KPL release that cannot talk
to the sink's KPL (0.15's protocol differs; 1.0's daemon knows none of 1.1's messages). The sink must
still place and run its own, the one whose SHA-256 its build recorded."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

import spark_kpl

from example_job import REPO, submit_example_job

pytestmark = pytest.mark.uses_spark  # spark-submit of this Spark line

#: Fetched by the build (build.gradle, foreignKplJar): the last KPL of the com.amazonaws line, and the
#: 1.0 release before the sink's 1.1 (its classes unshaded, under the package the sink's KPL came from).
FOREIGN_KPLS = [REPO / "build" / "foreign-kpl" / f"amazon-kinesis-producer-{version}.jar"
                for version in ("0.15.12", "1.0.9")]
ROWS = 2000


def recorded_daemon_digests() -> set:
    with zipfile.ZipFile(spark_kpl.jar_path()) as jar:
        lines = jar.read("sparkkpl/natives/daemon-sha256.properties").decode().splitlines()
    return {line.split("=", 1)[1] for line in lines if "=" in line}


@pytest.mark.parametrize("foreign_kpl", FOREIGN_KPLS, ids=lambda jar: jar.stem)
def test_a_kpl_jar_first_on_the_classpath_changes_nothing(endpoint, ep_stream, tmp_path: Path,
                                                          foreign_kpl: Path) -> None:
    assert foreign_kpl.is_file(), "scripts/build.sh foreignKplJar fetches it"
    native = tmp_path / "native"
    options = [arg for name, value in {**endpoint.kpl_options(), "nativeDir": str(native)}.items()
               for arg in ("--option", f"{name}={value}")]

    spark_args = ["--master", "local[2]", "--conf", f"spark.pyspark.python={sys.executable}",
                  "--conf", f"spark.pyspark.driver.python={sys.executable}"]
    printed = submit_example_job(spark_args, ["--stream", ep_stream, "--rows", str(ROWS), *options],
                                 jars_before=[foreign_kpl])

    assert (printed["RESULT"]["records_written"], printed["RESULT"]["records_failed"]) == (ROWS, 0)
    assert sorted(r.data for r in endpoint.records(ep_stream)) == sorted(f"row-{i}".encode() for i in range(ROWS))
    placed = [path.parent.name for path in native.glob("*/kinesis_producer")]
    assert len(placed) == 1 and any(digest.startswith(placed[0]) for digest in recorded_daemon_digests()), (
        f"placed {placed}, not this jar's daemon")
