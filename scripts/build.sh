#!/usr/bin/env bash
# Builds build/libs/spark-kpl-<version>.jar and publishes it, as io.github.sparkkpl:spark-kpl:<version>, into
# the Maven repository folder build/maven-repo (for spark-submit --repositories file://...); or runs the
# Gradle tasks given. Needs a JDK 17 and Gradle only: Spark is compiled against the test venv's pyspark jars
# where .venv exists, else fetched from Maven Central (build.gradle).
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=("$@")
[ $# -gt 0 ] || tasks=(shadedJar mavenRepo)
spark_jars=()
if [ -x .venv/bin/python ]; then
  spark_jars=("-PsparkJars=$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')")
fi
gradle -q --no-daemon --console=plain "${spark_jars[@]}" "${tasks[@]}"
