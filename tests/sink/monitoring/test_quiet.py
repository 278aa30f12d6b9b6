"""A normal write logs nothing a user cannot act on; the KPL's LogLevel is the one switch that makes
the KPL and its daemon speak again, for troubleshooting. The demo, a user's first run, is as quiet."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import spark_kpl
from spark_kpl_testing.delivery import numbered_rows
from spark_kpl_testing.endpoint import Faults
from spark_kpl_testing.env import loopback_env, python_path

REPO = Path(__file__).resolve().parents[3]

#: The KPL's start-up warning (the sink always gives it the daemon it placed), and its daemon's lines
#: below error, as the KPL passes them on: "[<time>] [<thread>] [info] [kinesis_producer.cc:107] ...".
STARTUP_WARNING = "Using non-default native binary"
DAEMON_LINES = ("] [info] [", "] [warning] [")
#: The logger the KPL passes its daemon's lines to, at their own level.
DAEMON_LOGGER = "sparkkpl.shaded.software.amazon.kinesis.producer.LogInputStreamReader"


@contextmanager
def daemon_logger_at_info(spark) -> Iterator[None]:
    """Lets the daemon's info lines through whatever an earlier test set the sink's loggers to, so
    that only the KPL's LogLevel decides what the daemon says; removed again afterwards."""
    log4j = spark.sparkContext._jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel(DAEMON_LOGGER, log4j.Level.INFO)
    try:
        yield
    finally:
        context = log4j.LogManager.getContext(False)
        context.getConfiguration().removeLogger(DAEMON_LOGGER)
        context.updateLoggers()


def test_a_write_is_quiet_unless_the_kpl_log_level_is_set(spark, endpoint, ep_stream, jvm_log, tmp_path):
    # Latency over 500 ms makes the daemon warn about slow PutRecords: noise a user cannot act on.
    endpoint.set_faults(Faults(latency=0.6))
    rows = numbered_rows(spark, 200, partitions=1)
    with daemon_logger_at_info(spark):
        # A folder of its own per write: each starts a producer of its own, which is when the KPL warns.
        spark_kpl.write(rows, ep_stream, partition_key="partitionKey", nativeDir=str(tmp_path / "quiet"),
                        **endpoint.kpl_options())
        quiet = jvm_log.toString()

        spark_kpl.write(rows, ep_stream, partition_key="partitionKey", nativeDir=str(tmp_path / "verbose"),
                        LogLevel="info", **endpoint.kpl_options())
        verbose = jvm_log.toString()[len(quiet):]

    noise = (STARTUP_WARNING, *DAEMON_LINES)
    assert not [line for line in quiet.splitlines() if any(marker in line for marker in noise)], quiet
    assert STARTUP_WARNING in verbose and DAEMON_LINES[0] in verbose, verbose


#: Spark's warning when the host name resolves to a loopback address, and the AWS SDK's when a client
#: trusts every certificate (the sink's shard lister against the local endpoint's self-signed one).
DEMO_NOISE = ("resolves to a loopback address", "SSL Certificate verification is disabled")


def test_the_demo_says_nothing_a_user_cannot_act_on(tmp_path):
    rows = 2000
    demo = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo_job.py"), "--rows", str(rows), "--shards", "1",
         "--partitions", "2"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env={**loopback_env(), "PYTHONPATH": python_path()})
    output = demo.stdout + demo.stderr
    assert demo.returncode == 0 and f"OK: all {rows} rows arrived exactly once" in demo.stdout, output
    # It says what it wrote and what it read, no record more, and shows the options to copy.
    assert f"wrote {rows} records" in demo.stdout and f"read back {rows} records" in demo.stdout, demo.stdout
    assert "KinesisEndpoint='127.0.0.1'" in demo.stdout and "VerifyCertificate='false'" in demo.stdout, demo.stdout
    assert not [line for line in output.splitlines() if any(noise in line for noise in DEMO_NOISE)], output
