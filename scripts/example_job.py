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
    parser.add_argument("--stream", required=True)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    options = dict(option.split("=", 1) for option in args.option)

    spark = SparkSession.builder.appName("spark-kpl-example").getOrCreate()
    rows = spark.range(args.rows).select(
        F.format_string("row-%d", "id").alias("payload"),
        F.format_string("key-%d", F.col("id") % 10).alias("key"))
    result = spark_kpl.write(rows, args.stream, data="payload", partition_key="key", **options)
    print("RESULT " + json.dumps(dataclasses.asdict(result)))
    spark.stop()


if __name__ == "__main__":
    main()
