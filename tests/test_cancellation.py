"""A cancelled write stops adding rows: a task whose queue never fills blocks nowhere, so Spark's
interrupt alone would not stop it, and it would write its whole partition after the job failed.
Nor may the interrupt reach the KPL, which would kill the daemon every task of the JVM shares."""

from __future__ import annotations

import threading
import time

import pytest

import spark_kpl
from spark_kpl.testing.delivery import numbered_rows

ROWS = 400_000


def wait_until_settled(endpoint, quiet=3.0, timeout=120.0):
    """Returns once the endpoint has stored nothing new for ``quiet`` seconds."""
    deadline = time.monotonic() + timeout
    last, since = endpoint.records_received, time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = endpoint.records_received
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    pytest.fail("records kept arriving long after the cancel")


def test_a_cancelled_write_stops_adding_rows_and_keeps_the_daemon(spark, endpoint, ep_stream, jvm_log):
    endpoint.reset_counters()
    # No cap in reach: the tasks never wait for room, the case where only the sink itself can notice.
    options = {**endpoint.kpl_options(), "queueLimit": str(ROWS * 2), "queueLimitBytes": str(1 << 30)}
    outcome: dict = {}

    def write():
        spark.sparkContext.setJobGroup("cancel-me", "cancellation test", interruptOnCancel=True)
        try:
            outcome["result"] = spark_kpl.write(numbered_rows(spark, ROWS), ep_stream,
                                                partition_key="partitionKey", **options)
        except Exception as error:  # asserted on below
            outcome["error"] = error

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not endpoint.records_received and time.monotonic() < deadline:
        time.sleep(0.02)
    assert endpoint.records_received, "the write did not start"
    spark.sparkContext.cancelJobGroup("cancel-me")
    thread.join(timeout=120)

    assert "error" in outcome, "a cancelled write must not report success"
    wait_until_settled(endpoint)
    stored = len(endpoint.records(ep_stream))
    assert stored < ROWS // 2, f"{stored} of {ROWS} rows reached Kinesis after the cancel"
    log = jvm_log.toString()
    assert "Error in child process" not in log and "Restarting native producer" not in log, log[-3000:]
