"""The route users take without the Python package: ``--packages io.github.sparkkpl:spark-kpl:<version>``
from the Maven repository folder scripts/build.sh publishes, and no ``--jars``.

Every example of examples/ runs as its usage line says, pasted into a shell at the checkout's root:
PySpark batch and streaming, Scala through ``spark-shell -i``, Java batch and streaming, and SQL. The
usage line is taken from the example's own header and run unchanged, ``--repositories
file://$PWD/build/maven-repo`` included (on Spark 4.0, the Scala one as its header says for 4.0). The test
adds only what a user's environment would hold: the endpoint's settings as ``spark.kpl.*`` config keys
(how the examples take settings), an Ivy home of its own that knows no other repository, and local mode.
The endpoint serves the usage lines' region and their stream ``clicks``; every record must arrive once,
with its key."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Dict, Iterator, List

import pyspark
import pytest

import spark_kpl
from spark_kpl_testing.cluster import spark_home
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.endpoint import KinesisEndpoint

from conftest import TEST_SPARK_CONF
from example_job import REPO

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


EXAMPLES = REPO / "examples"
#: What every usage line names: its region and its stream, served by the test's endpoint.
REGION, STREAM = "eu-west-1", "clicks"
#: The streaming examples' input, as the usage lines name it (relative to the folder they run in).
EVENTS_FOLDER = "events"
EVENTS = 500
SPARK_TOOLS = ("spark-submit", "spark-shell", "spark-sql")
SPARK_4 = int(pyspark.__version__.split(".")[0]) >= 4
#: Spark 4.0's spark-shell ignores -i (SPARK-52587, fixed in 4.1): the Scala example's header gives the
#: way around there, the file on standard input, which the test runs on 4.0.
SHELL_IGNORES_I = pyspark.__version__.startswith("4.0.")


def usage_line(example: Path) -> str:
    """The command in the example's header comment: the lines from one that starts with a Spark tool,
    joined over their trailing backslashes."""
    # A comment marker (Scala's //, SQL's --, Javadoc's *) is followed by a space; an option's -- is not.
    lines = [re.sub(r"^\s*(?:(?://|--|\*)\s+)?", "", line) for line in example.read_text().splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith(SPARK_TOOLS))
    command = [lines[start]]
    while command[-1].endswith("\\"):
        start += 1
        command.append(lines[start])
    return " ".join(line.rstrip("\\").strip() for line in command)


@pytest.fixture(scope="module")
def eu_endpoint() -> Iterator[KinesisEndpoint]:
    """The project's endpoint in the usage lines' region, so their ``spark.kpl.Region`` holds as written."""
    with KinesisEndpoint(region=REGION) as own:
        yield own


@pytest.fixture
def clicks(eu_endpoint: KinesisEndpoint) -> Iterator[str]:
    eu_endpoint.create_stream(STREAM, shards=2)
    yield STREAM
    eu_endpoint.delete_stream(STREAM)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A folder that looks like the checkout's root to the usage lines (its build/ and examples/), where the
    run's own files (events, checkpoints, spark-sql's catalog) land, apart from the real checkout."""
    for name in ("build", "examples"):
        (tmp_path / name).symlink_to(REPO / name)
    return tmp_path


def environment_args(endpoint: KinesisEndpoint, ivy: Path) -> List[str]:
    """What the test puts between the tool and the usage line's own arguments: local mode, the endpoint's
    settings, and an Ivy home whose only repository is the one the usage line gives."""
    settings: Dict[str, str] = {**TEST_SPARK_CONF,
                                **{f"spark.kpl.{name}": value for name, value in endpoint.kpl_options().items()},
                                "spark.jars.ivy": str(ivy), "spark.jars.ivySettings": str(ivy / "ivysettings.xml")}
    return ["--master", "local[2]", *(arg for key, value in settings.items() for arg in ("--conf", f"{key}={value}"))]


