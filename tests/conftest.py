"""Fixtures for the end-to-end suite: the embedded Kinesis, Spark in local mode and on a real
standalone cluster, all on loopback. Importing this module makes the test process (and so every
JVM and KPL daemon it starts) unable to reach the EC2 metadata address."""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from spark_kpl_testing.env import apply_loopback_env

apply_loopback_env()

import spark_kpl  # noqa: E402


def _snapshot_jar() -> None:
    """Run the whole session on a copy of the jar, so a rebuild meanwhile cannot change it mid-run."""
    snapshot = Path(tempfile.mkdtemp(prefix="spark-kpl-jar-")) / spark_kpl.jar_path().name
    shutil.copyfile(spark_kpl.jar_path(), snapshot)
    os.environ[spark_kpl.JAR_ENV] = str(snapshot)


_snapshot_jar()


from spark_kpl_testing.cluster import StandaloneCluster  # noqa: E402
from spark_kpl_testing.connect import ConnectServer, connect_unavailable  # noqa: E402
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint  # noqa: E402
from spark_kpl_testing.kinesis import LocalKinesis  # noqa: E402
from spark_kpl_testing.processes import stop_process_tree  # noqa: E402
from spark_kpl_testing.session import spark_session  # noqa: E402

#: Producers close soon after a test's write, so no daemon outlives the test that started it.
TEST_SPARK_CONF: Dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.kpl.producerIdleTimeoutMs": "2000",
}

_stream_numbers = itertools.count()

#: build.gradle's source set testPrograms: the Java programs some tests run against the jar.
TEST_PROGRAMS = Path(__file__).resolve().parents[1] / "build" / "classes" / "java" / "testPrograms"

#: Tests using these run on every Spark line (scripts/test.sh selects them with -m uses_spark).
_SPARK_FIXTURES = {"spark", "cluster", "cluster_spark", "connect_server", "connect_spark", "any_spark"}


#: The benchmarks' harness is in .venv only (scripts/install.sh), where its tests run with the whole suite;
#: the other Spark lines' venvs run no test of it, so they do not collect them.
collect_ignore = [] if importlib.util.find_spec("spark_kpl_bench") else ["unit/test_payload_units.py"]

_IS_ROOT = os.geteuid() == 0
#: Root-only safety checks collected in this session: they skip without root, and the session's
#: summary says so in one line rather than leaving it to a skip count.
_root_only: list = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "uses_spark: runs Spark; scripts/test.sh runs it on every Spark line")
    config.addinivalue_line("markers", "one_spark_line: runs Spark, but tests what no Spark line changes (the "
                                       "sink's Kinesis side): scripts/test.sh runs it with the whole suite on 4.1 only")
    config.addinivalue_line("markers", "root_only: a safety check that needs root (another user's files)")


