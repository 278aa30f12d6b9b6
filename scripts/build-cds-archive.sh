#!/usr/bin/env bash
# Builds a class-data archive (JDK 17's dynamic AppCDS) for the JVMs that write through the sink: runs a
# training job with spark-submit, whose driver JVM writes every class it loaded (the JDK's, Spark's,
# the sink's and the KPL's) to ARCHIVE when it exits. Later JVMs given -XX:SharedArchiveFile=ARCHIVE map
# those classes instead of loading them (bench/results/coldstart/README.md, "A JVM's first write").
#
#   scripts/build-cds-archive.sh ARCHIVE [spark-submit arguments: --master, --jars, the job and its arguments]
#
# The training job should be a short write of the production job's shape (a few hundred thousand rows).
# An archive serves JVMs of the same java build and the same class path as the training JVM; a JVM whose
# class path or jar differs prints a warning and runs without it. So train where the writers run: in
# local mode here, or on a node image that the executors share (the same SPARK_HOME, the same jar path),
# and ship the file to the same path on every node. Any spark.driver.extraJavaOptions you pass is replaced.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
archive=$(realpath -m "$1")
shift
mkdir -p "$(dirname "$archive")"
rm -f "$archive"
# -Xlog:cds=error: the JVM warns of each class it cannot archive (from signed jars, old class files)
spark-submit --conf "spark.driver.extraJavaOptions=-XX:ArchiveClassesAtExit=$archive -Xlog:cds=error" "$@"
# spark-submit returns when the driver JVM has exited, the archive written
[ -s "$archive" ] || { echo "no archive at $archive: did the driver JVM exit normally?" >&2; exit 1; }
echo "wrote $archive ($(du -h "$archive" | cut -f1)) for $(java -version 2>&1 | head -1); use it with"
echo "  --conf spark.driver.extraJavaOptions=-XX:SharedArchiveFile=$archive"
echo "  --conf spark.executor.extraJavaOptions=-XX:SharedArchiveFile=$archive"
