"""The option reference and the config example are generated from the JVM declarations and must
match them, so the docs cannot drift from the code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import spark_kpl

REPO = Path(__file__).resolve().parents[1]


def generated(format_name: str) -> str:
    import pyspark

    spark_jars = Path(pyspark.__file__).parent / "jars"
    return subprocess.run(
        ["java", "-cp", f"{spark_kpl.jar_path()}:{spark_jars}/*", "sparkkpl.tools.OptionReference", format_name],
        check=True, capture_output=True, text=True, timeout=120).stdout


@pytest.mark.parametrize("format_name, committed", [
    ("markdown", "docs/options.md"),
    ("conf", "conf/spark-defaults.conf.example"),
])
def test_committed_reference_matches_the_declarations(format_name, committed):
    assert (REPO / committed).read_text() == generated(format_name), \
        f"{committed} is stale: run scripts/gen-docs.sh"
