"""A producer closing at JVM exit flushes, within a bound, what it had accepted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyspark

import spark_kpl
from spark_kpl.testing.delivery import compare

REPO = Path(__file__).resolve().parents[1]
TEST_CLASSES = REPO / "build" / "classes" / "java" / "test"


def test_a_normal_jvm_exit_delivers_every_accepted_record(kinesis, stream, tmp_path):
    count = 3000
    # A long buffering time: without the shutdown flush, nothing would be sent before exit.
    options = {**kinesis.kpl_options(), "RecordMaxBufferedTime": "60000", "nativeDir": str(tmp_path / "native")}
    classpath = f"{TEST_CLASSES}:{spark_kpl.jar_path()}:{Path(pyspark.__file__).parent / 'jars'}/*"
    run = subprocess.run(
        ["java", "-cp", classpath, "sparkkpl.producer.ShutdownFlushMain", stream, str(count),
         *(f"{name}={value}" for name, value in options.items())],
        capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"added {count}, acknowledged so far 0" in run.stdout
    expected = {f"exit-{i}".encode(): f"key-{i}" for i in range(count)}
    report = compare(expected, ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.at_least_once, report.summary()
