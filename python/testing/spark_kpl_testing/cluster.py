"""A real Spark standalone cluster (one master JVM, N worker JVMs) on 127.0.0.1, for tests.

``local[*]`` runs every task in the driver JVM, so it cannot show what happens with several executor
JVMs (one KPL daemon per executor, an executor dying mid-write). This starts the cluster from the pip
``pyspark`` package alone, keeps all of its files in a temp dir of ours, and stops exactly the
processes it started.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Set

from spark_kpl_testing.env import LOOPBACK_AWS_ENV, loopback_env, python_path
from spark_kpl_testing.lifecycle import Service
from spark_kpl_testing.net import LOOPBACK, NO_PROXY, free_ports
from spark_kpl_testing.polling import wait_for
from spark_kpl_testing.processes import cmdline, descendants, log_tail, process_table, stop_processes, terminate

__all__ = ["StandaloneCluster", "spark_home"]

_EXECUTOR_MARK = "CoarseGrainedExecutorBackend"


def spark_home() -> str:
    """The installed ``pyspark`` package dir: it carries ``bin/spark-class`` and Spark's jars."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


class StandaloneCluster(Service):
    """A Spark standalone master plus ``workers`` worker JVMs on 127.0.0.1, each its own process group."""

    def __init__(
        self,
        workers: int = 2,
        cores_per_worker: int = 1,
        memory_per_worker: str = "1g",
        extra_env: Optional[Mapping[str, str]] = None,
        start_timeout: float = 60.0,
        stop_timeout: float = 15.0,
    ) -> None:
        self.workers = workers
        self.cores_per_worker = cores_per_worker
        self.memory_per_worker = memory_per_worker
        self.extra_env: Dict[str, str] = dict(extra_env or {})
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._tmp: Optional[Path] = None
        self._master: Optional[subprocess.Popen[bytes]] = None
        self._workers: List[subprocess.Popen[bytes]] = []
        self._logs: List[Path] = []
        self._port = 0
        self._webui_port = 0
        self._owner = os.getpid()  # atexit in a forked child must not stop the parent's cluster
        self._started_pids: Set[int] = set()

    # -- lifecycle -------------------------------------------------------------------------------

    def _check_startable(self) -> None:
        if self._master is not None:
            raise RuntimeError("cluster already started")

    def _start(self) -> None:
        """Start master and workers, and wait until the master lists every worker ALIVE."""
        self._owner = os.getpid()
        self._logs = []
        self._tmp = Path(tempfile.mkdtemp(prefix="spark-kpl-cluster-"))
        for sub in ("work", "logs", "pids", "local"):
            (self._tmp / sub).mkdir()
        # All ports picked together: two free_port() calls in a row may return the same port, and a master
        # whose web UI then moves to the next port is polled on its RPC port (CI of stop 53).
        self._port, self._webui_port, *worker_ports = free_ports(2 + 2 * self.workers)
        try:
            self._master = self._spawn(
                "master",
                "org.apache.spark.deploy.master.Master",
                ["--host", LOOPBACK, "--port", str(self._port), "--webui-port", str(self._webui_port)],
            )
            for i in range(self.workers):
                self._workers.append(
                    self._spawn(
                        f"worker-{i}",
                        "org.apache.spark.deploy.worker.Worker",
                        [
                            "--host", LOOPBACK,
                            "--port", str(worker_ports[2 * i]),
                            "--webui-port", str(worker_ports[2 * i + 1]),
                            "--cores", str(self.cores_per_worker),
                            "--memory", self.memory_per_worker,
                            self.master_url,
                        ],
                    )
                )
            self._wait_alive()
        except BaseException as exc:
            raise RuntimeError(f"Spark standalone cluster did not come up ({exc!r}):\n{self._log_tails()}") from exc

    def _stop(self) -> None:
        """Stop workers, then master, then leftover executors, by pid (TERM, then KILL)."""
        if os.getpid() != self._owner:
            return
        master = self._master
        groups = {p.pid for p in self._workers} | ({master.pid} if master else set())
        leftovers = {pid: found.start_ticks for pid, found in descendants(*groups).items()}
        for proc in self._workers:
            terminate(proc, self.stop_timeout)
        if master is not None:
            terminate(master, self.stop_timeout)
        # Executors (and their Python daemons) the workers did not take down with them.
        stop_processes(leftovers, self.stop_timeout)
        # Anything still in one of our own process groups (e.g. spark-class's launcher step).
        stop_processes({p.pid: p.start_ticks for p in process_table().values()
                        if p.pgid in groups and p.pid != os.getpid()}, 0)
        self._master, self._workers = None, []
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    # -- what jobs need --------------------------------------------------------------------------

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self._port}"

    @property
    def webui_url(self) -> str:
        return f"http://{LOOPBACK}:{self._webui_port}"

    @property
    def started_pids(self) -> Set[int]:
        """Every master/worker pid this cluster ever started (for leak checks in tests)."""
        return set(self._started_pids)

    def spark_conf(self) -> Dict[str, str]:
        """SparkSession conf for a driver in this process: one executor per worker, all on loopback."""
        conf: Dict[str, str] = {
            "spark.master": self.master_url,
            "spark.driver.host": LOOPBACK,
            "spark.driver.bindAddress": LOOPBACK,
            "spark.executor.cores": str(self.cores_per_worker),
            "spark.executor.memory": self.memory_per_worker,
            "spark.cores.max": str(self.cores_per_worker * self.workers),
            # Otherwise the first job may start when one executor has registered and run on it alone.
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
            "spark.ui.enabled": "false",
            "spark.pyspark.python": sys.executable,
            "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
            "spark.executorEnv.PYTHONPATH": python_path(),
        }
        for key, value in LOOPBACK_AWS_ENV.items():
            conf[f"spark.executorEnv.{key}"] = value
        return conf

    def executor_pids(self) -> List[int]:
        """pids of CoarseGrainedExecutorBackend JVMs now running under our workers."""
        roots = {p.pid for p in self._workers if p.poll() is None}
        return sorted(pid for pid in descendants(*roots) if _EXECUTOR_MARK in " ".join(cmdline(pid)))

    def kill_executor(self) -> int:
        """SIGKILL to one executor JVM, as when its machine or container dies; returns its pid."""
        victim = self.executor_pids()[0]
        os.kill(victim, signal.SIGKILL)
        return victim

    def executor_log_lines(self, *marks: str) -> List[str]:
        """Lines of every executor's stderr (this cluster's apps) that contain one of ``marks``."""
        if self._tmp is None:
            return []
        found = []
        for log in sorted((self._tmp / "work").glob("app-*/*/stderr")):
            lines = log.read_text(errors="replace").splitlines()
            found += [f"{log.parent.name}: {line}" for line in lines if any(mark in line for mark in marks)]
        return found

    # -- internals -------------------------------------------------------------------------------

    def _env(self) -> Dict[str, str]:
        assert self._tmp is not None
        env = loopback_env()
        env.update(
            SPARK_HOME=spark_home(),
            SPARK_LOCAL_IP=LOOPBACK,
            SPARK_WORKER_DIR=str(self._tmp / "work"),
            SPARK_LOG_DIR=str(self._tmp / "logs"),
            SPARK_PID_DIR=str(self._tmp / "pids"),
            SPARK_LOCAL_DIRS=str(self._tmp / "local"),
            PYSPARK_PYTHON=sys.executable,
            PYTHONPATH=python_path(),
        )
        env.update(self.extra_env)
        return env

    def _spawn(self, name: str, main_class: str, args: List[str]) -> subprocess.Popen[bytes]:
        assert self._tmp is not None
        log = self._tmp / "logs" / f"{name}.out"
        self._logs.append(log)
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [os.path.join(spark_home(), "bin", "spark-class"), main_class, *args],
                env=self._env(),
                cwd=str(self._tmp),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: a Ctrl-C to pytest does not hit it first
            )
        self._started_pids.add(proc.pid)
        return proc

    def _wait_alive(self) -> None:
        def every_worker_alive() -> bool:
            for proc in [self._master, *self._workers]:
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"pid {proc.pid} exited with {proc.returncode}")
            return self._workers_alive() >= self.workers

        wait_for(every_worker_alive, self.start_timeout, f"{self.workers} workers ALIVE",
                 lambda: f"{self._workers_alive()} ALIVE", every=0.25)

    def _workers_alive(self) -> int:
        try:
            with NO_PROXY.open(f"{self.webui_url}/json", timeout=2) as resp:
                return sum(1 for w in json.load(resp).get("workers", []) if w.get("state") == "ALIVE")
        except (OSError, ValueError):
            return 0

    def _log_tails(self) -> str:
        return "\n".join(f"--- {log.name} ---\n{log_tail(log)}" for log in self._logs)
