"""What every server the harness starts has in common: it is a context manager, a start that fails stops
what it had started, and stop() is idempotent and runs at interpreter exit too, so that nothing outlives
the test, script or benchmark that started it."""

from __future__ import annotations

import atexit
import http.server
import shutil
import socketserver
import subprocess
import threading
from pathlib import Path
from typing import IO, Optional, Type, TypeVar

from spark_kpl_testing.net import LOOPBACK
from spark_kpl_testing.processes import terminate

__all__ = ["LoopbackHttpService", "ProcessInFolder", "Service", "serve_in_thread", "stop_serving"]

S = TypeVar("S", bound="Service")


class Service:
    """Subclasses say how to start (:meth:`_start`) and how to stop (:meth:`_stop`, safe to call on a
    service that never started or only half started)."""

    def start(self: S) -> S:
        self._check_startable()
        atexit.register(self.stop)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        atexit.unregister(self.stop)
        self._stop()

    def __enter__(self: S) -> S:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _check_startable(self) -> None:
        """Raises if the service is running already."""

    def _start(self) -> None:
        raise NotImplementedError

    def _stop(self) -> None:
        raise NotImplementedError


class ProcessInFolder(Service):
    """A service that is one process of its own, started in a temporary folder of its own that holds its
    log; :meth:`_stop_process` stops it by its pid and removes the folder."""

    _proc: "Optional[subprocess.Popen[bytes]]" = None
    _log: Optional[IO[bytes]] = None
    _workdir: Optional[Path] = None

    def _stop_process(self, grace: float) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; the log closed, the folder removed."""
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate(proc, grace)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None


class LoopbackHttpService(Service):
    """A plain-HTTP server on 127.0.0.1, on a thread of its own, answering with ``handler``, whose
    requests reach the service as ``self.server.service``."""

    handler: Type[http.server.BaseHTTPRequestHandler]
    _server: Optional[http.server.ThreadingHTTPServer] = None
    _thread: Optional[threading.Thread] = None

    def _start(self) -> None:
        server = http.server.ThreadingHTTPServer((LOOPBACK, 0), self.handler)
        server.daemon_threads = True
        server.service = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = serve_in_thread(server, f"{type(self).__name__}-{server.server_address[1]}")

    def _stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            stop_serving(server, self._thread, 5.0)

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() first")
        return f"http://{LOOPBACK}:{self._server.server_address[1]}"


def serve_in_thread(server: socketserver.BaseServer, name: str) -> threading.Thread:
    """Runs ``server`` on a daemon thread of its own, polling for shutdown five times a second."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name=name, daemon=True)
    thread.start()
    return thread


def stop_serving(server: socketserver.BaseServer, thread: "threading.Thread | None", timeout: float) -> None:
    """Stops a server started by :func:`serve_in_thread`: its loop, its thread, its socket."""
    server.shutdown()
    if thread is not None:
        thread.join(timeout)
    server.server_close()
