"""The demo job: PySpark writes rows through the real KPL into the embedded Kinesis and checks them.

Run by scripts/demo.sh after install and build; exits non-zero unless every row arrived exactly once
with its partition key.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from spark_kpl_testing.env import apply_loopback_env
from spark_kpl_testing.net import LOOPBACK

apply_loopback_env()  # before the driver JVM starts, so it and the KPL daemon stay on loopback
# Spark itself too; looking for an address of its own, it warns when the host name resolves to loopback.
os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import spark_kpl  # noqa: E402
from spark_kpl_testing.delivery import compare, warm_up  # noqa: E402
from spark_kpl_testing.kinesis import LocalKinesis  # noqa: E402

STREAM = "demo"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()

    with LocalKinesis(streams={STREAM: args.shards}) as kinesis:
        spark = spark_kpl.configure(SparkSession.builder.master("local[2]").appName("spark-kpl-demo")) \
            .config("spark.ui.enabled", "false").getOrCreate()
        try:
            rows = spark.range(args.rows, numPartitions=args.partitions).select(
                F.format_string("row-%d", "id").alias("payload"),
                F.format_string("key-%d", F.col("id") % 997).alias("key"),
            )
            expected = warm_up(spark, STREAM, **kinesis.kpl_options())
            started = time.monotonic()
            result = spark_kpl.write(rows, STREAM, data=F.encode("payload", "UTF-8"), partition_key="key",
                                     **kinesis.kpl_options())
            seconds = time.monotonic() - started
        finally:
            spark.stop()
        print(f"wrote {result.records_written} records in {seconds:.1f} s "
              f"({result.records_written / seconds:,.0f} records/s); failed {result.records_failed}")
        expected.update({f"row-{i}".encode(): f"key-{i % 997}" for i in range(args.rows)})
        records = kinesis.read_records(STREAM)
        report = compare(expected, ((r.data, r.partition_key) for r in records))
        print(f"read back: {report.summary()}")
    if result.records_written != args.rows or not report.exactly_once:
        print("MISMATCH", file=sys.stderr)
        return 1
    print(f"OK: all {args.rows} rows arrived exactly once with their partition keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
