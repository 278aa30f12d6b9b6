"""A KPL daemon killed mid-write with ``failOnError=false``. Kinesis refused none of the records the
daemon took with it: whether they arrived is unknown, so they are no record failures (nothing is
counted or dead-lettered for them); the task fails instead, and a streaming batch is not committed,
so the records are sent again. Batch writes on a cluster: tests/sink/faults/test_faults_cluster.py."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from pyspark.errors import StreamingQueryException

import spark_kpl
from spark_kpl import dedup
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.endpoint import Faults
from spark_kpl_testing.polling import wait_for
from spark_kpl_testing.processes import daemons_placed_in, driver_jvm_pid

#: The KPL daemon dying under the sink: no Spark line changes what the producer does then, so
#: scripts/test.sh runs it on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line

ROWS_PER_FILE = (10, 3000)
#: One shard taking 300 records/s, unaggregated: the second batch keeps thousands of records in flight.
THROTTLE = Faults(shard_records_per_second=300)


def add_file(folder, number, rows):
    """File ``number`` becomes micro-batch ``number``: the file source takes the oldest first."""
    temporary = os.path.join(folder, f".part-{number}.tmp")
    with open(temporary, "w") as out:
        for i in range(rows):
            out.write(json.dumps({"data": f"file-{number}-row-{i}"}) + "\n")
    modified = time.time() - 100 + number
    os.utime(temporary, (modified, modified))
    os.rename(temporary, os.path.join(folder, f"part-{number}.json"))


def start_query(spark, source, checkpoint, stream, options):
    return (spark.readStream.schema("data string").option("maxFilesPerTrigger", 1).json(source)
            .writeStream.format("kpl").option("checkpointLocation", checkpoint).option("streamName", stream)
            .options(**options).trigger(availableNow=True).start())


def kpl_outstanding(spark) -> int:
    """Records the driver JVM's producers (local mode: the tasks') hold, by the KPL's own count."""
    return sum(stats["kplOutstandingRecords"] for stats in spark_kpl.producer_stats(spark))


def test_a_batch_whose_daemon_is_killed_is_not_committed_and_the_restart_sends_it(spark, endpoint, tmp_path):
    stream = "daemon-crash"
    endpoint.create_stream(stream, shards=1)
    endpoint.set_faults(THROTTLE)
    source, checkpoint, native = tmp_path / "source", str(tmp_path / "checkpoint"), tmp_path / "native"
    source.mkdir()
    for number, rows in enumerate(ROWS_PER_FILE):
        add_file(source, number, rows)
    options = {**endpoint.kpl_options(), "AggregationEnabled": "false", "RecordTtl": "120000",
               "failOnError": "false", "deadLetterPath": str(tmp_path / "dead"), "recordId": "prefix",
               "nativeDir": str(native)}
    try:
        query = start_query(spark, str(source), checkpoint, stream, options)
        # Batch 1 under way: the kill must take records with it, so wait until the KPL itself holds
        # 1000 (rows the task has not added yet, or Kinesis has stored, are not in flight).
        wait_for(lambda: kpl_outstanding(spark) >= 1000, 60, "1000 records held by the KPL")
        daemon = wait_for(lambda: daemons_placed_in([driver_jvm_pid(spark)], native), 10, "the write's KPL daemon")[0]
        os.kill(daemon, signal.SIGKILL)

        with pytest.raises(StreamingQueryException, match="The KPL producer failed"):
            query.awaitTermination()
        committed = sorted(os.listdir(os.path.join(checkpoint, "commits")))
        assert "0" in committed and "1" not in committed, f"batch 1 must not be committed: {committed}"

        query = start_query(spark, str(source), checkpoint, stream, options)
        query.awaitTermination()
        assert query.exception() is None
    finally:
        endpoint.set_faults(Faults())
    seen, stored = set(), []
    for record in endpoint.records(stream):  # the consumer-side dedup README describes
        if dedup.record_id(record.data) not in seen:
            seen.add(dedup.record_id(record.data))
            stored.append(dedup.strip(record.data))
    expected = [f"file-{n}-row-{i}".encode() for n, rows in enumerate(ROWS_PER_FILE) for i in range(rows)]
    assert sorted(stored) == sorted(expected)
    dead_letters = [p for p in (tmp_path / "dead").rglob("*") if p.is_file() and p.stat().st_size > 0]
    assert dead_letters == [], "no record was refused by Kinesis"
    endpoint.delete_stream(stream)


def test_a_daemon_binary_removed_by_a_tmp_cleaner_is_placed_again(spark, endpoint, ep_stream, tmp_path):
    native = tmp_path / "native"
    options = {**endpoint.kpl_options(), "nativeDir": str(native), "producerIdleTimeoutMs": "60000"}
    spark_kpl.write(numbered_rows(spark, 100, partitions=1), ep_stream, partition_key="partitionKey", **options)
    [binary] = native.glob("*/kinesis_producer")
    binary.unlink()  # what a cleaner of old files in /tmp does
    [daemon] = daemons_placed_in([driver_jvm_pid(spark)], native)
    os.kill(daemon, signal.SIGKILL)

    # Without the binary the KPL relaunches a missing file about once a second, for ever.
    result = spark_kpl.write(numbered_rows(spark, 1000, partitions=2), ep_stream, partition_key="partitionKey",
                             **options)

    assert result.records_written == 1000
    assert binary.is_file()
    report = compare(numbered_expected(1000), ((r.data, r.partition_key) for r in endpoint.records(ep_stream)))
    assert report.at_least_once, report.summary()
    assert len(daemons_placed_in([driver_jvm_pid(spark)], native)) == 1
    before = kpl_pipes(native)
    time.sleep(3)  # a relaunch loop would leave two more pipes a second
    assert kpl_pipes(native) == before, f"pipes leaking: {before} then {kpl_pipes(native)}"


def test_a_producer_whose_daemon_cannot_be_placed_again_still_closes_when_idle(spark, endpoint, ep_stream, tmp_path):
    native = tmp_path / "native"
    options = {**endpoint.kpl_options(), "nativeDir": str(native), "producerIdleTimeoutMs": "3000"}
    spark_kpl.write(numbered_rows(spark, 10, partitions=1), ep_stream, partition_key="partitionKey", **options)
    [binary] = native.glob("*/kinesis_producer")
    binary.unlink()  # a tmp cleaner: the next task places it again, but ...
    native.chmod(0o777)  # ... in a folder others may write to it is placed no more

    with pytest.raises(Exception, match="can be written by other users"):
        spark_kpl.write(numbered_rows(spark, 10, partitions=1), ep_stream, partition_key="partitionKey", **options)

    # The failed task must not keep holding the producer: idle, it closes and its daemon stops (held,
    # a daemon the KPL can no longer relaunch would be relaunched once a second for the JVM's life).
    wait_for(lambda: not daemons_placed_in([driver_jvm_pid(spark)], native), 30,
             "the producer's daemon to stop after its idle timeout")


def kpl_pipes(native):
    return sorted(p.name for p in native.rglob("amz-aws-kpl-*"))
