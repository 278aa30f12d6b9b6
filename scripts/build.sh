#!/usr/bin/env bash
# Builds build/libs/spark-kpl-<version>.jar against the pinned pyspark's jars.
set -euo pipefail
cd "$(dirname "$0")/.."
spark_jars=$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
gradle -q --no-daemon --console=plain "-PsparkJars=$spark_jars" "${@:-shadedJar}"
