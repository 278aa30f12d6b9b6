"""A real Spark standalone cluster (one master JVM, N worker JVMs) on 127.0.0.1, for tests.

``local[*]`` runs every task in the driver JVM, so it cannot show what happens with several executor
JVMs (one KPL daemon per executor, an executor dying mid-write). This starts the cluster from the pip
``pyspark`` package alone, keeps all of its files in a temp dir of ours, and stops exactly the
processes it started.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Dict, List, Mapping, Optional, Set, Tuple, Type

from spark_kpl.testing._env import LOOPBACK_AWS_ENV, loopback_env

__all__ = ["StandaloneCluster", "spark_home"]

_EXECUTOR_MARK = "CoarseGrainedExecutorBackend"
# An http_proxy in the caller's environment must not catch requests to 127.0.0.1.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def spark_home() -> str:
    """The installed ``pyspark`` package dir: it carries ``bin/spark-class`` and Spark's jars."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def _python_path() -> str:
    """The caller's PYTHONPATH made absolute, plus the dir holding ``spark_kpl``.

    Executors run with their work dir as cwd, so a relative entry (``PYTHONPATH=python``) would not
    find ``spark_kpl`` there.
    """
    entries = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    entries.append(str(Path(__file__).resolve().parents[2]))  # <dir>/spark_kpl/testing/cluster.py
    return os.pathsep.join(dict.fromkeys(entries))


def _free_port() -> int:
    """A loopback port free right now (the OS picks it, so parallel runs do not collide)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _proc_stat(pid: int) -> Optional[Tuple[str, int, int, int]]:
    """(state, ppid, pgid, starttime) from /proc/<pid>/stat, or None if the process is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain spaces or parentheses.
    fields = raw[raw.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2]), int(fields[19])


