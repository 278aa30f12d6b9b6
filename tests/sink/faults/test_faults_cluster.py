"""Process faults on the standalone cluster: a killed executor JVM, a killed KPL daemon, a
cancelled job. Each write must complete (or stop) with nothing it reported lost."""

from __future__ import annotations

import os
import signal
import time

import pytest

from spark_kpl_testing.delivery import (
    compare,
    failed_task_attempts,
    numbered_expected,
    numbered_rows,
    write_in_background,
)
from spark_kpl_testing.endpoint import Faults
from spark_kpl_testing.polling import wait_for
from spark_kpl_testing.processes import age_seconds, daemons_placed_in, live_children

#: Executors killed mid-write: Spark's task retry, the same contract on every line (and
#: tests/sink/deploy/test_cluster_e2e.py runs the cluster on every line), so scripts/test.sh runs it on 4.1 only.
pytestmark = pytest.mark.one_spark_line

COUNT = 2000
PARTITIONS = 4
#: One Kinesis record per row, kept for as long as the throttle below needs to store them all.
SLOW = {"AggregationEnabled": "false", "RecordTtl": "120000"}
#: The project's endpoint storing 100 records/s on one shard: the write lasts 20 s, so a kill or a
#: cancel a few seconds in finds most records in flight.
THROTTLE = Faults(shard_records_per_second=100)
#: How an executor logs the task failure a dead daemon causes (ProducerFailedException).
PRODUCER_FAILED = "The KPL producer failed"


def rows(spark):
    return numbered_rows(spark, COUNT, partitions=PARTITIONS, keys=7)


def start_write(spark, stream, options, group=None):
    return write_in_background(spark, rows(spark), stream, group, **options)


def executor_daemons(cluster):
    return [daemon for pid in cluster.executor_pids() for daemon in live_children(pid, "kinesis_producer")]


@pytest.fixture
def throttled_stream(endpoint):
    name = f"throttled-{time.monotonic_ns()}"
    endpoint.create_stream(name, shards=1)
    endpoint.set_faults(THROTTLE)
    yield name
    endpoint.set_faults(Faults())
    endpoint.delete_stream(name)


@pytest.mark.parametrize("victim, fail_on_error", [("kpl daemon", "true"), ("kpl daemon", "false"),
                                                   ("executor jvm", "true")])
def test_a_killed_process_mid_write_is_recovered_and_nothing_is_lost(cluster_spark, cluster, endpoint,
                                                                   throttled_stream, victim, fail_on_error):
    # failOnError=false covers records Kinesis refused; records a dead daemon took with it are not
    # refused, they are in doubt: the task must fail and be retried, never count them as failed.
    stream = throttled_stream
    options = {**endpoint.kpl_options(), **SLOW, "failOnError": fail_on_error}
    producer_failures_before = len(cluster.executor_log_lines(PRODUCER_FAILED))
    group = f"killed-{time.monotonic_ns()}"
    thread, outcome = start_write(cluster_spark, stream, options, group)
    # Under way: the rest of the records now pile up in the daemons behind the throttle.
    stored_at_kill = wait_for(lambda: len(endpoint.records(stream)) >= 200 and len(endpoint.records(stream)), 120,
                              "the write to be under way")
    if victim == "kpl daemon":
        # Every executor's: a task that has just started may have no records in its daemon yet.
        for daemon in wait_for(lambda: executor_daemons(cluster), 60, "a KPL daemon under an executor"):
            os.kill(daemon, signal.SIGKILL)
    else:
        cluster.kill_executor()
    thread.join(timeout=400)
    assert not thread.is_alive(), "the write did not finish"
    assert COUNT - stored_at_kill >= 300, f"only {COUNT - stored_at_kill} records could be in flight at the kill"
    if victim == "kpl daemon":
        # The kill must have failed a task for Spark to retry, not just missed every record in flight.
        producer_failures = len(cluster.executor_log_lines(PRODUCER_FAILED)) - producer_failures_before
        assert producer_failures > 0, "no task saw the producer fail"
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"].records_written == COUNT
    assert outcome["result"].records_failed == 0
    report = compare(numbered_expected(COUNT, keys=7), ((r.data, r.partition_key) for r in endpoint.records(stream)))
    assert report.at_least_once, report.summary()
    # Copies come only from retried tasks: each failed attempt may have stored its partition's rows.
    failed_attempts = failed_task_attempts(cluster_spark, group)
    assert failed_attempts >= 1, "the kill failed no task"
    assert report.received - COUNT <= failed_attempts * (COUNT // PARTITIONS), (
        f"{report.received - COUNT} copies beyond one for {failed_attempts} failed task attempts; {report.summary()}")


def daemons_run_from(cluster, folder):
    """(pid, age in s) of each daemon under an executor whose binary lies in ``folder``."""
    return [(daemon, round(age_seconds(daemon))) for daemon in daemons_placed_in(cluster.executor_pids(), folder)]


def test_a_cancelled_job_leaves_no_daemon_nor_temp_file(cluster_spark, cluster, endpoint, throttled_stream, tmp_path):
    stream = throttled_stream
    # The write's own folder tells its daemons from those of the module's other writes.
    native_dir = tmp_path / "native"
    options = {**endpoint.kpl_options(), **SLOW, "nativeDir": str(native_dir), "producerIdleTimeoutMs": "1000",
               "shutdownFlushTimeoutMs": "5000"}
    thread, outcome = start_write(cluster_spark, stream, options, group="to-cancel")
    # Cancelled while under way: behind the throttle, most of the rows are still to be stored.
    wait_for(lambda: len(endpoint.records(stream)) >= 100, 120, "the write to be under way")
    cluster_spark.sparkContext.cancelJobGroup("to-cancel")
    thread.join(timeout=120)
    assert "error" in outcome, "a cancelled write must not report success"

    def leftovers():
        temp_files = [p.name for p in native_dir.rglob("*") if p.is_file() and ".tmp" in p.name]
        return {"daemons (pid, age s)": daemons_run_from(cluster, native_dir), "temp files": temp_files}

    def what_was_left():
        producer_log = cluster.executor_log_lines("KPL producer", "KPL daemon", "native producer", "child process")
        return f"{leftovers()}\nexecutor logs:\n" + "\n".join(producer_log[-40:])

    # A placement or producer start already under way finishes first; then all must be gone.
    wait_for(lambda: not any(leftovers().values()), 90, "no daemon and no temp file left after the cancel",
             what_was_left)
