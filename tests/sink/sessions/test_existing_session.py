"""A session that runs before the job's code (as on AWS Glue 5): spark_kpl.configure cannot add a jar to
it, so it either finds the sink already there or says how to put the jar on the session at its start."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.env import loopback_env

#: The job's code on a session started without the jar, as Glue starts one without --extra-jars.
JOB_ON_A_SESSION_WITHOUT_THE_JAR = textwrap.dedent("""
    from pyspark.sql import SparkSession
    import spark_kpl

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        spark_kpl.configure(SparkSession.builder).getOrCreate()
    except RuntimeError as refused:
        print(refused)
    else:
        print("configure returned a builder for a session without the sink")
    finally:
        spark.stop()
""")


def test_configure_after_a_session_without_the_jar_started_says_what_to_set():
    job = subprocess.run([sys.executable, "-c", JOB_ON_A_SESSION_WITHOUT_THE_JAR], capture_output=True, text=True,
                         env=loopback_env(), timeout=300)
    assert job.returncode == 0, job.stderr[-3000:]
    jar = str(spark_kpl.jar_path())
    assert job.stdout.startswith("A Spark session is already running in this process (on AWS Glue it exists"), (
        job.stdout + job.stderr[-3000:])
    assert "the job parameter --extra-jars s3://<bucket>/<path>/spark-kpl-" in job.stdout
    assert f"with spark-submit, --jars {jar};" in job.stdout


def test_configure_after_a_session_with_the_jar_started_returns_that_session(spark, endpoint, ep_stream):
    # The fixture's session started with the jar, as a Glue job's does with --extra-jars.
    assert spark_kpl.configure(SparkSession.builder).getOrCreate() is spark
    assert spark_kpl.configure(spark) is spark
    result = spark_kpl.write(spark.range(100).select(F.col("id").cast("string").alias("data")), ep_stream,
                             **endpoint.kpl_options())
    assert result.records_written == 100 and len(endpoint.records(ep_stream)) == 100
