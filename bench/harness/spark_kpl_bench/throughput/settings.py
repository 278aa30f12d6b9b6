"""What the throughput benchmark measures: its streams, workloads, producers and the settings they share."""

from __future__ import annotations

from pathlib import Path

from spark_kpl._jar import JAR_NAME

#: The checkout (this file is python/testing/spark_kpl_testing/throughput/settings.py in it).
ROOT = Path(__file__).resolve().parents[4]
#: The benchmark's command line; its ``child`` command runs one producer (child.child).
CLI = ROOT / "bench/throughput.py"
JAR = ROOT / "build/libs" / JAR_NAME
STREAM = "bench"
SHARDS = 16
#: Kinesis's per-shard quotas are not what is measured: every KPL-like producer gets them lifted alike.
KPL_TUNING = {"RateLimit": "10000"}
#: ... except in the quota workload: a stream this small, the endpoint enforcing Kinesis's per-shard
#: limits (1,000 records/s, 1 MiB/s), every producer at its own defaults.
QUOTA_STREAM, QUOTA_SHARDS = "bench-quota", 4
#: The workloads every producer runs, in report order.
WORKLOADS = ("A_100B", "M_1KB", "B_10KB", "A_100B_quota")
#: Every producer, in run and report order; the extras run unless --skip-extras.
PRODUCERS = ("sink", "sink_kpl", "kpl_loop", "boto3", "aiokpl", "noop")
EXTRA_PRODUCERS = ("aiokpl", "noop")
#: The sink's aggregation option for each of its producers.
SINK_AGGREGATION = {"sink": "executor", "sink_kpl": "kpl"}
#: The endpoint's counters diffed around each timed run.
ENDPOINT_COUNTERS = ("put_calls", "records_received", "bytes_received", "records_rejected")
#: KPL settings naming where a producer's files are: they differ between any two producers.
PLACE_SETTINGS = ("NativeExecutable", "TempDirectory")

NOT_RUN = {
    "awslabs_connector": (
        "not run: awslabs spark-sql-kinesis-connector is not published on Maven Central (checked "
        "software.amazon.kinesis:{spark-sql-kinesis-connector,spark-streaming-sql-kinesis-connector}"
        "_{2.12,2.13}: HTTP 404); upstream distributes a jar from an S3 bucket, which this machine may "
        "not fetch. It is also streaming-only (no batch df.write), built for Spark 3.x/Scala 2.12 "
        "(this venv is Spark 4.1/Scala 2.13), and its endpoint option is not passed to the KPL "
        "(KinesisEndpoint/KinesisPort/VerifyCertificate not settable), so its KPL would dial the real "
        "AWS endpoint: it cannot be pointed at a loopback endpoint safely."),
}
