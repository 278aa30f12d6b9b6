"""spark-kpl: write Spark DataFrames to Amazon Kinesis Data Streams through the real KPL.

The sink itself is the Spark data source ``kpl`` (``df.write.format("kpl")``); this package finds
its jar, puts it on a session, and adds :func:`write`, which takes column expressions and returns
the write's figures, :func:`write_rdd` for RDDs of Python objects, and :mod:`spark_kpl.dedup` for
consumers dropping duplicates.
"""

from __future__ import annotations

import os
from typing import Any, Protocol, TypeVar

from spark_kpl._jar import JAR_ENV, __version__, jar_path
from spark_kpl.errors import ProducerFailed, RecordsNotDelivered, SparkKplError, StreamRecreated, WriteRefused
from spark_kpl.writer import WriteResult, producer_settings, producer_stats, write, write_rdd, write_settings

__all__ = ["JAR_ENV", "ProducerFailed", "RecordsNotDelivered", "SparkKplError", "StreamRecreated", "WriteRefused",
           "WriteResult", "__version__", "configure", "jar_path", "producer_settings", "producer_stats", "write",
           "write_rdd", "write_settings"]

Builder = TypeVar("Builder", bound="_SessionBuilder")


class _SessionBuilder(Protocol):
    """What :func:`configure` needs of a builder: ``SparkSession.builder``'s ``config(key, value)``."""

    def config(self: Builder, key: str, value: str) -> Builder: ...


_CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _is_connect(builder: Any) -> bool:
    """A Spark Connect client's builder or session: its driver is a server elsewhere."""
    remote = "spark.remote" in getattr(builder, "_options", {}) or "SPARK_REMOTE" in os.environ
    return remote or type(builder).__module__.startswith("pyspark.sql.connect")


def _connect_advice() -> str:
    try:
        jar = str(jar_path())
    except FileNotFoundError:
        jar = '"$(python -m spark_kpl jar-path)"'
    return ("spark_kpl.configure puts the jar on a session that starts its own driver, and a Spark Connect "
            "client's driver is the Connect server: the jar belongs on the server. Start it with "
            f"--jars {jar} (or spark.jars={jar}): `spark-submit --class {_CONNECT_SERVER} --jars {jar} "
            f"spark-internal`, or `sbin/start-connect-server.sh --jars {jar}` in a Spark distribution. Then "
            "build this session without configure: df.write.format(\"kpl\") and spark_kpl.write work from the "
            "client")


def configure(builder: Builder) -> Builder:
    """Put the spark-kpl jar on ``spark.jars`` of a ``SparkSession.builder``, and return the builder.

    A Spark Connect builder (``.remote(...)``) raises ``RuntimeError`` saying how to put the jar on
    the Connect server instead: a client cannot add it to the server's driver.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = spark_kpl.configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    if _is_connect(builder):
        raise RuntimeError(_connect_advice())
    jar = str(jar_path())
    existing = getattr(builder, "_options", {}).get("spark.jars")
    jars = f"{existing},{jar}" if existing and jar not in existing.split(",") else (existing or jar)
    return builder.config("spark.jars", jars)
