"""Many small tasks: 2,000 tasks of 10 rows through the sink against Spark's noop sink, in one driver.

SPARK_KPL_JAR=<jar> python bench/small_tasks.py ['{"KplProperty": "value"}']

Hosts the project's KinesisEndpoint (store=False, 127.0.0.1, one stream of 16 shards, SHARDS overrides
it), starts a local[2] driver (MASTER overrides it, TASKS the task count), writes one row (the producer
starts), caches TASKS x 10 rows of about 10 B in TASKS partitions, then four times (WRITES) writes them
through noop and then through the sink. Prints one line "RESULT {json}": each write's seconds, the last
write's cost per task over noop, the KPL daemon's CPU per task over the last write, and its rows per
Kinesis record. SINK_LOG=1 turns the sink's DEBUG log on for the last write: each task's line gives how
long after its commit began Kinesis acknowledged its records.

Run it with each jar in turn, alternating, on an otherwise idle machine (bench/results/small-tasks/README.md,
"Many small tasks").
"""

import json
import os
import sys
import time
from typing import List

from spark_kpl_testing.env import apply_loopback_env

apply_loopback_env()

import spark_kpl  # noqa: E402
from spark_kpl_bench.throughput.child_process import tree_cpu_seconds  # noqa: E402
from spark_kpl_bench.throughput.settings import KPL_TUNING  # noqa: E402
from spark_kpl_testing.endpoint import KinesisEndpoint  # noqa: E402
from spark_kpl_testing.session import spark_session  # noqa: E402


def daemon_cpu_seconds() -> float:
    """CPU seconds so far of the KPL daemons under this process (the local driver's JVM is its child)."""
    return tree_cpu_seconds(os.getpid()).get("daemon", 0.0)


def main() -> None:
    extra = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    tasks = int(os.environ.get("TASKS", "2000"))
    writes = int(os.environ.get("WRITES", "4"))
    shards = int(os.environ.get("SHARDS", "16"))
    endpoint = KinesisEndpoint({"probe": shards}, store=False).start()
    try:
        spark = spark_session("small-tasks", os.environ.get("MASTER", "local[2]"), heap="2g")
        opts = {**endpoint.kpl_options(), **KPL_TUNING, **extra}
        one_row = spark.range(1, numPartitions=1).selectExpr("cast(id as string) as data", "'k' as partitionKey")
        spark_kpl.write(one_row, "probe", data="data", partition_key="partitionKey", **opts)
        rows = spark.range(tasks * 10, numPartitions=tasks).selectExpr(
            "cast(id as string) as data", "concat('k', id) as partitionKey").persist()
        rows.count()
        noop: List[float] = []
        sink: List[float] = []
        for write in range(writes):
            started = time.time()
            rows.write.format("noop").mode("overwrite").save()
            noop.append(round(time.time() - started, 2))
            if write == writes - 1 and os.environ.get("SINK_LOG"):
                jvm = spark.sparkContext._jvm
                jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
                    "sparkkpl", jvm.org.apache.logging.log4j.Level.DEBUG)
            started, daemon_started = time.time(), daemon_cpu_seconds()
            result = spark_kpl.write(rows, "probe", data="data", partition_key="partitionKey", **opts)
            sink.append(round(time.time() - started, 2))
            daemon_cpu = daemon_cpu_seconds() - daemon_started
        out = {"jar": os.environ.get("SPARK_KPL_JAR"), "extra": extra, "shards": shards, "noop": noop, "sink": sink,
               "per_task_ms_over_noop": round((sink[-1] - noop[-1]) / tasks * 1000, 2),
               "daemon_cpu_ms_per_task": round(daemon_cpu / tasks * 1000, 3),
               "rows_per_kinesis_record": round(result.records_written / result.kinesis_records_written, 2)}
        print("RESULT " + json.dumps(out), flush=True)
        spark.stop()
    finally:
        endpoint.stop()


if __name__ == "__main__":
    main()
