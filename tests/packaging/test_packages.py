"""The route Scala, Java and SQL users take: ``--packages io.github.sparkkpl:spark-kpl:<version>`` from the
Maven repository folder scripts/build.sh publishes, with no Python package and no ``--jars``. The Java and
SQL examples of examples/ run that way against the project's endpoint, through the real KPL."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Dict, List

import pyspark
import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare

from conftest import TEST_SPARK_CONF
from example_job import REPO, run_spark

GROUP, ARTIFACT = "io.github.sparkkpl", "spark-kpl"
COORDINATES = f"{GROUP}:{ARTIFACT}:{spark_kpl.__version__}"
MAVEN_REPO = REPO / "build" / "maven-repo"
PUBLISHED = MAVEN_REPO / Path(*GROUP.split(".")) / ARTIFACT / spark_kpl.__version__
EXAMPLES_JAR = REPO / "build" / "examples" / "spark-kpl-examples.jar"
#: Ivy's settings for the submits: a resolver chain of nothing but what --repositories adds, so that
#: --packages looks in no other repository (no network, no ~/.m2) and must find everything in the folder.
IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="given"/>
  <resolvers><chain name="given"/></resolvers>
</ivysettings>
"""
ROWS = 500


@pytest.fixture(scope="module")
def published() -> Path:
    jar = PUBLISHED / f"{ARTIFACT}-{spark_kpl.__version__}.jar"
    assert jar.is_file(), "scripts/build.sh mavenRepo publishes the jar into build/maven-repo"
    assert jar.read_bytes() == spark_kpl.jar_path().read_bytes(), "build/maven-repo is stale: scripts/build.sh"
    return jar


@pytest.fixture
def ivy(tmp_path: Path) -> Path:
    """An ivy home of the test's own (spark.jars.ivy), empty at the start, so nothing comes from a cache."""
    home = tmp_path / "ivy"
    home.mkdir()
    (home / "ivysettings.xml").write_text(IVY_SETTINGS)
    return home


def packages_args(ivy: Path, endpoint, conf: Dict[str, str]) -> List[str]:
    """spark-submit's arguments for the sink by --packages, local mode, the KPL pointed at the endpoint
    through spark.kpl.* config keys."""
    settings = {**TEST_SPARK_CONF, **{f"spark.kpl.{name}": value for name, value in endpoint.kpl_options().items()},
                "spark.jars.ivy": str(ivy), "spark.jars.ivySettings": str(ivy / "ivysettings.xml"), **conf}
    return ["--master", "local[2]", "--packages", COORDINATES, "--repositories", MAVEN_REPO.as_uri(),
            *(arg for key, value in settings.items() for arg in ("--conf", f"{key}={value}"))]


def assert_every_row_arrived_once(endpoint, stream: str) -> None:
    expected = {f"row-{i}".encode(): f"key-{i % 10}" for i in range(ROWS)}
    report = compare(expected, ((r.data, r.partition_key) for r in endpoint.records(stream)))
    assert report.exactly_once, report.summary()


def assert_only_the_sink_was_fetched(ivy: Path) -> None:
    """The POM declares no dependency, so --packages fetched the one jar and nothing else."""
    assert sorted(path.name for path in (ivy / "jars").iterdir()) == [f"{GROUP}_{ARTIFACT}-{spark_kpl.__version__}.jar"]


def test_the_pom_names_the_artifact_and_its_licence_and_no_dependency(published):
    namespace = {"m": "http://maven.apache.org/POM/4.0.0"}
    pom = ElementTree.parse(PUBLISHED / f"{ARTIFACT}-{spark_kpl.__version__}.pom").getroot()
    assert [pom.findtext(f"m:{name}", namespaces=namespace) for name in ("groupId", "artifactId", "version")] == \
        COORDINATES.split(":")
    assert pom.find("m:dependencies", namespace) is None
    assert pom.findtext("m:licenses/m:license/m:name", namespaces=namespace) == "Apache-2.0"


@pytest.mark.uses_spark
def test_the_java_example_writes_every_row_with_the_sink_from_packages(published, ivy, endpoint, ep_stream):
    assert EXAMPLES_JAR.is_file(), "scripts/build.sh examplesJar builds the examples"
    run = run_spark("spark-submit", [*packages_args(ivy, endpoint, {}), "--class", "sparkkpl.examples.WriteRows",
                                     str(EXAMPLES_JAR), ep_stream, str(ROWS)])
    assert f"wrote {ROWS} rows to {ep_stream}" in run.stdout
    assert_every_row_arrived_once(endpoint, ep_stream)
    assert_only_the_sink_was_fetched(ivy)


@pytest.mark.uses_spark
@pytest.mark.skipif(int(pyspark.__version__.split(".")[0]) < 4, reason="SQL tables USING kpl need Spark 4.0+: "
                    "Spark 3.5 reads a catalog table through the v1 API only (docs/deploying.md)")
def test_the_sql_example_writes_every_row_with_the_sink_from_packages(published, ivy, endpoint, ep_stream,
                                                                     tmp_path):
    # spark-sql keeps its catalog (metastore_db, spark-warehouse) in the folder it runs in.
    run_spark("spark-sql", [*packages_args(ivy, endpoint, {}), "-d", f"stream={ep_stream}", "-d", f"rows={ROWS}",
                            "-f", str(REPO / "examples" / "sql" / "write_rows.sql")], cwd=tmp_path)
    assert_every_row_arrived_once(endpoint, ep_stream)
    assert_only_the_sink_was_fetched(ivy)
