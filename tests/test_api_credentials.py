"""Credentials: static keys end to end (kinesis-mock accepts any), a clear error for a profile that
does not exist, and secrets never shown in the plan, the write's description or the logs. (Role
ARNs cannot reach STS from here: the JVM test WriteConfigTest checks the provider they build.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl.testing.processes import live_children

SECRET = "never-shown-9f8e7d6c5b4a"
KEY_ID = "AKIDNEVERSHOWN123"


def sql_plan_descriptions(spark):
    """The physical plans Spark's SQL tab shows, for every query this session ran."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return [executions.apply(i).physicalPlanDescription() + executions.apply(i).description()
            for i in range(executions.size())]


def daemon_command_lines(spark):
    """The command line of each KPL daemon of the driver JVM (local mode: the tasks'), as every local
    user can read it."""
    jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    return [Path(f"/proc/{daemon}/cmdline").read_bytes().decode(errors="replace")
            for daemon in live_children(jvm, "kinesis_producer")]


def test_static_keys_write_end_to_end_and_stay_secret(spark, kinesis, stream, jvm_log):  # noqa: F811
    level = spark.sparkContext._jvm.org.apache.logging.log4j.Level
    configurator = spark.sparkContext._jvm.org.apache.logging.log4j.core.config.Configurator
    configurator.setLevel("sparkkpl", level.INFO)  # so the producer's start, with its config, is logged
    spark.conf.set("spark.kpl.awsSecretAccessKey", SECRET)
    try:
        rows = spark.range(50, numPartitions=2).select(F.format_string("row-%d", "id").alias("data"))
        result = spark_kpl.write(rows, stream, awsAccessKeyId=KEY_ID, awsSessionToken=SECRET + "-token",
                                 **kinesis.kpl_options())
    finally:
        spark.conf.unset("spark.kpl.awsSecretAccessKey")
        configurator.setLevel("sparkkpl", level.WARN)
    assert result.records_written == 50
    command_lines = daemon_command_lines(spark)  # the producer idles 2 s before it closes
    assert command_lines, "no KPL daemon running after the write"
    for command_line in command_lines:  # the session token starts with SECRET too
        # The KPL passes its configuration to the daemon as hex-encoded protobuf.
        assert SECRET not in command_line and SECRET.encode().hex() not in command_line.lower()
    assert sorted(r.data for r in kinesis.read_records(stream)) == sorted(f"row-{i}".encode() for i in range(50))
    log = jvm_log.toString()
    assert re.search(r"Starting a KPL producer for WriteConfig\{.*spark\.kpl\.awsAccessKeyId=\*\*\*", log)
    plans = "\n".join(sql_plan_descriptions(spark))
    assert "Kinesis (KPL) WriteConfig" in plans
    for shown in (log, plans):
        assert SECRET not in shown and KEY_ID not in shown


def test_a_profile_that_does_not_exist_is_a_clear_error(spark, kinesis, stream):
    rows = spark.range(1).select(F.lit("x").alias("data"))
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"'awsProfile' \(spark.kpl.awsProfile\): no profile 'nobody-has-this'"):
        spark_kpl.write(rows, stream, awsProfile="nobody-has-this", **kinesis.kpl_options())
