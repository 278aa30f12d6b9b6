"""The SparkSession that the tests, scripts and benchmarks write through: the sink's jar on spark.jars,
the UI and the console progress bar off, started in a loopback-safe environment."""

from __future__ import annotations

from typing import Any, Mapping, Optional

import spark_kpl
from spark_kpl_testing.env import apply_loopback_env

#: Every such session's: no UI port to open, no progress bar in the output a script prints.
QUIET_SPARK_CONF = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}


def spark_session(app_name: str, master: str = "local[2]", *, heap: Optional[str] = None,
                  conf: Optional[Mapping[str, str]] = None, log_level: Optional[str] = "ERROR",
                  loopback: bool = True) -> Any:
    """Get or create a SparkSession on ``master`` named ``app_name``; ``heap`` is the driver's memory,
    ``conf`` lays further settings over the quiet ones. ``log_level`` (None: Spark's own) is set once it
    runs. ``loopback=False`` leaves this process's environment as the caller made it (a test that
    plays an EC2 instance), else the driver JVM and its KPL daemons get the loopback AWS settings."""
    from pyspark.sql import SparkSession

    if loopback:
        apply_loopback_env()
    builder = spark_kpl.configure(SparkSession.builder.master(master).appName(app_name))
    settings = {**QUIET_SPARK_CONF, **({"spark.driver.memory": heap} if heap else {}), **(conf or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if log_level:
        spark.sparkContext.setLogLevel(log_level)
    return spark
