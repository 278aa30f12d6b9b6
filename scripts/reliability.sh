#!/usr/bin/env bash
# Reliability scenarios: the sink through the real KPL against the project's own
# fault-injecting endpoint; writes docs/reliability.md. Arguments go to scripts/reliability.py
# (e.g. --records 2000; --only "no faults" runs that scenario alone and puts its row into the doc as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
[ -f "build/libs/spark-kpl-$(cat python/spark_kpl/VERSION).jar" ] || scripts/build.sh
exec .venv/bin/python scripts/reliability.py "$@"
