"""The soak's Spark session and streaming query, restarted from its checkpoint when it fails."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Callable, List, Tuple

from spark_kpl_bench.soak.settings import (
    DRIVER_HEAP_FLAGS,
    DRIVER_JAVA_OPTIONS,
    DRIVER_MEMORY,
    MASTER,
    MAX_RESTARTS,
    PARTITIONS,
    RECORD_BYTES,
    RESTART_PAUSE_SECONDS,
    STREAM,
)
from spark_kpl_bench.soak.timeline import Clock, Event, first_line
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.processes import cmdline
from spark_kpl_testing.session import spark_session


def start_spark() -> Any:
    return spark_session("spark-kpl-soak", MASTER, heap=DRIVER_MEMORY,
                         conf={"spark.driver.extraJavaOptions": DRIVER_JAVA_OPTIONS})


def heap_flags(jvm: int) -> List[str]:
    """The heap flags on the JVM's command line (/proc/<pid>/cmdline), as the JVM was really started;
    raises if one of DRIVER_HEAP_FLAGS is missing (the report would then describe a JVM that did not run)."""
    found = [a for a in cmdline(jvm) if a.startswith(("-Xms", "-Xmx", "-XX:+AlwaysPreTouch"))]
    missing = [flag for flag in DRIVER_HEAP_FLAGS if flag not in found]
    if missing:
        raise RuntimeError(f"the Spark JVM (pid {jvm}) runs without {', '.join(missing)}: its heap flags are {found}")
    return found


def start_query(spark, endpoint: KinesisEndpoint, checkpoint: Path, native_dir: Path, rows_per_batch: int):
    from pyspark.sql import functions as F

    rows = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
            .option("numPartitions", PARTITIONS).load()
            .select(F.rpad(F.format_string("soak-%d ", "value"), RECORD_BYTES, ".").alias("data")))
    return (rows.writeStream.format("kpl").option("checkpointLocation", str(checkpoint))
            .option("streamName", STREAM).option("recordId", "prefix").option("failOnError", "true")
            .option("nativeDir", str(native_dir)).options(**endpoint.kpl_options()).start())


def run_query(start: Callable[[], Any], clock: Clock, until: float, restarts: List[Event],
              run_ids: List[str], interrupted: threading.Event, before_stop: Callable[[], None]) -> None:
    """Runs the query until ``until``; when it fails (a batch's tasks failed 4 times), restarts it from
    its checkpoint after a pause, up to MAX_RESTARTS times, as a job supervisor with a retry policy
    would: the failed batch was not committed, so the restart sends it again. At ``until`` calls
    ``before_stop`` (the query still running), then stops it, mid-batch."""
    from pyspark.errors import StreamingQueryException

    while clock.now() < until:
        query = start()
        run_ids.append(str(query.runId))
        try:
            while not query.awaitTermination(1.0):
                if interrupted.is_set():
                    raise KeyboardInterrupt
                if clock.now() >= until:
                    before_stop()
                    query.stop()
                    return
            raise RuntimeError("the query ended by itself")
        except StreamingQueryException as error:
            restarts.append(Event(clock.now(), "query restarted from its checkpoint", first_line(error)))
            print(f"[{clock.now():6.0f} s] query failed: {first_line(error)}", flush=True)
            if len(restarts) > MAX_RESTARTS:
                raise
            time.sleep(RESTART_PAUSE_SECONDS)


def committed_rows(checkpoint: Path, rows_per_batch: int) -> Tuple[int, int]:
    """(batches committed, rows they hold): the source offset logged for the last committed batch. A
    batch the stop interrupted is not among them; a restart would send it again."""
    commits = [int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit()]
    if not commits:
        return 0, 0
    last = max(commits)
    offset = json.loads((checkpoint / "offsets" / str(last)).read_text().splitlines()[-1])
    rows = int(offset["offset"])
    if rows != (last + 1) * rows_per_batch:
        raise AssertionError(f"batch {last} ends at row {rows}, not {(last + 1) * rows_per_batch}")
    return last + 1, rows


def failed_task_attempts(spark, run_ids: List[str]) -> int:
    """Task attempts that failed in the query's jobs (a streaming run's job group is its run id)."""
    tracker = spark.sparkContext.statusTracker()
    stages = (stage for run in run_ids for job in tracker.getJobIdsForGroup(run)
              for stage in (tracker.getJobInfo(job).stageIds if tracker.getJobInfo(job) else []))
    return sum(info.numFailedTasks for info in map(tracker.getStageInfo, stages) if info)
