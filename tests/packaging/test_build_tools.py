"""Building the jar and the wheel needs a JDK, Gradle and a Python with pip, not the test tools:
scripts/build.sh and scripts/build-wheel.sh run in a copy of the checkout that has no .venv, with a
stand-in gradle that records how it was called and makes the jar."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VERSION = (REPO / "python" / "spark_kpl" / "VERSION").read_text().strip()

FAKE_GRADLE = """#!/bin/sh
echo "$@" > "$GRADLE_ARGS"
mkdir -p build/libs && echo jar > build/libs/spark-kpl-{version}.jar
"""


def test_without_the_venv_the_jar_compiles_against_the_spark_line_the_test_venv_pins():
    pinned = re.search(r"^pyspark==(\d+\.\d+)\.", (REPO / "python" / "requirements-demo.txt").read_text(), re.M)
    declared = re.search(r"^def sparkVersion = '(\d+\.\d+)\.\d+'$", (REPO / "build.gradle").read_text(), re.M)
    assert pinned and declared and pinned.group(1) == declared.group(1)


def test_the_wheel_builds_without_the_test_venv(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    for script in ("build.sh", "build-wheel.sh"):
        shutil.copy2(REPO / "scripts" / script, checkout / "scripts" / script)
    shutil.copytree(REPO / "python" / "spark_kpl", checkout / "python" / "spark_kpl",
                    ignore=shutil.ignore_patterns("__pycache__", "jars"))
    shutil.copy2(REPO / "python" / "pyproject.toml", checkout / "python" / "pyproject.toml")
    for name in ("LICENSE", "NOTICE", "README.md"):
        shutil.copy2(REPO / name, checkout / name)
    tools = tmp_path / "bin"
    tools.mkdir()
    gradle = tools / "gradle"
    gradle.write_text(FAKE_GRADLE.format(version=VERSION))
    gradle.chmod(gradle.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "PYTHON": sys.executable,
           "GRADLE_ARGS": str(tmp_path / "gradle-args")}
    build = subprocess.run([str(checkout / "scripts" / "build-wheel.sh")], capture_output=True, text=True, env=env,
                           timeout=300)
    assert build.returncode == 0, build.stderr[-3000:]
    assert (tmp_path / "gradle-args").read_text().split() == ["-q", "--no-daemon", "--console=plain", "shadedJar"]
    assert not (checkout / ".venv").exists()
    (wheel,) = (checkout / "dist").glob(f"spark_kpl-{VERSION}-*.whl")
    assert f"spark_kpl/jars/spark-kpl-{VERSION}.jar" in zipfile.ZipFile(wheel).namelist()
