#!/usr/bin/env bash
# The whole suite: installs what it needs, builds the jar, runs the JVM unit tests, then pytest
# end to end on Spark 4.1 (.venv), then every test that runs Spark again on Spark 3.5
# (.venv-spark35): one jar serves both lines. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
echo "== lint"
.venv/bin/ruff check --config python/pyproject.toml python scripts tests
echo "== mypy"
.venv/bin/mypy --config-file python/pyproject.toml  # the package and scripts/
.venv/bin/mypy --config-file python/pyproject.toml tests  # apart: tests/ has its own example_job module
scripts/build.sh shadedJar foreignKplJar test

run_pytest() {
  local label="$1" status=0
  shift
  echo "== pytest on $label"
  "$@" || status=$?
  if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests on $label; that is a failure here" >&2
    return 1
  fi
  return "$status"
}

status=0
run_pytest "Spark 4.1" .venv/bin/python -m pytest tests "$@" || status=1
run_pytest "Spark 3.5" .venv-spark35/bin/python -m pytest tests -m uses_spark "$@" || status=1
exit "$status"
