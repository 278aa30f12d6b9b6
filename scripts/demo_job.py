"""The demo job: PySpark writes rows through the real KPL into the embedded Kinesis and checks them.

Run by scripts/demo.sh after install and build. Starts kinesis-local on 127.0.0.1 with one stream,
writes the rows with the sink options a user would give for a local endpoint (printed, to copy), reads
the stream back, and exits non-zero unless every row arrived exactly once with its partition key.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Dict

from spark_kpl_testing.env import apply_loopback_env
from spark_kpl_testing.net import LOOPBACK

apply_loopback_env()  # before the driver JVM starts, so it and the KPL daemon stay on loopback
# Spark itself too; looking for an address of its own, it warns when the host name resolves to loopback.
os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import spark_kpl  # noqa: E402
from spark_kpl_testing.delivery import compare  # noqa: E402
from spark_kpl_testing.kinesis import KINESIS_MOCK_VERSION, LocalKinesis  # noqa: E402

STREAM = "demo"
KEYS = 997


def local_endpoint_options(kinesis: LocalKinesis) -> Dict[str, str]:
    """What a write to a local Kinesis needs beyond the stream's name. Against Kinesis itself, only
    ``Region`` stays (and credentials come from the default chain, as here from the environment)."""
    return {
        "Region": kinesis.region,
        "KinesisEndpoint": LOOPBACK,  # a host name only; the port goes apart
        "KinesisPort": str(kinesis.tls_port),  # the KPL's daemon speaks TLS only
        "VerifyCertificate": "false",  # kinesis-local's certificate is self-signed
        "MetricsLevel": "none",  # no CloudWatch upload
        "RequestTimeout": "30000",  # kinesis-local answers slowly on a busy machine; 6 s would re-send
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()

    with LocalKinesis(streams={STREAM: args.shards}) as kinesis:
        print(f"local Kinesis: kinesis-local {KINESIS_MOCK_VERSION} on {LOOPBACK}:{kinesis.tls_port}, "
              f"stream {STREAM!r} of {args.shards} shards; credentials: AWS_ACCESS_KEY_ID and "
              f"AWS_SECRET_ACCESS_KEY from the environment (any value: kinesis-local does not check them)")
        options = local_endpoint_options(kinesis)
        print(f"writing {args.rows:,} rows (data 'row-<n>', partition key 'key-<n mod {KEYS}>') with:\n"
              f"    spark_kpl.write(rows, {STREAM!r}, data='payload', partition_key='key',\n"
              + "".join(f"                    {name}={value!r},\n" for name, value in options.items())
              + "    )")
        spark = spark_kpl.configure(SparkSession.builder.master("local[2]").appName("spark-kpl-demo")) \
            .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate()
        try:
            rows = spark.range(args.rows, numPartitions=args.partitions).select(
                F.format_string("row-%d", "id").alias("payload"),
                F.format_string("key-%d", F.col("id") % KEYS).alias("key"),
            )
            started = time.monotonic()
            result = spark_kpl.write(rows, STREAM, data="payload", partition_key="key", **options)
            seconds = time.monotonic() - started
        finally:
            spark.stop()
        print(f"wrote {result.records_written} records in {seconds:.1f} s ({result.records_written / seconds:,.0f} "
              f"records/s, a fresh JVM's first write, the KPL daemon's start included); "
              f"failed {result.records_failed}")
        expected = {f"row-{i}".encode(): f"key-{i % KEYS}" for i in range(args.rows)}
        records = kinesis.read_records(STREAM)
        report = compare(expected, ((r.data, r.partition_key) for r in records))
        stored = len({(r.shard_id, r.sequence_number) for r in records})
        print(f"read back {report.received} records, stored as {stored} Kinesis records (KPL aggregates): "
              f"{report.summary()}")
    if result.records_written != args.rows or not report.exactly_once:
        print("MISMATCH", file=sys.stderr)
        return 1
    print(f"OK: all {args.rows} rows arrived exactly once with their partition keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
