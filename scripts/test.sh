#!/usr/bin/env bash
# The whole suite: installs what it needs, builds the jar, runs the JVM unit tests, then pytest end to
# end on every Spark line the one jar serves: the whole suite on Spark 4.1 (.venv), and every test that
# runs Spark (marker uses_spark, less one_spark_line) on 3.5, 4.0 and the newest release (.venv-sparkNN). Extra arguments go
# to pytest. Times per line: docs/spark-versions.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
echo "== lint"
.venv/bin/ruff check --config python/pyproject.toml python scripts bench tests
echo "== mypy"
.venv/bin/mypy --config-file python/pyproject.toml  # the package, scripts/ and bench/
.venv/bin/mypy --config-file python/pyproject.toml tests  # apart: tests/ has its own example_job module
scripts/build.sh shadedJar mavenRepo examplesJar foreignKplJar testPrograms miniHadoop test  # miniHadoop: YARN and HDFS for tests/sink/deploy/test_yarn.py

# pytest on one Spark line; collecting no tests (exit status 5) is a failure here.
run_pytest_on() {
  local line="$1" venv="$2" status=0
  shift 2
  echo "== pytest on Spark $line ($venv)"
  "$venv/bin/python" -m pytest tests --durations=15 "$@" || status=$?
  if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests on Spark $line; that is a failure here" >&2
    return 1
  fi
  return "$status"
}

status=0
run_pytest_on 4.1 .venv "$@" || status=1
for line in 3.5 4.0 4.3; do
  run_pytest_on "$line" ".venv-spark${line/./}" -m "uses_spark and not one_spark_line" "$@" || status=1
done
exit "$status"
