"""A Glue Schema Registry on loopback: moto's server (``moto[server]``, which implements the registry's calls), run
as a process of its own on a free port of 127.0.0.1 with the loopback AWS environment, stopped by its pid."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from spark_kpl_testing.env import LOOPBACK_AWS_ENV, loopback_env
from spark_kpl_testing.lifecycle import ProcessInFolder
from spark_kpl_testing.net import LOOPBACK, free_port, wait_listening
from spark_kpl_testing.processes import log_tail

__all__ = ["GlueRegistry"]

_STARTUP_TIMEOUT = 60.0
_STOP_GRACE = 5.0
#: moto checks calls against its IAM after this many unchecked ones.
_CHECKING_IAM = {"INITIAL_NO_AUTH_ACTION_COUNT": "0"}


class GlueRegistry(ProcessInFolder):
    """moto's server, answering Glue's schema registry calls at :attr:`url`; with ``refusing_access`` it checks
    every call against its own IAM, which knows no keys, so it refuses every caller (HTTP 403)."""

    region = LOOPBACK_AWS_ENV["AWS_REGION"]

    def __init__(self, refusing_access: bool = False) -> None:
        self.refusing_access = refusing_access
        self._port: Optional[int] = None

    def _check_startable(self) -> None:
        if self._proc is not None:
            raise RuntimeError("GlueRegistry is already running")

    def _start(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="spark-kpl-glue-registry-"))
        self._log = open(self._workdir / "moto.log", "wb")
        self._port = free_port()
        env = {**loopback_env(), **(_CHECKING_IAM if self.refusing_access else {})}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", LOOPBACK, "-p", str(self._port)],
            cwd=self._workdir, env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        wait_listening(self._port, _STARTUP_TIMEOUT, "moto's server", self._proc)

    def _stop(self) -> None:
        self._stop_process(_STOP_GRACE)

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("GlueRegistry is not running; call start() first")
        return f"http://{LOOPBACK}:{self._port}"

    def client(self) -> Any:
        """A boto3 Glue client of this registry, with the loopback keys."""
        import boto3

        return boto3.client("glue", endpoint_url=self.url, region_name=self.region,
                            aws_access_key_id=LOOPBACK_AWS_ENV["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=LOOPBACK_AWS_ENV["AWS_SECRET_ACCESS_KEY"])

    def log_tail(self) -> str:
        return log_tail(self._workdir / "moto.log") if self._workdir is not None else ""
