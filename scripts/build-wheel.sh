#!/usr/bin/env bash
# Builds dist/spark_kpl-<version>-py3-none-any.whl carrying the jar (spark_kpl/jars/), from a
# staging copy of python/, so the source tree never holds a copy of the jar that could go stale.
# The test harness is a package of its own (python/testing), not part of the wheel. Needs a JDK 17,
# Gradle and a Python 3.9+ with pip ($PYTHON; default .venv's where it exists, else python3): none of the
# test tools.
#
#   scripts/build-wheel.sh --sdist   also dist/spark_kpl-<version>.tar.gz, the jar inside too, and the wheel
#                                    built from it (so the sdist holds all a wheel needs); needs the `build`
#                                    package (python/requirements-dev.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
sdist=false
case "${1:-}" in
  --sdist) sdist=true ;;
  "") ;;
  *) echo "usage: scripts/build-wheel.sh [--sdist]" >&2; exit 2 ;;
esac
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
rm -f "dist/spark_kpl-$version-"*.whl "dist/spark_kpl-$version.tar.gz"
if $sdist; then
  # setuptools' file by file account is shown only when the build fails.
  if ! log=$("$python" -m build --outdir dist "$staging" 2>&1); then echo "$log" >&2; exit 1; fi
  ls "dist/spark_kpl-$version.tar.gz"
else
  "$python" -m pip wheel -q --disable-pip-version-check --no-deps -w dist "$staging"
fi
ls dist/spark_kpl-"$version"-*.whl
