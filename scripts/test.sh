#!/usr/bin/env bash
# The whole suite: installs what it needs, builds the jar, runs the JVM unit tests, then pytest
# (end to end against the embedded Kinesis, the real KPL and real Spark). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
scripts/build.sh shadedJar test
status=0
.venv/bin/python -m pytest tests "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure here" >&2
  exit 1
fi
exit "$status"
