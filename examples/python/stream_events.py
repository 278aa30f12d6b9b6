"""Streams the JSON lines files of a folder to a Kinesis stream from PySpark, with Structured Streaming:
each event is one record, its user the partition key.

    spark-submit --packages io.github.sparkkpl:spark-kpl:0.2.0 \
        --repositories file://$PWD/build/maven-repo --conf spark.kpl.Region=eu-west-1 \
        examples/python/stream_events.py events checkpoints/clicks clicks

The events are lines such as {"user": "u-1", "action": "click-7"}. The query sends what the folder holds
and stops (trigger availableNow); run it again and it sends only the files added since, as its checkpoint
remembers what was sent. For a query that runs on, use trigger(processingTime="10 seconds").
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

events_folder, checkpoint, stream = sys.argv[1:4]
spark = SparkSession.builder.appName("spark-kpl-python-streaming-example").getOrCreate()
events = spark.readStream.schema("user STRING, action STRING").json(events_folder)
records = events.select(F.to_json(F.struct("user", "action")).alias("data"), F.col("user").alias("partitionKey"))
query = (records.writeStream.format("kpl").option("streamName", stream)
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
query.awaitTermination()
print(f"streamed {events_folder} to {stream}")
spark.stop()
