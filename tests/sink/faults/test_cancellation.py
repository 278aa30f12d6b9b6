"""A cancelled write stops adding rows: a task whose queue never fills blocks nowhere, so Spark's
interrupt alone would not stop it, and it would write its whole partition after the job failed.
Nor may the interrupt reach the KPL, which would kill the daemon every task of the JVM shares."""

from __future__ import annotations

from spark_kpl_testing.delivery import numbered_rows, wait_until_settled, write_in_background
from spark_kpl_testing.polling import wait_for

ROWS = 400_000


def test_a_cancelled_write_stops_adding_rows_and_keeps_the_daemon(spark, endpoint, ep_stream, jvm_log):
    endpoint.reset_counters()
    # No cap in reach: the tasks never wait for room, the case where only the sink itself can notice.
    options = {**endpoint.kpl_options(), "queueLimit": str(ROWS * 2), "queueLimitBytes": str(1 << 30)}
    thread, outcome = write_in_background(spark, numbered_rows(spark, ROWS), ep_stream, "cancel-me", **options)
    wait_for(lambda: endpoint.records_received, 60, "the write's first record at the endpoint", every=0.02)
    spark.sparkContext.cancelJobGroup("cancel-me")
    thread.join(timeout=120)

    assert "error" in outcome, "a cancelled write must not report success"
    wait_until_settled(endpoint)
    stored = len(endpoint.records(ep_stream))
    assert stored < ROWS // 2, f"{stored} of {ROWS} rows reached Kinesis after the cancel"
    log = jvm_log.toString()
    assert "Error in child process" not in log and "Restarting native producer" not in log, log[-3000:]
