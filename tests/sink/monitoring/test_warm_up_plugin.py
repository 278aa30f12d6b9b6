"""The experimental warm-up plugin (``spark.plugins=sparkkpl.spark.WarmUpPlugin``): it runs the row path
once in the executor JVM (the driver's, in local mode) as it starts, and a write beside it still delivers
every row once."""

from __future__ import annotations

import time

import pytest

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows

from conftest import _session

PLUGIN = "sparkkpl.spark.WarmUpPlugin"


@pytest.fixture(scope="module")
def spark():
    session = _session("local[2]", {"spark.plugins": PLUGIN})
    yield session
    session.stop()
    # PySpark keeps builder options as JVM system properties, which the next module's session would inherit.
    session.sparkContext._jvm.java.lang.System.clearProperty("spark.plugins")


def test_a_write_while_the_row_path_warms_up_delivers_every_row_once(spark, kinesis, stream):
    result = spark_kpl.write(numbered_rows(spark, 2000), stream, partition_key="partitionKey",
                             aggregation="executor", **kinesis.kpl_options())

    assert result.records_written == 2000
    report = compare(numbered_expected(2000), ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.exactly_once, report.summary()
    deadline = time.monotonic() + 120
    while spark.sparkContext._jvm.sparkkpl.spark.WarmUpPlugin.rowsWarmedUp() == 0:
        assert time.monotonic() < deadline, "the executor's warm-up did not run to its end"
        time.sleep(0.5)
