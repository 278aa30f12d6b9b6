"""A real YARN cluster (a ResourceManager and NodeManagers) and HDFS (a NameNode and a DataNode) on
127.0.0.1, for tests that submit as EMR users do: ``spark-submit --master yarn``.

They are Hadoop's own mini clusters (``hadoop-minicluster`` at the version of pyspark's
hadoop-client-api), started by ``jvm/src/miniHadoop``'s ``MiniHadoop`` as one process of its own and
stopped by pid with every container it launched. ``scripts/build.sh miniHadoop`` fetches the jars
and builds the launcher. The client configuration it writes is what ``HADOOP_CONF_DIR`` points at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Set

from spark_kpl_testing.cluster import spark_home
from spark_kpl_testing.env import LOOPBACK_AWS_ENV, loopback_env
from spark_kpl_testing.lifecycle import Service
from spark_kpl_testing.net import LOOPBACK
from spark_kpl_testing.polling import wait_for
from spark_kpl_testing.processes import cmdline, descendants, executable, log_tail, stop_processes, terminate

__all__ = ["MiniHadoop", "java_home", "mini_hadoop_classpath"]

REPO = Path(__file__).resolve().parents[3]
_EXECUTOR_MARK = "YarnCoarseGrainedExecutorBackend"


def mini_hadoop_classpath() -> str:
    """The launcher's classes and Hadoop's jars, as ``scripts/build.sh miniHadoop`` leaves them."""
    classes, jars = REPO / "build" / "classes" / "java" / "miniHadoop", REPO / "build" / "mini-hadoop" / "lib"
    if not classes.is_dir() or not jars.is_dir():
        raise RuntimeError("scripts/build.sh miniHadoop fetches Hadoop's mini clusters and builds their launcher")
    return f"{classes}{os.pathsep}{jars}/*"


def java_home() -> str:
    """JAVA_HOME, else the home of the ``java`` on the PATH."""
    found = shutil.which("java")
    if "JAVA_HOME" not in os.environ and found is None:
        raise RuntimeError("no Java runtime: set JAVA_HOME or put java on the PATH")
    return os.environ.get("JAVA_HOME") or str(Path(os.path.realpath(str(found))).parents[1])


def _java() -> str:
    return os.path.join(java_home(), "bin", "java")


def _is_executor_jvm(arguments: List[str]) -> bool:
    """The executor's JVM, not the shell lines of its container's launch script that name it too."""
    return bool(arguments) and arguments[0].endswith("/java") and any(_EXECUTOR_MARK in arg for arg in arguments)


class MiniHadoop(Service):
    """YARN with ``node_managers`` NodeManagers, and HDFS, as one JVM of ours."""

    def __init__(self, node_managers: int = 1, start_timeout: float = 240.0, stop_timeout: float = 30.0) -> None:
        self.node_managers = node_managers
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._tmp: Optional[Path] = None
        self._process: Optional[subprocess.Popen[bytes]] = None
        self._owner = os.getpid()
        self.hdfs_url = ""

    def _check_startable(self) -> None:
        if self._process is not None:
            raise RuntimeError("MiniHadoop already started")

    def _start(self) -> None:
        self._owner = os.getpid()
        self._tmp = Path(tempfile.mkdtemp(prefix="spark-kpl-yarn-"))
        (self._tmp / "work").mkdir()
        with open(self.log, "wb") as out:
            self._process = subprocess.Popen(
                [_java(), "-Xmx768m", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                 "-cp", mini_hadoop_classpath(), "sparkkpl.minihadoop.MiniHadoop",
                 str(self._tmp / "work"), str(self.conf_dir), str(self.node_managers)],
                cwd=self._tmp / "work", env=self._env(), stdin=subprocess.PIPE, stdout=out,
                stderr=subprocess.STDOUT)
        ready = wait_for(self._ready_line, self.start_timeout, "YARN and HDFS to start",
                         lambda: log_tail(self.log, 40), every=0.5)
        self.hdfs_url = ready.split()[1]

    def _stop(self) -> None:
        """Closes the launcher's stdin (its shutdown hook stops both clusters and their containers), then
        TERM/KILL by pid to it and to every process below it that is left."""
        if os.getpid() != self._owner or self._process is None:
            return
        process, self._process = self._process, None
        below = {pid: found.start_ticks for pid, found in descendants(process.pid).items()}
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(self.stop_timeout)
        except subprocess.TimeoutExpired:
            terminate(process, self.stop_timeout)
        stop_processes(below, self.stop_timeout)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _ready_line(self) -> str:
        if self._process is not None and self._process.poll() is not None:
            raise RuntimeError(f"MiniHadoop exited with {self._process.returncode}:\n{log_tail(self.log, 40)}")
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return next((line for line in lines if line.startswith("READY ")), "")

    def _env(self) -> Dict[str, str]:
        env = loopback_env()
        env.pop("HADOOP_CONF_DIR", None)
        env["JAVA_HOME"] = java_home()  # containers start $JAVA_HOME/bin/java
        return env

    # -- what submits need -----------------------------------------------------------------------

    @property
    def folder(self) -> Path:
        if self._tmp is None:
            raise RuntimeError("MiniHadoop is not running; call start() first")
        return self._tmp

    @property
    def log(self) -> Path:
        return self.folder / "mini-hadoop.log"

    @property
    def conf_dir(self) -> Path:
        """core-site.xml, hdfs-site.xml and yarn-site.xml of the running clusters."""
        return self.folder / "conf"

    @property
    def node_manager_dirs(self) -> Path:
        """Where the NodeManagers keep their containers' folders."""
        return self.folder / "work" / "target"

    def submit_env(self, spark_conf: Dict[str, str]) -> Dict[str, str]:
        """The environment of a ``spark-submit --master yarn`` against these clusters, with ``spark_conf``
        as the cluster's spark-defaults.conf (as on EMR, where the cluster's own defaults apply to every
        submit) and no PYTHONPATH: the job's Python packages travel with the submit."""
        spark_conf_dir = Path(tempfile.mkdtemp(prefix="spark-conf-", dir=self.folder))
        (spark_conf_dir / "spark-defaults.conf").write_text(
            "".join(f"{key} {value}\n" for key, value in spark_conf.items()))
        env = loopback_env()
        env.pop("PYTHONPATH", None)
        env.update(HADOOP_CONF_DIR=str(self.conf_dir), YARN_CONF_DIR=str(self.conf_dir), SPARK_HOME=spark_home(),
                   SPARK_CONF_DIR=str(spark_conf_dir), SPARK_LOCAL_IP=LOOPBACK,
                   PATH=os.pathsep.join([os.path.join(spark_home(), "bin"), env.get("PATH", "")]))
        return env

    def spark_conf(self, python: str = sys.executable) -> Dict[str, str]:
        """What every application here is submitted with: Spark's jars from the pyspark package on each
        node (nothing uploaded), small containers, two executors, ``python`` for drivers and executors,
        and the loopback AWS settings in the ApplicationMaster's (the cluster-mode driver's) and the
        executors' environments."""
        conf = {
            "spark.yarn.jars": f"local:{spark_home()}/jars/*",
            "spark.driver.host": LOOPBACK,
            "spark.driver.bindAddress": LOOPBACK,
            "spark.driver.memory": "512m",
            "spark.executor.memory": "512m",
            "spark.executor.cores": "1",
            "spark.executor.instances": "2",
            "spark.yarn.am.memory": "512m",
            "spark.ui.enabled": "false",
            "spark.pyspark.python": python,
            "spark.pyspark.driver.python": python,
        }
        for key, value in {**LOOPBACK_AWS_ENV, "SPARK_LOCAL_IP": LOOPBACK}.items():
            conf[f"spark.yarn.appMasterEnv.{key}"] = value
            conf[f"spark.executorEnv.{key}"] = value
        return conf

    def fs_shell(self, *args: str) -> str:
        """Hadoop's ``hdfs dfs`` (FsShell) against this HDFS; its standard output."""
        run = subprocess.run([_java(), "-cp", f"{self.conf_dir}{os.pathsep}{mini_hadoop_classpath()}",
                              "org.apache.hadoop.fs.FsShell", *args],
                             capture_output=True, text=True, timeout=120, env=loopback_env())
        if run.returncode != 0:
            raise RuntimeError(f"hdfs dfs {' '.join(args)} failed: {run.stderr[-2000:]}")
        return run.stdout

    def executor_pids(self) -> List[int]:
        """Executor JVMs now running in this cluster's containers."""
        if self._process is None:
            return []
        return sorted(pid for pid in descendants(self._process.pid) if _is_executor_jvm(cmdline(pid)))

    def daemon_binaries(self) -> Set[Path]:
        """The files the KPL daemons now running in this cluster's containers were started from."""
        if self._process is None:
            return set()
        found = (executable(pid) for pid, stat in descendants(self._process.pid).items()
                 if stat.command.startswith("kinesis_produc"))
        return {path for path in found if path is not None}
