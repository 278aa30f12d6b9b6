#!/usr/bin/env bash
# Regenerates docs/extraction-contention.md: the contention tests of tests/sink/daemon/test_native_extraction.py
# (ours asserted, the stock KPL's extraction recorded), the other-user rows only when run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
[ -f "build/libs/spark-kpl-$(cat python/spark_kpl/VERSION).jar" ] || scripts/build.sh
SPARK_KPL_CONTENTION_REPORT="$PWD/docs/extraction-contention.md" exec .venv/bin/python -m pytest -q \
    tests/sink/daemon/test_native_extraction.py -k "extracting_at_once or same_contention or folder_of_another_user"
