"""Rows of which some target a stream that does not exist: the records Kinesis finally fails, which
the failure tests of this folder write on a classic session and on Spark Connect alike."""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

MISSING_STREAM = "no-such-stream"
#: The KPL retries a stream it cannot find until a record's time to live runs out.
FAST_EXPIRY = {"RecordTtl": "1000"}


def rows_partly_to_a_missing_stream(spark: Any, stream: str, count: int = 20, every: int = 5):
    """Rows whose id is a multiple of ``every`` target a stream that does not exist."""
    return spark.range(count, numPartitions=1).select(
        F.format_string("row-%d", "id").alias("data"),
        F.format_string("key-%d", "id").alias("partitionKey"),
        F.when(F.col("id") % every == 0, F.lit(MISSING_STREAM)).otherwise(F.lit(stream)).alias("streamName"),
    )
