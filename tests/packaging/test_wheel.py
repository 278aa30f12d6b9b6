"""Installed as a user installs it: the wheel from scripts/build-wheel.sh, in a fresh venv beside
pyspark, with no checkout in sight, writes to Kinesis through the jar it carries."""

from __future__ import annotations

import email
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Callable, Dict, NamedTuple

import pytest

import spark_kpl
from spark_kpl_testing.connect import ConnectServer, connect_unavailable
from spark_kpl_testing.delivery import compare, numbered_expected

from conftest import TEST_SPARK_CONF

REPO = Path(__file__).resolve().parents[2]

def requirement_lines(requirements: Path) -> list:
    """The requirement lines of ``requirements`` and of the files it includes (``-r``), comments dropped."""
    lines = []
    for line in requirements.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            lines += requirement_lines(requirements.parent / line[3:].strip())
        elif line:
            lines.append(line)
    return lines


def pinned(*names: str) -> list:
    """The versions requirements-dev.txt pins for ``names``: what the suite runs with."""
    return sorted({line for line in requirement_lines(REPO / "python" / "requirements-dev.txt")
                   if line.split("==")[0] in names})


#: Pyspark's connect extra, as requirements-dev.txt pins it.
CONNECT_CLIENT = ("grpcio", "grpcio-status", "googleapis-common-protos", "pandas", "pyarrow", "numpy", "zstandard")


class FreshVenv(NamedTuple):
    wheel: Path
    venv: Path
    run: Callable[..., subprocess.CompletedProcess]


@pytest.fixture(scope="module")
def wheel() -> Path:
    """The wheel scripts/build-wheel.sh builds."""
    build = subprocess.run([str(REPO / "scripts" / "build-wheel.sh")], capture_output=True, text=True, check=True)
    built = Path(REPO / build.stdout.strip().splitlines()[-1])
    assert built.name == f"spark_kpl-{spark_kpl.__version__}-py3-none-any.whl"
    return built


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> FreshVenv:
    """A venv holding only the built wheel, pyspark and the Connect client: no checkout in sight."""
    home = tmp_path_factory.mktemp("user")
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel),
                    *pinned("pyspark", "py4j", *CONNECT_CLIENT)], check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in (spark_kpl.JAR_ENV, "PYTHONPATH", "SPARK_CONNECT_MODE_ENABLED")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, *args], capture_output=True, text=True, cwd=home, env=env, timeout=300)

    return FreshVenv(wheel, venv, run)


def test_the_wheel_carries_the_licence_and_declares_it_with_the_readme_as_its_description(wheel):
    info = f"spark_kpl-{spark_kpl.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        metadata = email.message_from_bytes(archive.read(f"{info}/METADATA"))
        for name in ("LICENSE", "NOTICE"):
            assert archive.read(f"{info}/licenses/{name}") == (REPO / name).read_bytes(), name
        with zipfile.ZipFile(archive.open(f"spark_kpl/jars/spark-kpl-{spark_kpl.__version__}.jar")) as jar:
            assert jar.read("META-INF/LICENSE").startswith((REPO / "LICENSE").read_bytes())
    assert metadata["License-Expression"] == "Apache-2.0"
    assert sorted(metadata.get_all("License-File")) == ["LICENSE", "NOTICE"]
    assert {"Programming Language :: Python :: 3", "Typing :: Typed"} <= set(metadata.get_all("Classifier"))
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Changelog", "Issues"} <= set(urls), urls
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload(decode=True) == (REPO / "README.md").read_bytes()


def write_job(session: str, stream: str, options: Dict[str, str]) -> str:
    """A user's job: 1,000 numbered rows through spark_kpl.write on ``session``, printing the figure."""
    return textwrap.dedent(f"""
        from pyspark.sql import SparkSession, functions as F
        import spark_kpl
        spark = {session}
        rows = spark.range(1000).select(F.format_string("row-%d", "id").alias("data"),
                                        F.format_string("key-%d", F.col("id") % 101).alias("partitionKey"))
        result = spark_kpl.write(rows, {stream!r}, partition_key="partitionKey", **{options!r})
        print("written", result.records_written)
        spark.stop()
    """)


def test_the_wheel_carries_the_jar_and_writes_from_a_fresh_venv(fresh_venv, endpoint, ep_stream):
    jar = fresh_venv.run("-m", "spark_kpl", "jar-path")
    assert jar.returncode == 0, jar.stderr
    assert Path(jar.stdout.strip()).is_relative_to(fresh_venv.venv), jar.stdout
    with zipfile.ZipFile(fresh_venv.wheel) as wheel:
        folders = {name.split("/")[0] for name in wheel.namelist()}
    assert folders == {"spark_kpl", f"spark_kpl-{spark_kpl.__version__}.dist-info"}, "only the package ships"

    session = 'spark_kpl.configure(SparkSession.builder.master("local[2]")).getOrCreate()'
    write = fresh_venv.run("-c", write_job(session, ep_stream, endpoint.kpl_options()))
    assert "written 1000" in write.stdout, write.stdout + write.stderr[-3000:]
    report = compare(numbered_expected(1000), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()


def test_the_wheel_writes_from_a_connect_session_whose_server_has_its_jar(fresh_venv, endpoint, ep_stream):
    reason = connect_unavailable()
    if reason:
        pytest.skip(reason)
    jar = fresh_venv.run("-m", "spark_kpl", "jar-path").stdout.strip()
    with ConnectServer(jar, conf=TEST_SPARK_CONF) as server:
        session = f"SparkSession.builder.remote({server.url!r}).getOrCreate()"
        write = fresh_venv.run("-c", write_job(session, ep_stream, endpoint.kpl_options()))
    assert "written 1000" in write.stdout, write.stdout + write.stderr[-3000:]
    report = compare(numbered_expected(1000), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
