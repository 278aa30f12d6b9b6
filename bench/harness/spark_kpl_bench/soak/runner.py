"""A soak, run: the streaming query at the shard's quota for its minutes while faults come and go,
memory sampled each second, then the stream read back and the JVM stopped."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

from spark_kpl_bench.soak.faults import fault_cycle, inject_faults
from spark_kpl_bench.soak.histograms import Histogram, class_histogram, take_histograms
from spark_kpl_bench.soak.memory import heap_reader, late_minutes, sample_each_second
from spark_kpl_bench.soak.query import (
    committed_rows,
    failed_task_attempts,
    heap_flags,
    run_query,
    start_query,
    start_spark,
)
from spark_kpl_bench.soak.readback import Delivery, Leftovers, read_back, stop_spark
from spark_kpl_bench.soak.settings import BURST_SECONDS, HISTOGRAM_SECONDS, SHARDS, STREAM
from spark_kpl_bench.soak.timeline import Clock, Event, Minute, first_line
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.processes import driver_jvm_pid


@dataclass
class Measured:
    """What a soak measured, for its report."""

    spark_version: str
    minutes: List[Minute]
    events: List[Event]
    restarts: List[Event]
    delivery: Delivery
    failed_attempts: int
    leftovers: Leftovers
    flags: List[str]
    histograms: Dict[str, Histogram]


def run_soak(minutes: int, fault_every: float, rows_per_batch: int, baseline: int) -> Measured:
    """Runs the soak for ``minutes``, a fault every ``fault_every`` seconds, ``rows_per_batch`` per
    micro-batch; ``baseline`` is the minute whose peak the memory rule compares with."""
    # Ctrl-C and SIGTERM are noted, and acted on between two calls into the JVM: an exception raised inside
    # a py4j call breaks the gateway that the clean-up below needs.
    interrupted = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: interrupted.set())

    work = Path(tempfile.mkdtemp(prefix="spark-kpl-soak-"))
    native_dir, checkpoint = work / "native", work / "checkpoint"
    endpoint = KinesisEndpoint({STREAM: SHARDS}, faults=Faults.kinesis_limits()).start()
    spark = None
    stop = threading.Event()
    threads: List[threading.Thread] = []
    try:
        spark = start_spark()
        # PySpark's own SIGINT handler calls into the JVM from inside a call: the note above instead.
        signal.signal(signal.SIGINT, lambda *_: interrupted.set())
        jvm = driver_jvm_pid(spark)
        flags = heap_flags(jvm)
        print(f"Spark JVM pid {jvm}: {' '.join(flags)}; baseline minute {baseline}, last quarter minutes "
              f"{late_minutes(minutes).start}-{minutes}", flush=True)
        until = minutes * 60.0
        clock = Clock()
        events: List[Event] = []
        restarts: List[Event] = []
        run_ids: List[str] = []
        sampled: Dict[str, List[Minute]] = {}
        histograms: Dict[str, Histogram] = {}

        def final_histogram() -> None:
            try:
                histograms["end"] = class_histogram(jvm, clock)
            except (OSError, subprocess.SubprocessError) as error:
                print(f"[{clock.now():6.0f} s] no final class histogram: {first_line(error)}", flush=True)

        def sample() -> None:
            sampled["minutes"] = sample_each_second(endpoint, jvm, heap_reader(spark), native_dir, clock,
                                                    minutes, stop)

        threads = [threading.Thread(target=sample, daemon=True),
                   threading.Thread(target=inject_faults, daemon=True,
                                    args=(endpoint, fault_cycle(jvm, native_dir), clock, fault_every,
                                          until - BURST_SECONDS, stop, events)),
                   threading.Thread(target=take_histograms, daemon=True,
                                    args=(jvm, clock, baseline, stop, histograms))]
        for thread in threads:
            thread.start()
        run_query(lambda: start_query(spark, endpoint, checkpoint, native_dir, rows_per_batch),
                  clock, until, restarts, run_ids, interrupted, final_histogram)
        stop.set()
        for thread in threads:
            thread.join(max(BURST_SECONDS, HISTOGRAM_SECONDS) + 5)
        failed_attempts = failed_task_attempts(spark, run_ids)
        delivery = read_back(endpoint, *committed_rows(checkpoint, rows_per_batch))
        spark_version = spark.version
        leftovers = stop_spark(spark, native_dir)
        spark = None
    finally:
        stop.set()
        try:
            if spark is not None:
                stop_spark(spark, native_dir)
        finally:
            endpoint.stop()
            shutil.rmtree(work, ignore_errors=True)
    return Measured(spark_version, sampled["minutes"], events, restarts, delivery, failed_attempts, leftovers,
                    flags, histograms)