def run_as_pasted(example: Path, folder: Path, extra: List[str]) -> str:
    """Runs the example's usage line through bash in ``folder``, with ``extra`` after the tool's name and
    the tool on PATH; returns what it printed. A failed run fails the test with the end of its log."""
    usage = usage_line(example)
    if example.suffix == ".scala" and SHELL_IGNORES_I:
        usage = usage.replace(" -i ", " < ")
    assert COORDINATES in usage, f"{example.name}'s usage line must name {COORDINATES}"
    tool, arguments = usage.split(" ", 1)
    env = {**os.environ, "PATH": f"{spark_home()}/bin:{os.environ['PATH']}", "PYSPARK_PYTHON": sys.executable}
    started = time.monotonic()
    run = subprocess.run(["bash", "-c", f"{tool} {shlex.join(extra)} {arguments}"], cwd=folder, env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    print(f"{example.name}: {time.monotonic() - started:.0f} s")
    problems = [line for line in run.stderr.splitlines() if " INFO " not in line]
    assert run.returncode == 0, "\n".join(problems[-60:]) + run.stdout[-2000:]
    return run.stdout


def write_events(folder: Path) -> Dict[bytes, str]:
    """JSON lines files of events in ``folder``; returns the record each becomes (Spark's to_json of the
    event) and its key (the user)."""
    folder.mkdir()
    events = [{"user": f"u-{i % 10}", "action": f"click-{i}"} for i in range(EVENTS)]
    for part in range(2):
        (folder / f"part-{part}.json").write_text("".join(json.dumps(event) + "\n" for event in events[part::2]))
    return {json.dumps(event, separators=(",", ":")).encode(): event["user"] for event in events}


def numbered_rows(rows: int) -> Dict[bytes, str]:
    return {f"row-{i}".encode(): f"key-{i % 10}" for i in range(rows)}


def assert_every_record_arrived_once(endpoint: KinesisEndpoint, expected: Dict[bytes, str]) -> None:
    report = compare(expected, ((r.data, r.partition_key) for r in endpoint.records(STREAM)))
    assert report.exactly_once, report.summary()


BATCH = [
    pytest.param(EXAMPLES / "python" / "write_rows.py", id="python"),
    pytest.param(EXAMPLES / "scala" / "write_rows.scala", id="scala"),
    pytest.param(EXAMPLES / "java" / "sparkkpl" / "examples" / "WriteRows.java", id="java"),
    pytest.param(EXAMPLES / "sql" / "write_rows.sql", id="sql", marks=pytest.mark.skipif(
        not SPARK_4, reason="SQL tables USING kpl need Spark 4.0+: Spark 3.5 reads a catalog table through the "
                            "v1 API only (docs/deploying.md)")),
]
STREAMING = [
    pytest.param(EXAMPLES / "python" / "stream_events.py", id="python"),
    pytest.param(EXAMPLES / "java" / "sparkkpl" / "examples" / "StreamEvents.java", id="java"),
]


@pytest.mark.uses_spark
@pytest.mark.parametrize("example", BATCH)
def test_the_batch_example_writes_every_row_as_its_usage_line_says(example, published, ivy, eu_endpoint, clicks,
                                                                    checkout):
    assert EXAMPLES_JAR.is_file(), "scripts/build.sh examplesJar builds the Java examples"
    printed = run_as_pasted(example, checkout, environment_args(eu_endpoint, ivy))
    # spark-shell -i ends with status 0 even when a line of its script fails: what it printed tells.
    assert example.suffix == ".sql" or f"wrote 1000 rows to {STREAM}" in printed, printed[-3000:]
    assert_every_record_arrived_once(eu_endpoint, numbered_rows(1000))
    assert_only_the_sink_was_fetched(ivy)


@pytest.mark.uses_spark
@pytest.mark.parametrize("example", STREAMING)
def test_the_streaming_example_sends_every_event_as_its_usage_line_says(example, published, ivy, eu_endpoint,
                                                                         clicks, checkout):
    assert EXAMPLES_JAR.is_file(), "scripts/build.sh examplesJar builds the Java examples"
    expected = write_events(checkout / EVENTS_FOLDER)
    printed = run_as_pasted(example, checkout, environment_args(eu_endpoint, ivy))
    assert f"streamed {EVENTS_FOLDER} to {STREAM}" in printed
    assert_every_record_arrived_once(eu_endpoint, expected)
    assert_only_the_sink_was_fetched(ivy)
