"""Writes through the Glue Schema Registry options, in a driver of its own: the sink's jar and the optional
registry artifact (build/libs/spark-kpl-glue-<version>.jar) on spark.jars, which only counts when a driver JVM
starts, and a test process's driver may have started without it. Started by tests/sink/api/test_schema_registry.py.

Argument: a JSON object with ``kpl`` (the endpoint's KPL options), ``rows`` (how many), ``columns`` (their
expressions over ``id``), ``glue_jar`` and ``writes``, each a JSON object:
``mode`` (``batch`` or ``stream``), ``options`` (the write's), and for ``stream`` a ``checkpoint`` folder and an
``input`` folder. Prints one line per write, ``RESULT <json>``: ``{"error": null}`` or the error's message.
"""

from __future__ import annotations

import json
import sys

import spark_kpl
from spark_kpl_testing.session import spark_session


def write(spark, spec: dict, job: dict) -> None:
    options = {**job["kpl"], **spec["options"]}
    rows = spark.range(job["rows"], numPartitions=4).selectExpr(*job["columns"])
    if spec["mode"] == "batch":
        rows.write.format("kpl").options(**options).mode("append").save()
        return
    rows.write.mode("overwrite").parquet(spec["input"])
    source = spark.readStream.schema(rows.schema).parquet(spec["input"])
    query = source.writeStream.format("kpl").options(**options).option("checkpointLocation", spec["checkpoint"]) \
        .trigger(availableNow=True).start()
    query.awaitTermination(300)
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))


def main() -> None:
    job = json.loads(sys.argv[1])
    jars = f"{spark_kpl.jar_path()},{job['glue_jar']}"
    spark = spark_session("spark-kpl-schema-registry", "local[2]", conf={"spark.jars": jars})
    try:
        for spec in job["writes"]:
            try:
                write(spark, spec, job)
                print("RESULT " + json.dumps({"error": None}), flush=True)
            except Exception as e:  # the test asserts on the message
                print("RESULT " + json.dumps({"error": str(e)}), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