def _alive(pid: int, starttime: Optional[int] = None) -> bool:
    """True if ``pid`` runs and is not a zombie (and, if given, is still the same process)."""
    st = _proc_stat(pid)
    if st is None or st[0] in ("Z", "X"):
        return False
    return starttime is None or st[3] == starttime


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _all_stats() -> Dict[int, Tuple[str, int, int, int]]:
    out: Dict[int, Tuple[str, int, int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st is not None:
                out[int(entry)] = st
    return out


def _descendants(roots: Set[int]) -> Dict[int, int]:
    """pid -> starttime of every live descendant of ``roots`` (roots excluded)."""
    stats = _all_stats()
    children: Dict[int, List[int]] = {}
    for pid, st in stats.items():
        children.setdefault(st[1], []).append(pid)
    found: Dict[int, int] = {}
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found and stats[child][0] not in ("Z", "X"):
                found[child] = stats[child][3]
                todo.append(child)
    return found


def _signal(pid: int, sig: int, starttime: Optional[int]) -> None:
    if _alive(pid, starttime):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _wait_gone(pids: Mapping[int, Optional[int]], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(_alive(p, s) for p, s in pids.items()):
            return True
        time.sleep(0.1)
    return not any(_alive(p, s) for p, s in pids.items())


def stop_process_tree(process: subprocess.Popen, timeout: float) -> None:
    """TERM to ``process`` (a JVM's shutdown hooks close its KPL producers), KILL if it outlives
    ``timeout``; then the same to whatever it started that is still running (daemons, workers)."""
    children = _descendants({process.pid})
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)
    for pid, start in children.items():
        _signal(pid, signal.SIGTERM, start)
    if not _wait_gone(children, timeout):
        for pid, start in children.items():
            _signal(pid, signal.SIGKILL, start)
        _wait_gone(children, 5.0)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "<no log>"


class StandaloneCluster:
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

    def __enter__(self) -> "StandaloneCluster":
        self.start()
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.stop()

    def start(self) -> "StandaloneCluster":
        """Start master and workers, and wait until the master lists every worker ALIVE."""
        if self._master is not None:
            raise RuntimeError("cluster already started")
        self._owner = os.getpid()
        self._logs = []
        self._tmp = Path(tempfile.mkdtemp(prefix="spark-kpl-cluster-"))
        for sub in ("work", "logs", "pids", "local"):
            (self._tmp / sub).mkdir()
        atexit.register(self.stop)
        self._port, self._webui_port = _free_port(), _free_port()
        try:
            self._master = self._spawn(
                "master",
                "org.apache.spark.deploy.master.Master",
                ["--host", "127.0.0.1", "--port", str(self._port), "--webui-port", str(self._webui_port)],
            )
            for i in range(self.workers):
                self._workers.append(
                    self._spawn(
                        f"worker-{i}",
                        "org.apache.spark.deploy.worker.Worker",
                        [
                            "--host", "127.0.0.1",
                            "--port", str(_free_port()),
                            "--webui-port", str(_free_port()),
                            "--cores", str(self.cores_per_worker),
                            "--memory", self.memory_per_worker,
                            self.master_url,
                        ],
                    )
                )
            self._wait_alive()
        except BaseException as exc:
            logs = self._log_tails()
            self.stop()
            raise RuntimeError(f"Spark standalone cluster did not come up ({exc!r}):\n{logs}") from exc
        return self

    def stop(self) -> None:
        """Stop workers, then master, then leftover executors, by pid (TERM, then KILL); idempotent."""
        if os.getpid() != self._owner:
            return
        master = self._master
        groups = {p.pid for p in self._workers} | ({master.pid} if master else set())
        leftovers = _descendants(groups)
        for group in (list(self._workers), [master] if master else []):
            for proc in group:
                if proc.poll() is None:
                    try:
                        proc.send_signal(signal.SIGTERM)
                    except OSError:
                        pass
            for proc in group:
                try:
                    proc.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=self.stop_timeout)
        # Executors (and their Python daemons) the workers did not take down with them.
        for pid, start in leftovers.items():
            _signal(pid, signal.SIGTERM, start)
        if not _wait_gone(leftovers, self.stop_timeout):
            for pid, start in leftovers.items():
                _signal(pid, signal.SIGKILL, start)
            _wait_gone(leftovers, 5.0)
        # Anything still in one of our own process groups (e.g. spark-class's launcher step).
        for pid, st in _all_stats().items():
            if st[2] in groups and st[0] not in ("Z", "X") and pid != os.getpid():
                _signal(pid, signal.SIGKILL, st[3])
        self._master, self._workers = None, []
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass

    # -- what jobs need --------------------------------------------------------------------------

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self._port}"

    @property
    def webui_url(self) -> str:
        return f"http://127.0.0.1:{self._webui_port}"

    @property
    def started_pids(self) -> Set[int]:
        """Every master/worker pid this cluster ever started (for leak checks in tests)."""
        return set(self._started_pids)

    def spark_conf(self) -> Dict[str, str]:
        """SparkSession conf for a driver in this process: one executor per worker, all on loopback."""
        conf: Dict[str, str] = {
            "spark.master": self.master_url,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.cores": str(self.cores_per_worker),
            "spark.executor.memory": self.memory_per_worker,
            "spark.cores.max": str(self.cores_per_worker * self.workers),
            # Otherwise the first job may start when one executor has registered and run on it alone.
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
            "spark.ui.enabled": "false",
            "spark.pyspark.python": sys.executable,
            "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
            "spark.executorEnv.PYTHONPATH": _python_path(),
        }
        for key, value in LOOPBACK_AWS_ENV.items():
            conf[f"spark.executorEnv.{key}"] = value
        return conf

    def executor_pids(self) -> List[int]:
        """pids of CoarseGrainedExecutorBackend JVMs now running under our workers."""
        roots = {p.pid for p in self._workers if p.poll() is None}
        return sorted(p for p in _descendants(roots) if _EXECUTOR_MARK in _cmdline(p))

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
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_WORKER_DIR=str(self._tmp / "work"),
            SPARK_LOG_DIR=str(self._tmp / "logs"),
            SPARK_PID_DIR=str(self._tmp / "pids"),
            SPARK_LOCAL_DIRS=str(self._tmp / "local"),
            PYSPARK_PYTHON=sys.executable,
            PYTHONPATH=_python_path(),
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
        deadline = time.monotonic() + self.start_timeout
        alive = 0
        while time.monotonic() < deadline:
            for proc in [self._master, *self._workers]:
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"pid {proc.pid} exited with {proc.returncode}")
            try:
                with _NO_PROXY.open(f"{self.webui_url}/json", timeout=2) as resp:
                    state = json.load(resp)
                alive = sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")
                if alive >= self.workers:
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.25)
        raise TimeoutError(f"{alive}/{self.workers} workers ALIVE after {self.start_timeout}s")

    def _log_tails(self) -> str:
        return "\n".join(f"--- {log.name} ---\n{_tail(log)}" for log in self._logs)