def pytest_collection_modifyitems(items: list) -> None:
    for item in items:
        if _SPARK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.uses_spark)
        if item.get_closest_marker("root_only"):
            _root_only.append(item.name)
            if not _IS_ROOT:
                item.add_marker(pytest.mark.skip(reason="a root-only safety check, and this run is not root"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _root_only:
        verdict = "ran as root" if _IS_ROOT else "NOT run (not root): " + ", ".join(_root_only)
        terminalreporter.write_line(f"root-only safety checks: {len(_root_only)} {verdict}")


@pytest.fixture(scope="session")
def test_programs() -> Path:
    """The compiled test programs; ``scripts/build.sh testPrograms`` builds them (scripts/test.sh does)."""
    assert TEST_PROGRAMS.is_dir(), "scripts/build.sh testPrograms builds the Java test programs"
    return TEST_PROGRAMS


@pytest.fixture(scope="session")
def kinesis() -> Iterator[LocalKinesis]:
    """The embedded kinesis-mock; ``SPARK_KPL_KINESIS=localstack`` swaps in LocalStack through
    testcontainers where a Docker engine exists (see spark_kpl_testing.containers)."""
    if os.environ.get("SPARK_KPL_KINESIS") == "localstack":
        from spark_kpl_testing.containers import LocalStackKinesis

        local: LocalKinesis = LocalStackKinesis()
    else:
        local = LocalKinesis()
    with local:
        yield local


@pytest.fixture
def stream(kinesis: LocalKinesis, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh 2-shard stream per test, deleted afterwards."""
    name = f"t{next(_stream_numbers)}-{request.node.name[:40]}".replace("[", "-").replace("]", "")
    kinesis.create_stream(name, shards=2)
    yield name
    kinesis.delete_stream(name)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[KinesisEndpoint]:
    """The project's own TLS endpoint (fast, fault-injecting), one per test module."""
    with KinesisEndpoint() as own:
        yield own


@pytest.fixture(scope="module")
def limits_endpoint() -> Iterator[KinesisEndpoint]:
    """The project's endpoint held at Kinesis's own limits, data and control plane, one per test module."""
    with KinesisEndpoint(faults=Faults.kinesis_limits()) as own:
        yield own


@pytest.fixture(scope="module")
def two_core_workers() -> Iterator[StandaloneCluster]:
    """A cluster of its own for a module's sessions: two workers of two cores, so up to four executor
    JVMs of one core each."""
    with StandaloneCluster(workers=2, cores_per_worker=2, memory_per_worker="2g") as standalone:
        yield standalone


@pytest.fixture
def ep_stream(endpoint: KinesisEndpoint) -> Iterator[str]:
    """A fresh 2-shard stream on the endpoint; faults and outages cleared afterwards, whatever the
    test did (it may have deleted the stream itself)."""
    name = f"ep{next(_stream_numbers)}"
    endpoint.create_stream(name, shards=2)
    yield name
    endpoint.set_faults(Faults())
    endpoint.end_outage()
    if name in endpoint.streams:
        endpoint.delete_stream(name)


@pytest.fixture(scope="session", autouse=True)
def driver_jvm_stopped_at_the_end() -> Iterator[None]:
    """PySpark's driver JVM serves every session of this process and would end only after pytest,
    when it notices its parent has gone; a producer whose daemon a test killed may meanwhile start
    daemons for a minute. Stop it, and what it started, by pid."""
    yield
    from pyspark import SparkContext

    process = getattr(SparkContext._gateway, "proc", None)
    if process is not None:
        SparkContext._gateway = None
        SparkContext._jvm = None
        stop_process_tree(process, timeout=30)


def _session(master: str, conf: Dict[str, str]):
    # Spark's own log level: the jvm_log fixture reads the sink's warnings.
    return spark_session("spark-kpl-tests", master, conf={**TEST_SPARK_CONF, **conf}, log_level=None)


@pytest.fixture(scope="module")
def spark():
    """Spark in local mode: tasks run in the test's own driver JVM."""
    session = _session("local[2]", {})
    yield session
    session.stop()


@pytest.fixture
def jvm_log(spark):
    """What the driver JVM (which runs local-mode tasks) logs during a test, through a log4j appender."""
    jvm = spark.sparkContext._jvm
    log4j = jvm.org.apache.logging.log4j
    context = log4j.LogManager.getContext(False)
    writer = jvm.java.io.StringWriter()
    appender = log4j.core.appender.WriterAppender.createAppender(
        log4j.core.layout.PatternLayout.createDefaultLayout(), None, writer, "spark-kpl-test", False, True)
    appender.start()
    root = context.getConfiguration().getRootLogger()
    root.addAppender(appender, None, None)
    context.updateLoggers()
    yield writer
    root.removeAppender("spark-kpl-test")
    context.updateLoggers()
    appender.stop()


@pytest.fixture(scope="module")
def cluster() -> Iterator[StandaloneCluster]:
    with StandaloneCluster(workers=2) as standalone:
        yield standalone


@pytest.fixture(scope="module")
def cluster_spark(cluster: StandaloneCluster):
    """Spark on the standalone cluster: each worker's executor is a JVM of its own."""
    session = _session(cluster.master_url, cluster.spark_conf())
    yield session
    session.stop()


@pytest.fixture(scope="module")
def connect_server() -> Iterator[ConnectServer]:
    """A Spark Connect server (a local-mode driver JVM) with the sink's jar, on a loopback port."""
    reason = connect_unavailable()
    if reason:
        pytest.skip(reason)
    with ConnectServer(str(spark_kpl.jar_path()), conf=TEST_SPARK_CONF) as server:
        yield server


@pytest.fixture(scope="module")
def connect_spark(connect_server: ConnectServer):
    """A Spark Connect client session of that server: no JVM in this process."""
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(connect_server.url).getOrCreate()
    yield session
    session.stop()
    # PySpark marks the process as a Connect client for good; later modules' sessions are classic.
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


@pytest.fixture(scope="module", params=["classic", "connect"])
def any_spark(request: pytest.FixtureRequest):
    """A classic local-mode session, then a Spark Connect client session: each test using it runs on both.
    Module-scoped, so that pytest runs a module's classic tests first and stops their session before the
    Connect one starts (PySpark starts no Connect client beside a running classic session)."""
    if request.param == "connect":
        yield request.getfixturevalue("connect_spark")
        return
    session = _session("local[2]", {})
    yield session
    session.stop()
