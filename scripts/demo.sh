#!/usr/bin/env bash
# The main job, end to end on this machine: installs what it needs, builds the jar, starts the
# embedded Kinesis, writes 100,000 rows from PySpark through the real KPL, reads the stream back,
# and checks every row arrived exactly once with its partition key. Non-zero exit on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
scripts/build.sh
exec .venv/bin/python scripts/demo_job.py "$@"
