#!/bin/bash
# Databricks cluster-scoped init script for spark-kpl (docs/recipes/databricks.md): on every node, before
# Spark starts, check the node can run the KPL's native daemon and place it where the executors will
# look (spark.kpl.nativeDir). The jar itself comes from the cluster library; this script reads a copy
# of it from a volume, because libraries are installed after init scripts run.
#
# Settings (cluster environment variables), with their defaults:
#   SPARK_KPL_JAR         /Volumes/main/default/libs/spark-kpl-0.2.0.jar
#   SPARK_KPL_NATIVE_DIR  /local_disk0/spark-kpl/native    (then spark.kpl.nativeDir in the Spark config)
set -euo pipefail

jar="${SPARK_KPL_JAR:-/Volumes/main/default/libs/spark-kpl-0.2.0.jar}"
native_dir="${SPARK_KPL_NATIVE_DIR:-/local_disk0/spark-kpl/native}"

say() { echo "spark-kpl init: $*"; }

[ -r "$jar" ] || { say "cannot read $jar (set SPARK_KPL_JAR to the jar in a volume)" >&2; exit 1; }

# The aarch64 daemon needs libuuid.so.1; Databricks' images are Ubuntu, where the package is libuuid1.
if ! ldconfig -p | grep -q 'libuuid\.so\.1 '; then
  say "installing libuuid1"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libuuid1 >/dev/null
fi

# The executors run as the user this script runs as (root on classic clusters): the folder must be theirs.
mkdir -p "$(dirname "$native_dir")"
[ -d "$native_dir" ] || mkdir -m 0700 "$native_dir"
# PlaceDaemon is the executors' own placement code: it refuses what they would refuse, naming why.
java=java
[ -z "${JAVA_HOME:-}" ] || java="$JAVA_HOME/bin/java"
daemon=$("$java" -cp "$jar" sparkkpl.tools.PlaceDaemon "$native_dir")
say "native daemon ready at $daemon; Spark config: spark.kpl.nativeDir $native_dir"
