#!/usr/bin/env bash
# Throughput benchmark: this sink aggregating in the executor and per record (the KPL
# aggregating), the plain KPL loop, boto3 and aiokpl in foreachPartition, all writing the same records
# (100 B, 1 KB, 10 KB, and 100 B under Kinesis's quotas) to the project's own TLS endpoint on 127.0.0.1
# in one run, with what the endpoint stored per run (user records and bytes per Kinesis record); plus
# cold start, per-task overhead and a kinesis-mock figure. Writes bench/results/throughput/throughput.{json,png};
# bench/report.py prints the tables and targets.
# Extra arguments go to bench/throughput.py (e.g. --small-records 200000 --runs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
[ -f "build/libs/spark-kpl-$(cat python/spark_kpl/VERSION).jar" ] || scripts/build.sh
.venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements-bench.txt
exec .venv/bin/python bench/throughput.py "$@"
