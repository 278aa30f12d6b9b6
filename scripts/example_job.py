"""An example PySpark job for spark-submit: writes generated rows to a Kinesis stream.

    spark-submit --jars "$(python -m spark_kpl jar-path)" scripts/example_job.py \\
        --stream clicks --rows 1000 --option Region=eu-west-1

Prints the write's result as JSON. Options come as name=value pairs (any sink option or KPL
property); spark.kpl.* keys from spark-defaults.conf apply too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import spark_kpl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stream", help="the target stream (default: the spark.kpl.streamName key)")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--settings", choices=["after-write", "only"],
                        help="also print (after-write), or only print without writing (only), what the write "
                             "and the driver's producers run with, as a SETTINGS line of JSON")
    args = parser.parse_args()
    options = dict(option.split("=", 1) for option in args.option)

    spark = SparkSession.builder.appName("spark-kpl-example").getOrCreate()
    if args.settings != "only":
        rows = spark.range(args.rows).select(
            F.format_string("row-%d", "id").alias("data"),
            F.format_string("key-%d", F.col("id") % 10).alias("key"))
        result = spark_kpl.write(rows, args.stream, partition_key="key", **options)
        print("RESULT " + json.dumps(dataclasses.asdict(result)))
    if args.settings:
        settings = {"write": spark_kpl.write_settings(spark, **options),
                    "producers": spark_kpl.producer_settings(spark)}
        print("SETTINGS " + json.dumps(settings))
    spark.stop()


if __name__ == "__main__":
    main()
