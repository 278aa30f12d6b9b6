"""spark-kpl: write Spark DataFrames to Amazon Kinesis Data Streams through the real KPL.

The sink itself is the Spark data source ``kpl`` (``df.write.format("kpl")``); this package finds
its jar, puts it on a session, and adds :func:`write`, which takes column expressions and returns
the write's figures, :func:`write_rdd` for RDDs of Python objects, and :mod:`spark_kpl.dedup` for
consumers dropping duplicates.
"""

from __future__ import annotations

from typing import TypeVar

from spark_kpl._jar import JAR_ENV, __version__, jar_path
from spark_kpl.errors import ProducerFailed, RecordsNotDelivered, SparkKplError, WriteRefused
from spark_kpl.writer import (WriteResult, producer_settings, producer_stats, write, write_rdd,
                              write_settings)

__all__ = ["JAR_ENV", "ProducerFailed", "RecordsNotDelivered", "SparkKplError", "WriteRefused", "WriteResult",
           "__version__", "configure", "jar_path", "producer_settings", "producer_stats", "write", "write_rdd",
           "write_settings"]

Builder = TypeVar("Builder")


def configure(builder: Builder) -> Builder:
    """Put the spark-kpl jar on ``spark.jars`` of a ``SparkSession.builder``, and return the builder.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = spark_kpl.configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    jar = str(jar_path())
    existing = getattr(builder, "_options", {}).get("spark.jars")
    jars = f"{existing},{jar}" if existing and jar not in existing.split(",") else (existing or jar)
    return builder.config("spark.jars", jars)
