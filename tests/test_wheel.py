"""Installed as a user installs it: the wheel from scripts/build-wheel.sh, in a fresh venv beside
pyspark, with no checkout in sight, writes to Kinesis through the jar it carries."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import spark_kpl
from spark_kpl.testing.delivery import compare, numbered_expected

REPO = Path(__file__).resolve().parents[1]

def pinned(*names: str) -> list:
    """The versions requirements-dev.txt pins for ``names``: what the suite runs with."""
    lines = (REPO / "python" / "requirements-dev.txt").read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("==")[0].strip() in names]


def test_the_wheel_carries_the_jar_and_writes_from_a_fresh_venv(endpoint, ep_stream, tmp_path):
    build = subprocess.run([str(REPO / "scripts" / "build-wheel.sh")], capture_output=True, text=True, check=True)
    wheel = Path(REPO / build.stdout.strip().splitlines()[-1])
    assert wheel.name == f"spark_kpl-{spark_kpl.__version__}-py3-none-any.whl"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel),
                    *pinned("pyspark", "py4j")], check=True)
    env = {k: v for k, v in os.environ.items() if k not in (spark_kpl.JAR_ENV, "PYTHONPATH")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)

    jar = run("-m", "spark_kpl", "jar-path")
    assert jar.returncode == 0, jar.stderr
    assert Path(jar.stdout.strip()).is_relative_to(venv), jar.stdout
    harness = run("-c", "import spark_kpl.testing")
    assert "No module named 'spark_kpl.testing'" in harness.stderr, "the test harness must not ship"

    job = textwrap.dedent(f"""
        import json
        from pyspark.sql import SparkSession, functions as F
        import spark_kpl
        spark = spark_kpl.configure(SparkSession.builder.master("local[2]")).getOrCreate()
        rows = spark.range(1000).select(F.format_string("row-%d", "id").alias("data"),
                                        F.format_string("key-%d", F.col("id") % 101).alias("partitionKey"))
        result = spark_kpl.write(rows, {ep_stream!r}, partition_key="partitionKey", **{endpoint.kpl_options()!r})
        print("written", result.records_written)
        spark.stop()
    """)
    write = run("-c", job)
    assert "written 1000" in write.stdout, write.stdout + write.stderr[-3000:]
    report = compare(numbered_expected(1000), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.exactly_once, report.summary()
