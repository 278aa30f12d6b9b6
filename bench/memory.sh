#!/usr/bin/env bash
# Peak memory (JVM + KPL daemon RSS) vs input size, bounded vs unbounded, against a throttled endpoint; writes bench/results/throughput/memory.{json,png}.
set -euo pipefail; cd "$(dirname "$0")/.."; scripts/install.sh; .venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements-bench.txt; exec .venv/bin/python bench/memory.py "$@"
