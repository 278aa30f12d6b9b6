#!/usr/bin/env bash
# Builds dist/spark_kpl-<version>-py3-none-any.whl carrying the jar (spark_kpl/jars/), from a
# staging copy of python/, so the source tree never holds a copy of the jar that could go stale.
# The test harness is a package of its own (python/testing), not part of the wheel. Needs a JDK 17,
# Gradle and a Python 3.9+ with pip ($PYTHON; default .venv's where it exists, else python3): none of the
# test tools.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
scripts/build.sh shadedJar
version=$(cat python/spark_kpl/VERSION)
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
cp -r python/pyproject.toml python/spark_kpl "$staging/"
cp LICENSE NOTICE README.md "$staging/"  # the real files, not python/'s links to them
rm -rf "$staging"/spark_kpl/__pycache__
mkdir -p "$staging/spark_kpl/jars" dist
cp "build/libs/spark-kpl-$version.jar" "$staging/spark_kpl/jars/"
rm -f "dist/spark_kpl-$version-"*.whl
"$python" -m pip wheel -q --disable-pip-version-check --no-deps -w dist "$staging"
ls dist/spark_kpl-"$version"-*.whl
