"""The outstanding-records cap turns a producer faster than Kinesis into backpressure, and every
executor JVM runs one producer (one native daemon) however many tasks it runs."""

from __future__ import annotations

import threading
import time

import spark_kpl
from spark_kpl.testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl.testing.processes import live_children

#: No aggregation and a low RateLimit on one shard: the KPL can send only ~100 records/s, so records
#: pile up deterministically behind it.
THROTTLED = {"AggregationEnabled": "false", "RateLimit": "10", "RecordTtl": "120000"}
UNBOUNDED = {"queueLimit": str(10**12), "queueLimitBytes": str(10**15)}


def rows(spark, count, partitions=2):
    return numbered_rows(spark, count, partitions, keys=13)


def write_throttled(spark, kinesis, stream, count, limits):
    options = {**kinesis.kpl_options(), **THROTTLED, **limits}
    return spark_kpl.write(rows(spark, count), stream, partition_key="partitionKey", **options)


def kpl_peak_outstanding_during(spark, write):
    """Runs ``write()`` while sampling what the KPL itself counts outstanding (its unfinished
    futures), not the sink's own limiter; returns the write's result and that peak."""
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            for stats in spark_kpl.producer_stats(spark):  # local mode: the tasks' producers
                peak[0] = max(peak[0], stats["kplOutstandingRecords"])
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = write()
    finally:
        done.set()
        sampler.join()
    return result, peak[0]


def assert_delivered(kinesis, stream, count):
    report = compare(numbered_expected(count, keys=13), ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.at_least_once, report.summary()


def test_unbounded_outstanding_grows_with_the_input(spark, kinesis):
    peaks = {}
    for count in (400, 1200):
        name = f"unbounded-{count}"
        kinesis.create_stream(name, shards=1)
        result = write_throttled(spark, kinesis, name, count, UNBOUNDED)
        assert_delivered(kinesis, name, count)
        assert result.backpressure_cycles == 0
        peaks[count] = result.peak_outstanding_records
        kinesis.delete_stream(name)
    # Without a cap the KPL takes everything at once: its queue is as large as the input.
    assert peaks[400] >= 0.9 * 400
    assert peaks[1200] >= 0.9 * 1200


def test_queue_limit_caps_outstanding_records_and_loses_nothing(spark, kinesis, stream):
    result, kpl_peak = kpl_peak_outstanding_during(
        spark, lambda: write_throttled(spark, kinesis, stream, 1200, {"queueLimit": "100"}))
    assert result.records_written == 1200
    assert 50 <= kpl_peak <= 100, f"the KPL itself had {kpl_peak} records outstanding at most"
    assert result.peak_outstanding_records <= 100
    assert result.backpressure_cycles > 0 and result.blocked_ms > 0
    assert_delivered(kinesis, stream, 1200)


def test_queue_limit_bytes_caps_outstanding_bytes(spark, kinesis, stream):
    record_bytes = len("row-1000") + len("key-1")
    limit = 50 * record_bytes
    result = write_throttled(spark, kinesis, stream, 1200, {"queueLimitBytes": str(limit)})
    assert result.peak_outstanding_bytes <= limit
    assert result.backpressure_cycles > 0
    assert_delivered(kinesis, stream, 1200)


def jvm_pid(spark) -> int:
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def wait_for_no_producers(spark, timeout=30.0):
    deadline = time.monotonic() + timeout
    while spark_kpl.producer_stats(spark) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not spark_kpl.producer_stats(spark)


def test_tasks_of_one_jvm_share_one_producer_which_closes_when_idle(spark, kinesis, stream):
    assert wait_for_no_producers(spark), "an earlier test's producer did not close"
    result = spark_kpl.write(rows(spark, 2000, partitions=8), stream, partition_key="partitionKey",
                             producerIdleTimeoutMs=3000, **kinesis.kpl_options())
    assert result.tasks == 8
    daemons = live_children(jvm_pid(spark), "kinesis_producer")
    assert len(daemons) == 1, f"expected one daemon for 8 tasks in one JVM, found {daemons}"
    assert len(spark_kpl.producer_stats(spark)) == 1
    assert wait_for_no_producers(spark, timeout=15), "the idle producer was not closed"
    assert live_children(jvm_pid(spark), "kinesis_producer") == []
    assert_delivered(kinesis, stream, 2000)
