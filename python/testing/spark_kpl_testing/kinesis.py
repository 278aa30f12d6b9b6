"""An embedded local Kinesis (kinesis-mock) on loopback, for pytest fixtures, demos and benchmarks.

kinesis-mock is published on npm as ``kinesis-local`` (pinned: :data:`KINESIS_MOCK_VERSION`). It
implements what the real KPL needs (``ListShards`` with ``AT_LATEST``, ``PutRecords`` over TLS) and
what a test needs to check the result (``GetRecords``). It is slow, so use it for correctness, not
for measuring a producer's speed.

Typical use::

    with LocalKinesis({"events": 2}) as kinesis:
        df.write.format("kinesis").options(**kinesis.kpl_options()).option("streamName", "events")...
        records = kinesis.read_records("events")   # KPL aggregates already de-aggregated

All traffic goes to 127.0.0.1. kinesis-mock listens on every interface; nothing here addresses it
by any other name, and the boto3 clients ignore proxy settings from the environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from spark_kpl_testing.env import loopback_env
from spark_kpl_testing.lifecycle import ProcessInFolder
from spark_kpl_testing.net import LOOPBACK, NO_PROXY, free_ports, ignore_unverified_tls, kinesis_client, kpl_options
from spark_kpl_testing.polling import poll_until
from spark_kpl_testing.processes import log_tail
from spark_kpl_testing.records import Record, user_records

__all__ = [
    "KINESIS_MOCK_ENV_VAR",
    "KINESIS_MOCK_VERSION",
    "LocalKinesis",
    "LocalKinesisError",
    "find_kinesis_mock",
]

#: The kinesis-local release this module is written and tested against.
KINESIS_MOCK_VERSION = "0.6.2"
#: Path of kinesis-local's ``main.js``; overrides the project's ``.tools`` install.
KINESIS_MOCK_ENV_VAR = "SPARK_KPL_KINESIS_MOCK"

_REPO = Path(__file__).resolve().parents[3]
_DEFAULT_MAIN_JS = _REPO / ".tools" / "node_modules" / "kinesis-local" / "main.js"

# kinesis-mock's defaults are tuned to imitate AWS (500 ms per stream state change); tests want
# the state changes at once, no persisted state between runs, and only warnings and errors logged
# (each rejected request is one warning with its stack). Its runtime's CPU-starvation check would
# otherwise fill the log with warnings whenever the machine is busy, which a test machine is.
_MOCK_SETTINGS: Dict[str, str] = {
    "LOG_LEVEL": "WARN",
    "CATS_EFFECT_CPU_STARVATION_CHECK_INITIAL_DELAY": "Inf",
    "SHOULD_PERSIST_DATA": "false",
    "LOAD_DATA_IF_EXISTS": "false",
    **{
        f"{operation}_DURATION": "10ms"
        for operation in (
            "CREATE_STREAM",
            "DELETE_STREAM",
            "REGISTER_STREAM_CONSUMER",
            "DEREGISTER_STREAM_CONSUMER",
            "START_STREAM_ENCRYPTION",
            "STOP_STREAM_ENCRYPTION",
            "MERGE_SHARDS",
            "SPLIT_SHARD",
            "UPDATE_SHARD_COUNT",
            "UPDATE_STREAM_MODE",
        )
    },
}

# Loaded into node before kinesis-mock: once the Python process that started it is gone, remove
# the temporary folder and exit. A SIGKILLed or SIGTERMed Python runs no atexit handlers, and
# kinesis-mock, in its own session so that a terminal's Ctrl-C does not reach it, would otherwise
# live on, listening and using CPU.
_PARENT_WATCH_JS = """\
const parent = Number(process.env.SPARK_KPL_KINESIS_MOCK_PARENT);
setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch (e) {
    if (e.code !== "ESRCH") return;
    require("fs").rmSync(__dirname, { recursive: true, force: true });
    process.exit(0);
  }
}, 500).unref();
"""

_GET_RECORDS_LIMIT = 10_000  # the API's maximum: kinesis-mock is slow per call, not per record
_POLL_INTERVAL = 0.05
# kinesis-mock keeps nothing worth a graceful shutdown (no persistence); a connection someone else
# left open (a KPL not destroyed) would hold SIGTERM up for 30 s, so SIGKILL follows soon.
_STOP_GRACE = 3.0
_PORT_ATTEMPTS = 3  # another process may take a probed port before kinesis-mock binds it


class LocalKinesisError(RuntimeError):
    """kinesis-mock failed to start or did not reach the expected state in time."""


def find_kinesis_mock() -> Path:
    """Return kinesis-local's ``main.js``: ``$SPARK_KPL_KINESIS_MOCK``, else the repo's ``.tools``.

    An explicit setting that points nowhere is an error rather than a silent fallback, so a test
    run never uses a different kinesis-mock than the one asked for.
    """
    configured = os.environ.get(KINESIS_MOCK_ENV_VAR)
    candidate = Path(configured) if configured else _DEFAULT_MAIN_JS
    if candidate.is_file():
        return candidate.resolve()
    raise FileNotFoundError(
        f"kinesis-mock (npm package kinesis-local {KINESIS_MOCK_VERSION}) not found: "
        f"${KINESIS_MOCK_ENV_VAR} is {configured if configured else 'not set'}, and the default "
        f"{_DEFAULT_MAIN_JS} does not exist. Install it with "
        f"`npm install --prefix {_REPO / '.tools'} kinesis-local@{KINESIS_MOCK_VERSION}` "
        f"or set ${KINESIS_MOCK_ENV_VAR} to the path of its main.js."
    )


class LocalKinesis(ProcessInFolder):
    """A kinesis-mock process on free loopback ports, with the streams a test needs.

    ``streams`` maps stream name to shard count; those streams are created at start-up and are
    ACTIVE when :meth:`start` returns. Usable as a context manager; :meth:`stop` is also registered
    with :mod:`atexit` so an interrupted test run does not leave the process behind.
    """

    def __init__(
        self,
        streams: Optional[Mapping[str, int]] = None,
        region: str = "us-east-1",
        startup_timeout: float = 60.0,
    ) -> None:
        self.streams: Dict[str, int] = dict(streams or {})
        for name, shards in self.streams.items():
            if not name or any(c in name for c in ",:") or shards < 1:
                raise ValueError(f"bad initial stream {name!r}: {shards} shards")
        self.region = region
        self.startup_timeout = startup_timeout
        self._ports: Optional[tuple[int, int]] = None  # (tls, plain)
        self._clients: Dict[bool, Any] = {}

    # -- lifecycle -------------------------------------------------------------------------

    def _check_startable(self) -> None:
        if self._proc is not None:
            raise LocalKinesisError("LocalKinesis is already running")

    def _start(self) -> None:
        """Launch kinesis-mock, wait until it answers and its initial streams are ACTIVE."""
        main_js = find_kinesis_mock()
        cert = main_js.parent / "server.json"  # the package's self-signed certificate
        if not cert.is_file():
            raise FileNotFoundError(f"kinesis-mock's TLS certificate {cert} is missing")
        node = shutil.which("node")
        if node is None:
            raise LocalKinesisError("`node` is not on PATH; kinesis-mock needs Node.js")
        self._workdir = Path(tempfile.mkdtemp(prefix="spark-kpl-kinesis-mock-"))
        (self._workdir / "parent-watch.js").write_text(_PARENT_WATCH_JS)
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            tls_port, plain_port = free_ports(2)
            self._launch(node, main_js, cert, tls_port, plain_port)
            if self._wait_healthy(retry_on_port_clash=attempt < _PORT_ATTEMPTS):
                break
        for name in self.streams:
            self._wait_for_status(name, "ACTIVE")

    def _stop(self) -> None:
        """Stop the process this object started (SIGTERM, then SIGKILL)."""
        # kinesis-mock's SIGTERM shutdown waits up to 30 s for open keep-alive connections to end:
        # close this object's own before asking it to stop.
        self._close_clients()
        self._stop_process(_STOP_GRACE)
        self._ports = None

    def _close_clients(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    @property
    def pid(self) -> Optional[int]:
        """The kinesis-mock process id while it runs, else ``None``."""
        return self._proc.pid if self._proc is not None else None

    def _launch(self, node: str, main_js: Path, cert: Path, tls_port: int, plain_port: int) -> None:
        assert self._workdir is not None
        env = loopback_env()
        env.update(_MOCK_SETTINGS)
        env.update(
            {
                "KINESIS_MOCK_TLS_PORT": str(tls_port),
                "KINESIS_MOCK_PLAIN_PORT": str(plain_port),
                "KINESIS_MOCK_CERT_PATH": str(cert),
                "AWS_REGION": self.region,
                "AWS_DEFAULT_REGION": self.region,
                "SPARK_KPL_KINESIS_MOCK_PARENT": str(os.getpid()),
            }
        )
        if self.streams:
            env["INITIALIZE_STREAMS"] = ",".join(f"{n}:{s}" for n, s in self.streams.items())
        if self._log is not None:
            self._log.close()
        self._log = open(self._workdir / "kinesis-mock.log", "wb")
        self._ports = (tls_port, plain_port)
        self._proc = subprocess.Popen(
            [node, "--require", str(self._workdir / "parent-watch.js"), str(main_js)],
            cwd=self._workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C in the terminal is for pytest, not for the mock
        )

    def _wait_healthy(self, retry_on_port_clash: bool) -> bool:
        """True once ``/healthcheck`` answers; False if the ports were taken and a retry is allowed."""
        assert self._proc is not None
        url = f"http://{LOOPBACK}:{self.plain_port}/healthcheck"
        process = self._proc

        def healthy() -> bool:
            if process.poll() is not None:
                return True  # exited: told apart below
            try:
                with NO_PROXY.open(url, timeout=1.0) as response:
                    return bool(response.status == 200)
            except (urllib.error.URLError, OSError):
                return False

        if not poll_until(healthy, self.startup_timeout, _POLL_INTERVAL):
            raise LocalKinesisError(
                f"kinesis-mock did not answer {url} within {self.startup_timeout:.0f}s:\n{self.log_tail()}")
        if process.poll() is None:
            return True
        log = self.log_tail()
        if retry_on_port_clash and "Address already in use" in log:
            self._proc = None
            return False
        raise LocalKinesisError(f"kinesis-mock exited with code {process.returncode} during start-up:\n{log}")

    def log_tail(self) -> str:
        """The end of kinesis-mock's output, for error messages."""
        return log_tail(self._workdir / "kinesis-mock.log") if self._workdir is not None else ""

    # -- where it listens ------------------------------------------------------------------

    def _running_ports(self) -> tuple[int, int]:
        if self._ports is None:
            raise LocalKinesisError("LocalKinesis is not running; call start() first")
        return self._ports

    @property
    def tls_port(self) -> int:
        """The HTTPS port: the KPL daemon only speaks TLS."""
        return self._running_ports()[0]

    @property
    def plain_port(self) -> int:
        """The plain HTTP port: cheaper for reading records back in tests."""
        return self._running_ports()[1]

    @property
    def endpoint_url(self) -> str:
        """HTTPS endpoint for AWS SDK clients (self-signed certificate: do not verify)."""
        return f"https://{LOOPBACK}:{self.tls_port}"

    def kpl_options(self) -> Dict[str, str]:
        """KPL configuration properties that keep every KPL connection on this loopback mock.

        Keys are ``KinesisProducerConfiguration.fromProperties`` names (see :func:`.net.kpl_options`).

        Before the daemon has loaded a stream's shard map (one ``ListShards``, 1-2 s here) the KPL
        sends every record unaggregated, and kinesis-mock's ``PutRecords`` slows down as a shard
        fills: a burst of many thousand records at a cold producer can time out. Let one record
        complete first when a test writes a lot.
        """
        return {
            **kpl_options(self.region, self.tls_port),
            # kinesis-mock answers slowly when the machine is busy; the KPL's 6 s default makes it
            # retry requests that did land, which shows up as duplicates.
            "RequestTimeout": "30000",
        }

    def client(self, tls: bool = False) -> Any:
        """A boto3 Kinesis client for this mock (plain HTTP by default, or TLS unverified)."""
        ignore_unverified_tls()
        cached = self._clients.get(tls)
        if cached is not None:
            return cached
        port = self.tls_port if tls else self.plain_port
        client = kinesis_client(f"{'https' if tls else 'http'}://{LOOPBACK}:{port}", self.region,
                                attempts=3, read_timeout=120)  # a 10,000-record GetRecords takes a while
        self._clients[tls] = client
        return client

    # -- streams -----------------------------------------------------------------------------

    def create_stream(self, name: str, shards: int = 1, timeout: float = 30.0) -> None:
        """Create a provisioned stream and wait until it is ACTIVE."""
        self.client().create_stream(StreamName=name, ShardCount=shards)
        self._wait_for_status(name, "ACTIVE", timeout)

    def delete_stream(self, name: str, timeout: float = 30.0) -> None:
        """Delete a stream and wait until it is gone, so its name can be reused at once."""
        self.client().delete_stream(StreamName=name, EnforceConsumerDeletion=True)
        self._wait_for_status(name, None, timeout)

    def _wait_for_status(self, name: str, wanted: Optional[str], timeout: float = 30.0) -> None:
        """Poll until the stream has status ``wanted`` (``None``: does not exist)."""
        client = self.client()
        status: Optional[str] = None

        def reached() -> bool:
            nonlocal status
            try:
                status = client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamStatus"]
            except client.exceptions.ResourceNotFoundException:
                status = None
            return status == wanted

        if not poll_until(reached, timeout, _POLL_INTERVAL):
            raise LocalKinesisError(f"stream {name!r} is {status or 'absent'} after {timeout:.0f}s, "
                                    f"expected {wanted or 'absent'}:\n{self.log_tail()}")

    # -- reading back ------------------------------------------------------------------------

    def read_records(self, stream: str) -> List[Record]:
        """Every user record in ``stream``: all shards, oldest first within each shard.

        KPL aggregated records are split into the user records they carry, with their own
        partition and explicit hash keys, so a test compares what it wrote with what it reads.
        """
        client = self.client()
        records: List[Record] = []
        for shard_id in self._shard_ids(stream):
            iterator: Optional[str] = client.get_shard_iterator(
                StreamName=stream, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            while iterator:
                page = client.get_records(ShardIterator=iterator, Limit=_GET_RECORDS_LIMIT)
                for raw in page["Records"]:
                    records.extend(user_records(raw, shard_id))
                iterator = page.get("NextShardIterator")  # None once a closed shard is drained
                # An empty page can come before the end; it is the end when nothing is behind.
                if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                    break
        return records

    def _shard_ids(self, stream: str) -> List[str]:
        client = self.client()
        page = client.list_shards(StreamName=stream)
        shard_ids = [s["ShardId"] for s in page["Shards"]]
        while page.get("NextToken"):
            page = client.list_shards(NextToken=page["NextToken"])
            shard_ids.extend(s["ShardId"] for s in page["Shards"])
        return shard_ids
