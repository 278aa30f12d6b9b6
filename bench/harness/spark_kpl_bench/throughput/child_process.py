"""A producer's child process, run and sampled: its JSON lines, the RSS and CPU of its process tree, the
endpoint's counters around each timed run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from spark_kpl_bench.processes import cpu_seconds
from spark_kpl_bench.throughput.settings import ENDPOINT_COUNTERS, ROOT
from spark_kpl_testing.env import loopback_env
from spark_kpl_testing.net import LOOPBACK
from spark_kpl_testing.processes import (
    ProcessStat,
    descendants,
    process_stat,
    stop_process_tree,
)


def tree_by_kind(pid: int) -> List[Tuple[ProcessStat, str]]:
    """A process and its descendants with their kind: daemon (the KPL's), jvm or python."""
    found = []
    for process in [*filter(None, [process_stat(pid)]), *descendants(pid).values()]:
        kind = "daemon" if process.command.startswith("kinesis_produc") else (
            "jvm" if process.command == "java" else "python" if process.command.startswith("python") else None)
        # Anything else is a fork between fork() and exec() (named after the forking
        # thread), sharing its parent's pages: counting it would count the parent twice.
        if kind:
            found.append((process, kind))
    return found


def tree_cpu_seconds(pid: int, also: Sequence[int] = ()) -> Dict[str, float]:
    """CPU seconds so far of a process tree (and of the trees of ``also``: a cluster's executors, which
    are no children of the driver) by kind, and of this process (it hosts the endpoint): a run's share
    is the difference around it."""
    seconds: Dict[str, float] = {"endpoint": cpu_seconds(os.getpid())}
    for root in (pid, *also):
        for process, kind in tree_by_kind(root):
            seconds[kind] = seconds.get(kind, 0.0) + process.cpu_seconds
    return seconds


class TreeSampler(threading.Thread):
    """Peak summed RSS of a process and all its descendants, by kind (java / kinesis_producer / python)."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_total = 0
        self.peak_by_kind: Dict[str, int] = {}
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            kinds: Dict[str, int] = {}
            for process, kind in tree_by_kind(self.pid):
                kinds[kind] = kinds.get(kind, 0) + process.rss_bytes
            total = sum(kinds.values())
            if total > self.peak_total:
                self.peak_total = total
            for kind, rss in kinds.items():
                self.peak_by_kind[kind] = max(self.peak_by_kind.get(kind, 0), rss)
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(5)


def counters_between(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, int]:
    return {k: after[k] - before[k] for k in ENDPOINT_COUNTERS}


def run_process(command: List[str], log: Path, timeout: float,
                counters: Optional[Callable[[], Dict[str, Any]]] = None, warmup: int = 0,
                before_run: Optional[Callable[[int], object]] = None,
                also: Callable[[], Sequence[int]] = tuple, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Start ``command`` in its own process group, sample its tree, collect its JSON lines; always stop it.
    Each run's CPU also counts the process trees of ``also()`` (a cluster's executors), looked up at its start.

    A child line {"ready": run} is answered on its stdin once ``before_run`` has been called with the
    run's index (warm-up runs count) and ``counters`` (the endpoint's) are read;
    the run's own result line then gets the counters' difference as "endpoint". A line of the
    producer's KPL settings goes into the result as it is. The first ``warmup`` runs are marked as such.
    ``env`` is laid over the child's loopback environment (another JAVA_HOME, say).
    """
    started = time.time()
    with open(log, "ab") as err:
        err.write(f"\n=== {' '.join(command)}\n".encode())
        err.flush()
        child_env = loopback_env()
        child_env["SPARK_LOCAL_IP"] = LOOPBACK  # Spark binds loopback only
        child_env["PYSPARK_PYTHON"] = child_env["PYSPARK_DRIVER_PYTHON"] = sys.executable  # workers: this venv
        child_env.update(env or {})
        proc = subprocess.Popen(command, env=child_env, stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.PIPE, cwd=ROOT, start_new_session=True)
        assert proc.stdout is not None and proc.stdin is not None  # both are pipes
        sampler = TreeSampler(proc.pid)
        sampler.start()
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            stop_process_tree(proc, 10)

        deadline = threading.Timer(timeout, expire)
        deadline.start()
        cpu0 = cpu_seconds(os.getpid())
        runs: List[Dict[str, Any]] = []
        notes: Dict[str, Any] = {}
        before: Optional[Dict[str, Any]] = None
        cpu_before: Dict[str, float] = {}
        others: Sequence[int] = ()
        try:
            for raw in proc.stdout:
                if not raw.startswith(b"{"):
                    continue
                line = json.loads(raw)
                if "ready" in line:
                    if before_run:
                        before_run(len(runs))
                    before = counters() if counters else None
                    others = also()
                    cpu_before = tree_cpu_seconds(proc.pid, others)
                    proc.stdin.write(b"go\n")
                    proc.stdin.flush()
                elif "kpl_settings" in line or "heap_peaks" in line:
                    notes.update(line)
                else:
                    if counters and before is not None:
                        line["endpoint"] = counters_between(before, counters())
                        before = None
                    cpu_after = tree_cpu_seconds(proc.pid, others)  # a daemon replaced mid-run takes its CPU along
                    line["cpu_seconds"] = {kind: cpu_after[kind] - cpu_before.get(kind, 0.0) for kind in cpu_after}
                    line["warmup"] = len(runs) < warmup
                    runs.append(line)
            proc.wait()
        except BrokenPipeError:  # the child died before its go-ahead: its return code tells
            pass
        finally:
            deadline.cancel()
            sampler.stop()
            stop_process_tree(proc, 10)
    return {"returncode": proc.returncode, "runs": runs, **notes, "process_seconds": time.time() - started,
            "timed_out": expired.is_set(), "endpoint_cpu_seconds": cpu_seconds(os.getpid()) - cpu0,
            "peak_rss_bytes": sampler.peak_total, "peak_rss_by_kind": sampler.peak_by_kind,
            "started": started}
