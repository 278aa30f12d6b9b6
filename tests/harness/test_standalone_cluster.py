"""A job on a real 2-worker standalone cluster runs on two executor JVMs, and stop() leaves nothing behind."""

from __future__ import annotations

import os
import time
from typing import Iterable, Iterator, List, Tuple

import pytest

from spark_kpl_testing.cluster import StandaloneCluster
from spark_kpl_testing.env import LOOPBACK_AWS_ENV
from spark_kpl_testing.processes import wait_gone
from spark_kpl_testing.session import spark_session


@pytest.mark.uses_spark  # a cluster and a driver of this Spark line, without the fixtures
def test_two_executor_jvms_and_clean_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        pytest.skip("another SparkContext is active in this process; one driver per JVM")
    # The driver JVM that pyspark starts inherits os.environ.
    for key, value in LOOPBACK_AWS_ENV.items():
        monkeypatch.setenv(key, value)

    # Nested, so cloudpickle ships it by value: executors cannot import this test module.
    def _executor_of_this_task(_: Iterable[int]) -> Iterator[Tuple[int, int, str]]:
        """(python worker pid, executor JVM pid, executor id): walk up /proc to the executor JVM."""
        # Fails the task unless executors find the harness through the PYTHONPATH spark_conf() sets.
        from spark_kpl_testing.processes import cmdline, process_stat

        pid = os.getpid()
        jvm, exec_id = -1, ""
        cur = pid
        while cur > 1:
            args = cmdline(cur)
            if any("CoarseGrainedExecutorBackend" in a for a in args):
                jvm = cur
                exec_id = args[args.index("--executor-id") + 1]
                break
            parent = process_stat(cur)
            cur = parent.ppid if parent else 1

        time.sleep(0.5)  # keep each core busy a moment so the tasks spread over both executors
        yield pid, jvm, exec_id

    cluster = StandaloneCluster(workers=2, cores_per_worker=1, memory_per_worker="1g")
    t0 = time.monotonic()
    cluster.start()
    started = cluster.started_pids
    seen_executors: List[int] = []
    try:
        print(f"cluster start: {time.monotonic() - t0:.1f}s")
        spark = spark_session("spark-kpl-standalone-test", cluster.master_url, conf=cluster.spark_conf(),
                              log_level=None)
        try:
            rows = spark.sparkContext.parallelize(range(4), 4).mapPartitions(_executor_of_this_task).collect()
            seen_executors = cluster.executor_pids()
        finally:
            spark.stop()
    finally:
        t1 = time.monotonic()
        cluster.stop()
        print(f"cluster stop: {time.monotonic() - t1:.1f}s")

    assert len(rows) == 4
    jvms = {jvm for _, jvm, _ in rows}
    exec_ids = {eid for _, _, eid in rows}
    assert len(jvms) == 2 and len(exec_ids) == 2, rows
    assert jvms <= set(seen_executors), (rows, seen_executors)

    assert all(wait_gone(p, 5) for p in [*started, *seen_executors])
    assert cluster.executor_pids() == []
    cluster.stop()  # idempotent
