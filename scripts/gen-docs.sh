#!/usr/bin/env bash
# Regenerates docs/options.md and conf/spark-defaults.conf.example from the JVM option declarations, and
# python/spark_kpl/sink_facts.json (every name the Python package hands to the JVM or reads back, the
# record-id layout) from the JVM's own declarations.
# tests/packaging/test_docs.py fails when the committed files differ from what this writes.
set -euo pipefail
cd "$(dirname "$0")/.."
jar=build/libs/spark-kpl-$(cat python/spark_kpl/VERSION).jar
spark_jars=$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
tool() { java -cp "$jar:$spark_jars/*" "sparkkpl.tools.$@"; }
tool OptionReference markdown > docs/options.md
tool OptionReference conf > conf/spark-defaults.conf.example
tool SinkFacts > python/spark_kpl/sink_facts.json
