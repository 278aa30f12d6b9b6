"""At cluster scale a write's control-plane calls do not grow with its executors: rows naming six
streams, written from one executor JVM and then from four, make the same DescribeStreamSummary calls,
since the driver describes each stream once for all of them through the sink's plugin (issue #47;
docs/scaling.md). Without the plugin each executor describes each stream its rows name, which the
last test shows, so that this test could see the growth it rules out."""

from __future__ import annotations

from typing import Dict, List

from pyspark.sql import functions as F

from spark_kpl_testing.cluster import StandaloneCluster
from spark_kpl_testing.delivery import compare
from spark_kpl_testing.endpoint import KinesisEndpoint

from conftest import _session

STREAMS = 6
ROWS = 6_000
#: More partitions than executors, so that every executor meets every stream.
PARTITIONS = 8
DESCRIBE_CALLS = ("DescribeStreamSummary", "DescribeStream")


def describes(endpoint: KinesisEndpoint) -> int:
    """The Describe* calls the endpoint answered: a call refused over Kinesis's limit and made again
    counts once."""
    calls, refused = endpoint.calls, endpoint.limits_exceeded
    return sum(calls.get(operation, 0) - refused.get(operation, 0) for operation in DESCRIBE_CALLS)


def write_rows_naming_streams(spark, endpoint: KinesisEndpoint, streams: List[str], write: str) -> None:
    """ROWS rows "<write>-<i>", row i into streams[i mod 6] under key "key-<i mod 13>"; checks each stream
    got them once with their keys."""
    rows = spark.range(ROWS, numPartitions=PARTITIONS).select(
        F.format_string(f"{write}-%d", "id").alias("data"),
        F.format_string("key-%d", F.col("id") % 13).alias("partitionKey"),
        F.element_at(F.array(*[F.lit(s) for s in streams]),
                     (F.col("id") % STREAMS + 1).cast("int")).alias("streamName"),
    )
    rows.write.format("kpl").options(**endpoint.kpl_options()).mode("append").save()
    for number, stream in enumerate(streams):
        expected = {f"{write}-{i}".encode(): f"key-{i % 13}" for i in range(number, ROWS, STREAMS)}
        report = compare(expected, ((r.data, r.partition_key) for r in endpoint.records(stream)
                                    if r.data.startswith(f"{write}-".encode())))
        assert report.exactly_once, f"{stream}: {report.summary()}"


def describes_per_write(cluster: StandaloneCluster, endpoint: KinesisEndpoint, executors: int,
                        plugin: bool) -> Dict[str, int]:
    """The Describe* calls of a first write into six new streams and of a second write into them, from
    a driver with ``executors`` executor JVMs."""
    streams = [f"fan-{executors}-{'plugin' if plugin else 'none'}-{n}" for n in range(STREAMS)]
    for stream in streams:
        endpoint.create_stream(stream, shards=2)
    conf = {**cluster.spark_conf(), "spark.executor.cores": "1", "spark.executor.memory": "900m",
            "spark.cores.max": str(executors)}
    if not plugin:
        conf["spark.plugins.defaultList"] = ""  # over what spark_kpl.configure put there
    spark = _session(cluster.master_url, conf)
    try:
        # A first job runs once every executor registered (minRegisteredResourcesRatio).
        spark.range(executors, numPartitions=executors).count()
        assert spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 == executors  # the driver aside
        counts = {}
        for write in ("first", "second"):
            before = describes(endpoint)
            write_rows_naming_streams(spark, endpoint, streams, write)
            counts[write] = describes(endpoint) - before
        return counts
    finally:
        spark.stop()
        for stream in streams:
            endpoint.delete_stream(stream)


def test_describe_calls_per_write_stay_the_same_from_one_executor_to_four(two_core_workers, limits_endpoint):
    one = describes_per_write(two_core_workers, limits_endpoint, executors=1, plugin=True)
    four = describes_per_write(two_core_workers, limits_endpoint, executors=4, plugin=True)

    assert one == four, f"1 executor: {one}, 4 executors: {four}"
    assert one["first"] == STREAMS, one  # each stream once, by the driver; no daemon describes
    assert one["second"] == 0, one  # confirmed by ListShards, which Kinesis counts per stream
    assert limits_endpoint.limits_exceeded == {}, "no control-plane call over Kinesis's limits"


def test_without_the_plugin_each_executor_describes_each_stream(two_core_workers, limits_endpoint):
    four = describes_per_write(two_core_workers, limits_endpoint, executors=4, plugin=False)

    assert four == {"first": 4 * STREAMS, "second": 4 * STREAMS}, four
    # 24 calls at once are over Kinesis's 20 a second: where some were refused, they were made again.
    print(f"refused over Kinesis's limits: {limits_endpoint.limits_exceeded}")
