"""Writes numbered rows to a Kinesis stream from PySpark, with the sink from --packages (no Python package
needed: df.write.format("kpl") is all of it).

    spark-submit --packages io.github.sparkkpl:spark-kpl:0.2.0 \
        --repositories file://$PWD/build/maven-repo --conf spark.kpl.Region=eu-west-1 \
        examples/python/write_rows.py clicks 1000

Any sink option or KPL property can be given as a spark.kpl.<name> config key, as here the region, or on
the write with .option(name, value), which wins.
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

stream, rows = sys.argv[1], int(sys.argv[2])
spark = SparkSession.builder.appName("spark-kpl-python-example").getOrCreate()
# The sink reads the columns data (string or binary) and partitionKey.
events = spark.range(rows).select(
    F.format_string("row-%d", "id").alias("data"),
    F.format_string("key-%d", F.col("id") % 10).alias("partitionKey"))
events.write.format("kpl").option("streamName", stream).mode("append").save()
print(f"wrote {rows} rows to {stream}")
spark.stop()
