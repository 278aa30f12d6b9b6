"""A normal write logs nothing a user cannot act on; the KPL's LogLevel is the one switch that makes
the KPL and its daemon speak again, for troubleshooting."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import spark_kpl
from spark_kpl_testing.delivery import numbered_rows
from spark_kpl_testing.endpoint import Faults

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
