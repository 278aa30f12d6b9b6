#!/usr/bin/env bash
# The soak: a streaming query through the real KPL at Kinesis's quota while faults
# come and go, for --minutes (default 20); writes docs/soak.md. Run on demand, not in CI. Arguments go to
# scripts/soak.py (e.g. --minutes 4 --fault-every 25).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
[ -f "build/libs/spark-kpl-$(cat python/spark_kpl/VERSION).jar" ] || scripts/build.sh
exec .venv/bin/python scripts/soak.py "$@"
