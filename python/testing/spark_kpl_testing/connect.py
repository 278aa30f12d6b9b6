"""A Spark Connect server on 127.0.0.1, started from the pip ``pyspark`` package with the sink's jar.

Spark 4 ships the server (``SparkConnectServer``) in pyspark's own jars, so no download is needed.
The server is a driver JVM in local mode: the sink runs there, and clients reach it through
``SparkSession.builder.remote(server.url)``. It runs in a process group of its own and is stopped by
its pid, with every process it started (the KPL daemons among them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from spark_kpl import _CONNECT_SERVER
from spark_kpl_testing.cluster import spark_home
from spark_kpl_testing.env import loopback_env
from spark_kpl_testing.lifecycle import Service
from spark_kpl_testing.net import LOOPBACK, free_port, wait_listening
from spark_kpl_testing.processes import log_tail, stop_process_tree

__all__ = ["ConnectServer", "connect_unavailable"]



def connect_unavailable() -> Optional[str]:
    """Why this pyspark cannot run a Connect server and client here, or None when it can."""
    if not list((Path(spark_home()) / "jars").glob("spark-connect_*.jar")):
        return "this pyspark ships no Spark Connect server in its jars (Spark 3.5 does not)"
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies("pyspark.sql.connect")
    except ImportError as missing:
        return f"the Spark Connect client's packages are not installed: {missing}"
    except TypeError as changed:  # 4.3 takes no module name; its Connect client is not yet tested here
        return f"this pyspark's Connect dependency check has another signature ({changed}): not tested on it yet"
    return None


class ConnectServer(Service):
    """``spark-submit --class SparkConnectServer`` with ``jar`` on its classpath, on a free loopback port."""

    def __init__(self, jar: str, conf: Optional[Mapping[str, str]] = None, master: str = "local[2]",
                 start_timeout: float = 120.0, stop_timeout: float = 20.0) -> None:
        self.jar = jar
        self.conf: Dict[str, str] = dict(conf or {})
        self.master = master
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.port = 0
        self._process: Optional[subprocess.Popen[bytes]] = None
        self._tmp: Optional[Path] = None

    @property
    def url(self) -> str:
        """What a client gives ``SparkSession.builder.remote``."""
        return f"sc://{LOOPBACK}:{self.port}"

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    @property
    def log(self) -> Path:
        assert self._tmp is not None, "not started"
        return self._tmp / "server.log"

    def command(self) -> List[str]:
        """The spark-submit command line, as docs/spark-connect.md gives it."""
        conf = {
            "spark.connect.grpc.binding.address": LOOPBACK,
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.host": LOOPBACK,
            "spark.driver.bindAddress": LOOPBACK,
            **self.conf,
        }
        settings = [part for key, value in conf.items() for part in ("--conf", f"{key}={value}")]
        return [os.path.join(spark_home(), "bin", "spark-submit"), "--class", _CONNECT_SERVER, "--master", self.master,
                "--jars", self.jar, *settings, "spark-internal"]

    def _check_startable(self) -> None:
        if self._process is not None:
            raise RuntimeError("Connect server already started")

    def _start(self) -> None:
        """Start the server and wait until its port takes connections."""
        self._tmp = Path(tempfile.mkdtemp(prefix="spark-kpl-connect-"))
        self.port = free_port()
        env = loopback_env()
        env.update(SPARK_HOME=spark_home(), SPARK_LOCAL_IP=LOOPBACK, SPARK_LOCAL_DIRS=str(self._tmp))
        with open(self.log, "wb") as out:
            self._process = subprocess.Popen(self.command(), env=env, cwd=str(self._tmp), stdin=subprocess.DEVNULL,
                                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_listening(self.port, self.start_timeout, "the Spark Connect server", self._process)
        except BaseException as error:
            raise RuntimeError(f"Spark Connect server did not come up ({error!r}):\n{log_tail(self.log)}") from error

    def _stop(self) -> None:
        """TERM to the server (its shutdown closes the producers), then KILL to whatever of it is left."""
        process, self._process = self._process, None
        if process is not None:
            stop_process_tree(process, self.stop_timeout)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
