"""spark-kpl: write Spark DataFrames to Amazon Kinesis Data Streams through the real KPL.

The sink itself is the Spark data source ``kpl`` (``df.write.format("kpl")``); this package finds
its jar, puts it on a session, and adds :func:`write`, which takes column expressions and returns
the write's figures, :func:`write_rdd` for RDDs of Python objects, and :mod:`spark_kpl.dedup` for
consumers dropping duplicates.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any, Union, overload

from spark_kpl._facts import DATA_SOURCE, PLUGIN, REPORT_OPTION, REPORTS
from spark_kpl._jar import JAR_ENV, __version__, jar_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_kpl.errors import (
        ProducerFailed,
        RecordsNotDelivered,
        SinkNotOnSession,
        SparkKplError,
        StreamRecreated,
        WriteRefused,
    )
    from spark_kpl.writer import WriteResult, producer_settings, producer_stats, write, write_rdd, write_settings

#: The modules of the names in ``__all__`` that need pyspark: loaded when one is first used, so that
#: ``python -m spark_kpl`` (a cluster node's bootstrap action) and ``spark_kpl.dedup`` (a consumer) run
#: where pyspark is not installed.
_NEEDING_PYSPARK = ("spark_kpl.errors", "spark_kpl.writer")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for module in _NEEDING_PYSPARK:
            value = getattr(importlib.import_module(module), name, None)
            if value is not None:
                globals()[name] = value
                return value
    raise AttributeError(f"module 'spark_kpl' has no attribute {name!r}")

__all__ = ["JAR_ENV", "ProducerFailed", "RecordsNotDelivered", "SinkNotOnSession", "SparkKplError", "StreamRecreated",
           "WriteRefused", "WriteResult", "__version__", "configure", "jar_path", "producer_settings",
           "producer_stats", "write", "write_rdd", "write_settings"]


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
            f"build this session without configure: df.write.format(\"{DATA_SOURCE}\") and spark_kpl.write work "
            "from the client")


def _session_advice(jar: str) -> str:
    return ("A Spark session is already running in this process (on AWS Glue it exists before the job's code "
            "runs), and spark.jars only takes effect when a session starts: this session has no spark-kpl jar, "
            "and spark_kpl.configure cannot add it now. Put the jar on the session as it starts: on Glue 5, the "
            "job parameter --extra-jars s3://<bucket>/<path>/" + os.path.basename(jar) + " (and "
            "--additional-python-modules with the spark_kpl wheel for this package); with spark-submit, --jars "
            f"{jar}; in spark-defaults.conf, spark.jars {jar}. A session stopped and started again in the same "
            "process keeps the driver's first class path, so stopping it does not help")


def _has_sink(session: Any) -> bool:
    """Whether the running session finds the ``kpl`` data source (its jar was there when it started)."""
    try:
        # Resolves the source; reads nothing.
        session.read.format(DATA_SOURCE).option(REPORT_OPTION, REPORTS["WRITE_SETTINGS"].name).load()
    except Exception as error:
        if "DATA_SOURCE_NOT_FOUND" in str(error) or "Failed to find the data source" in str(error):
            return False
        raise
    return True


def _running_session() -> Any:
    """The classic session running in this process, or None; without starting one."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None:
        return None
    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


@overload
def configure(builder: "SparkSession.Builder") -> "SparkSession.Builder": ...


@overload
def configure(builder: "SparkSession") -> "SparkSession": ...


def configure(builder: Union["SparkSession.Builder", "SparkSession"]) -> Union["SparkSession.Builder", "SparkSession"]:
    """Put the spark-kpl jar on ``spark.jars`` of a ``SparkSession.builder`` and the sink's plugin on
    ``spark.plugins.defaultList`` (which Spark adds to ``spark.plugins``; executors then ask the driver for
    the streams rows name instead of each describing them: docs/scaling.md), and return the builder.

    ``spark.jars`` only counts when a session starts. When a session is already running in this
    process (AWS Glue starts it before the job's code), its ``getOrCreate`` would return that session
    as it is: ``configure`` returns the builder unchanged if that session has the sink, else raises
    :class:`spark_kpl.SinkNotOnSession` (a ``RuntimeError``) saying how to give the session the jar at its
    start (Glue's ``--extra-jars``, ``spark-submit --jars``). Given a running ``SparkSession`` instead of a
    builder, it checks the same and returns the session. A Spark Connect builder (``.remote(...)``) raises
    ``SinkNotOnSession`` saying how to put the jar on the Connect server instead: a client cannot add it to
    the server's driver.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = spark_kpl.configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    from spark_kpl.errors import SinkNotOnSession  # needs pyspark: see _NEEDING_PYSPARK

    if _is_connect(builder):
        raise SinkNotOnSession(_connect_advice())
    jar = str(jar_path())
    from pyspark.sql import SparkSession

    running = builder if isinstance(builder, SparkSession) else _running_session()
    if running is not None:
        if not _has_sink(running):
            raise SinkNotOnSession(_session_advice(jar))
        return builder
    assert not isinstance(builder, SparkSession)  # a session is running
    builder = _appended(builder, "spark.jars", jar)
    if PLUGIN in getattr(builder, "_options", {}).get(_PLUGINS, "").split(","):
        return builder
    # Spark puts this list before spark.plugins: a spark.plugins of spark-defaults.conf stays in force,
    # which the builder's own spark.plugins would replace.
    return _appended(builder, _DEFAULT_PLUGINS, PLUGIN)


_PLUGINS = "spark.plugins"
_DEFAULT_PLUGINS = "spark.plugins.defaultList"


def _appended(builder: "SparkSession.Builder", key: str, value: str) -> "SparkSession.Builder":
    """The builder with ``value`` added to the comma-separated list under ``key``, once."""
    existing = getattr(builder, "_options", {}).get(key)
    if existing and value in existing.split(","):
        return builder
    return builder.config(key, f"{existing},{value}" if existing else value)
