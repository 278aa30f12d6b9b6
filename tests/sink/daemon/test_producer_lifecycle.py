"""A producer closing at JVM exit flushes, within a bound, what it had accepted."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pyspark
import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare

pytestmark = pytest.mark.uses_spark  # a JVM with this Spark line's jars


def run_java_main(test_programs: Path, main: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """Runs one of the Java test programs against the built jar and Spark's jars."""
    classpath = f"{test_programs}:{spark_kpl.jar_path()}:{Path(pyspark.__file__).parent / 'jars'}/*"
    run = subprocess.run(["java", "-cp", classpath, main, *args], capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def as_arguments(options) -> list:
    return [f"{name}={value}" for name, value in options.items()]


def test_a_normal_jvm_exit_delivers_every_accepted_record(kinesis, stream, tmp_path, test_programs):
    count = 3000
    # A long buffering time: without the shutdown flush, nothing would be sent before exit. Caps so high
    # that a lane's first budget (1/1024 of them) holds every record: a task waiting for room would flush.
    options = {**kinesis.kpl_options(), "RecordMaxBufferedTime": "60000", "nativeDir": str(tmp_path / "native"),
               "queueLimit": str(1024 * count), "queueLimitBytes": str(1 << 30)}
    run = run_java_main(test_programs, "sparkkpl.producer.ShutdownFlushMain", stream, str(count),
                        *as_arguments(options))
    # Before exit the KPL may have sent a full PutRecords batch or two (a loaded machine is slow to get
    # there); the rest, most of them, only the shutdown flush can deliver.
    acknowledged = int(re.search(rf"added {count}, acknowledged so far (\d+)", run.stdout).group(1))
    assert acknowledged < count // 2, run.stdout
    expected = {f"exit-{i}".encode(): f"key-{i}" for i in range(count)}
    report = compare(expected, ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.at_least_once, report.summary()


def test_a_producer_closed_while_its_daemon_starts_leaves_no_daemon(kinesis, tmp_path, test_programs):
    # Each closes while its daemon may still be starting, on CPUs kept busy.
    options = {**kinesis.kpl_options(), "streamName": "unused", "producerIdleTimeoutMs": "1",
               "nativeDir": str(tmp_path / "native")}
    run = run_java_main(test_programs, "sparkkpl.producer.QuickCloseMain", "12", "3", *as_arguments(options))
    assert "daemons left 0, pipe folders left 0" in run.stdout, run.stdout + run.stderr[-3000:]


def test_a_killed_daemon_is_restarted_under_its_holders_and_not_replaced(endpoint, ep_stream, tmp_path,
                                                                       test_programs):
    # Two holders add continuously; the daemon is killed; a third acquire comes while the KPL
    # restarts it. The producer must stay theirs: no close under them, no second daemon.
    options = {**endpoint.kpl_options(), "streamName": ep_stream, "nativeDir": str(tmp_path / "native"),
               "shutdownFlushTimeoutMs": "5000"}
    run = run_java_main(test_programs, "sparkkpl.producer.DaemonKillMain", ep_stream, *as_arguments(options))
    assert "killed 1 daemon(s); third acquire got the holders' producer: true" in run.stdout, run.stdout
    for holder in ("a", "b"):
        line = next(line for line in run.stdout.splitlines() if line.startswith(f"holder {holder} "))
        added, succeeded = (int(n) for n in re.findall(r"added (\d+), succeeded (\d+)", line)[0])
        assert added > 100 and succeeded == added and ", ok; errors 0" in line, run.stdout
    assert "daemons alive 5 s after the kill: 1" in run.stdout, run.stdout
