#!/usr/bin/env bash
# Regenerates docs/options.md and conf/spark-defaults.conf.example from the JVM option declarations.
# tests/test_docs.py fails when the committed files differ from what this writes.
set -euo pipefail
cd "$(dirname "$0")/.."
jar=build/libs/spark-kpl-$(cat python/spark_kpl/VERSION).jar
spark_jars=$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
reference() { java -cp "$jar:$spark_jars/*" sparkkpl.tools.OptionReference "$1"; }
reference markdown > docs/options.md
reference conf > conf/spark-defaults.conf.example
