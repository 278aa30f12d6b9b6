#!/usr/bin/env bash
# The main job, end to end on this machine: installs only what it needs (scripts/install.sh --demo: no
# test or lint tools, one Spark line), builds the jar, starts the embedded Kinesis (kinesis-local on
# 127.0.0.1), writes 100,000 rows from PySpark through the real KPL, reads the stream back, and checks
# every row arrived exactly once with its partition key. Non-zero exit on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh --demo
scripts/build.sh
exec .venv/bin/python scripts/demo_job.py "$@"
