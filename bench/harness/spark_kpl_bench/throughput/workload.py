"""The rows every producer writes, and which of them a producer that writes a share takes."""

from __future__ import annotations

from typing import List


def records_df(spark, n: int, size: int, partitions: int, with_id: bool = False):
    from pyspark.sql import functions as F

    ids = [F.col("id")] if with_id else []
    return spark.range(n, numPartitions=partitions).select(
        F.encode(F.rpad(F.concat(F.col("id").cast("string"), F.lit("-")), size, "x"), "UTF-8").alias("data"),
        F.concat(F.lit("k"), F.col("id").cast("string")).alias("partitionKey"), *ids)


def written_ids(cached: int, records: int, partitions: int) -> List[range]:
    """The ids a Spark producer writes of a cached workload of ``cached`` rows: the first share of each
    partition (spark.range gives partition i the ids from i * cached // partitions on), so that every
    task writes and every producer's JVM holds the same cache. KplLoop writes range(records)."""
    if records >= cached:
        return [range(cached)]
    return [range(i * cached // partitions, i * cached // partitions + (i + 1) * records // partitions
                  - i * records // partitions) for i in range(partitions)]


def mean_key_bytes(ids: List[range]) -> float:
    """Mean length of the partition keys f"k{id}" that records_df and KplLoop give these ids."""
    total = 0
    for span in ids:
        low, digits = span.start, max(1, len(str(span.start)))
        while low < span.stop:
            high = min(span.stop, 10 ** digits)
            total += (high - low) * (1 + digits)
            low, digits = high, digits + 1
    return total / sum(len(span) for span in ids)
