"""The queue limit (queueLimit) turns a producer faster than Kinesis into backpressure, and every
executor JVM runs one producer (one native daemon) however many tasks it runs."""

from __future__ import annotations

import functools
import threading
import time

import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.polling import poll_until
from spark_kpl_testing.processes import driver_jvm_pid, live_children

#: The queue limits between the sink and the KPL: no Spark line changes them, so scripts/test.sh
#: runs it on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line

#: No aggregation and a low RateLimit on one shard: the KPL can send only ~100 records/s, so records
#: pile up deterministically behind it.
THROTTLED = {"AggregationEnabled": "false", "RateLimit": "10", "RecordTtl": "120000"}
UNBOUNDED = {"queueLimit": str(10**12), "queueLimitBytes": str(10**15)}


def rows(spark, count, partitions=2):
    return numbered_rows(spark, count, partitions, keys=13)


def write_throttled(spark, kinesis, stream, count, limits):
    options = {**kinesis.kpl_options(), **THROTTLED, **limits}
    result = spark_kpl.write(rows(spark, count), stream, partition_key="partitionKey", **options)
    assert_nothing_outstanding(spark)
    return result


def assert_nothing_outstanding(spark):
    """At rest, once a write returned: the limiter's count and the KPL's own must both be back to 0, or
    a record's reservation leaked (an error inside addUserRecord) and the count drifted for good."""
    stats = spark_kpl.producer_stats(spark)
    assert stats, "the write's producer closed before it could be read"  # idle timeout: 2 s
    for producer in stats:
        counts = {key: producer[key] for key in ("outstandingRecords", "outstandingBytes", "kplOutstandingRecords")}
        assert set(counts.values()) == {0}, counts


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
    report = compare(numbered_expected(count, keys=13),
                     ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.at_least_once, report.summary()


def test_unbounded_outstanding_grows_with_the_input(spark, kinesis):
    for count in (400, 1200):
        name = f"unbounded-{count}"
        kinesis.create_stream(name, shards=1)
        result, kpl_peak = kpl_peak_outstanding_during(
            spark, functools.partial(write_throttled, spark, kinesis, name, count, UNBOUNDED))
        assert_delivered(kinesis, name, count)
        assert result.backpressure_cycles == 0
        # Without a cap the KPL takes everything at once: its queue is as large as the input.
        assert result.peak_outstanding_records >= 0.9 * count
        assert kpl_peak >= 0.9 * count, f"the KPL itself had {kpl_peak} of {count} records outstanding at most"
        kinesis.delete_stream(name)


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
    result, kpl_peak = kpl_peak_outstanding_during(
        spark, lambda: write_throttled(spark, kinesis, stream, 1200, {"queueLimitBytes": str(limit)}))
    # The cap holds at most 65 records of the smallest ("row-0", "key-0": 10 bytes), about 50 of the
    # typical 12 to 14; the KPL never holds more than the limiter has reserved.
    assert 25 <= kpl_peak <= limit // len("row-0key-0"), f"the KPL itself had {kpl_peak} records outstanding at most"
    assert result.peak_outstanding_bytes <= limit
    assert result.backpressure_cycles > 0
    assert_delivered(kinesis, stream, 1200)


def wait_for_no_producers(spark, timeout=30.0):
    return poll_until(lambda: not spark_kpl.producer_stats(spark), timeout, every=0.2)


def test_tasks_of_one_jvm_share_one_producer_which_closes_when_idle(spark, kinesis, stream):
    assert wait_for_no_producers(spark), "an earlier test's producer did not close"
    result = spark_kpl.write(rows(spark, 2000, partitions=8), stream, partition_key="partitionKey",
                             producerIdleTimeoutMs=3000, **kinesis.kpl_options())
    assert result.tasks == 8
    daemons = live_children(driver_jvm_pid(spark), "kinesis_producer")
    assert len(daemons) == 1, f"expected one daemon for 8 tasks in one JVM, found {daemons}"
    assert len(spark_kpl.producer_stats(spark)) == 1
    assert wait_for_no_producers(spark, timeout=15), "the idle producer was not closed"
    assert live_children(driver_jvm_pid(spark), "kinesis_producer") == []
    assert_delivered(kinesis, stream, 2000)
