"""The option reference, the config example and the Python package's sink_facts.json are generated
from the JVM declarations and must match them, so neither the docs nor Python can drift from the code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import spark_kpl

REPO = Path(__file__).resolve().parents[1]


def generated(*tool: str) -> str:
    import pyspark

    spark_jars = Path(pyspark.__file__).parent / "jars"
    return subprocess.run(
        ["java", "-cp", f"{spark_kpl.jar_path()}:{spark_jars}/*", f"sparkkpl.tools.{tool[0]}", *tool[1:]],
        check=True, capture_output=True, text=True, timeout=120).stdout


@pytest.mark.parametrize("tool, committed", [
    (("OptionReference", "markdown"), "docs/options.md"),
    (("OptionReference", "conf"), "conf/spark-defaults.conf.example"),
    (("SinkFacts",), "python/spark_kpl/sink_facts.json"),
])
def test_committed_file_matches_the_declarations(tool, committed):
    assert (REPO / committed).read_text() == generated(*tool), \
        f"{committed} is stale: run scripts/gen-docs.sh"
