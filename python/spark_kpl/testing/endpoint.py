"""A Kinesis endpoint of the project's own on loopback TLS: fast, and able to inject faults.

kinesis-mock is correct but slow (seconds per ``PutRecords``) and cannot misbehave on purpose.
:class:`KinesisEndpoint` speaks just enough of the Kinesis JSON 1.1 protocol for the real KPL daemon
(``ListShards``, ``PutRecords``) and for tests (``CreateStream``, ``DeleteStream``,
``DescribeStream``, ``DescribeStreamSummary``, ``ListStreams``, ``SplitShard``, ``MergeShards``;
``GetShardIterator`` and ``GetRecords`` for consumers that read the stored records as they are),
over HTTPS on 127.0.0.1 with a self-signed certificate made at start (the KPL runs with
``VerifyCertificate=false``).

Typical use::

    with KinesisEndpoint({"events": 4}, faults=Faults(record_failure_rate=0.05)) as endpoint:
        spark_kpl.write(df, "events", data="payload", **endpoint.kpl_options())
        records = endpoint.records("events")          # KPL aggregates already de-aggregated
        endpoint.set_faults(http_error_rate=0.2)      # thread-safe, at any time
        endpoint.outage(10)                           # reset every connection for 10 s

Design: a threaded ``http.server`` in the calling process, one thread per keep-alive connection.
The KPL sends few, large calls (up to 500 Kinesis records of up to 50 KiB aggregates each), so the
work per byte is what counts: the body is read in one piece, parsed once by the C JSON parser, and
with ``store=False`` the base64 data is never decoded (its size is computed from its length).
Records are routed to shards as Kinesis does: MD5 of the partition key, or the explicit hash key,
over the shards' evenly split hash ranges.

Signatures: every request must carry a valid AWS Signature Version 4 from credentials the endpoint
knows (:mod:`spark_kpl.testing.sigv4`): by default the loopback keys the test helpers give every
process (:data:`LOOPBACK_CREDENTIALS`), more with ``credentials=`` or
:meth:`KinesisEndpoint.accept_credentials` (temporary ones with their session token; the loopback STS
of :mod:`spark_kpl.testing.sts` adds those it grants). Wrong ones are answered as Kinesis answers them,
HTTP 400: ``UnrecognizedClientException`` "The security token included in the request is invalid."
for an unknown key id or session token, ``InvalidSignatureException`` "The request signature we
calculated does not match the signature you provided..." for a wrong secret or a changed request;
nothing is stored. The KPL daemon retries both until ``RecordTtl``.

Fault knobs (:class:`Faults`, settable at any time with :meth:`KinesisEndpoint.set_faults`):

- per-shard throttling (records/s and bytes/s, token buckets holding one second): a throttled
  record gets ``ProvisionedThroughputExceededException`` in its own result, as in Kinesis;
- ``record_failure_rate``: a share of records in a successful call get ``InternalFailure``;
- ``http_error_rate``: a share of calls answered HTTP 500 ``InternalFailure`` and 503
  ``ServiceUnavailable`` in turn;
- ``reset_rate``: a share of calls read and then answered with a TCP reset, nothing stored;
- ``latency``: seconds added to each call;
- :meth:`KinesisEndpoint.outage`: for N seconds every new connection and every request on an open
  one is reset, whatever the operation.

The call-level faults apply to ``Faults.operations`` (by default ``PutRecords`` only, so the daemon's
shard map loads promptly). Shares are exact and evenly spread, not drawn at random (a share of 0.1
hits the 5th, 15th, 25th... call or record), so a test with few calls still meets each fault it
asks for, and does so the same way every run.

What the KPL 1.0.9 daemon sends (seen here): ``ListShards`` with ``{"StreamName", "MaxResults":
1000, "ShardFilter": {"Type": "AT_LATEST"}}`` (retried every ~5 s while it fails), then
``PutRecords`` with ``Expect: 100-continue`` (answered by ``http.server`` before the body is read),
over one or two keep-alive connections, each signed over ``amz-sdk-invocation-id``,
``amz-sdk-request``, ``content-length``, ``content-type``, ``host``, ``x-amz-api-version``,
``x-amz-content-sha256`` (the body's SHA-256: no chunked or unsigned payload), ``x-amz-date``,
``x-amz-target`` and, with a session token, ``x-amz-security-token``. The sink's own ``ListShards``
(AWS SDK for Java signer) signs ``content-length``, ``content-type``, ``host``,
``x-amz-content-sha256``, ``x-amz-date``, ``x-amz-target`` (and the token) likewise. For an
unknown stream the daemon still sends ``PutRecords``, again and again until ``RecordTtl``. Nothing
else, with ``MetricsLevel=none``.

Cost, measured with the real KPL: about 1 to 2 microseconds of this process's CPU per aggregated
100-byte user record, against 50 to 120 in the Spark JVM and the KPL daemon; by a load generator
of its own, 65 to 95 MB/s of aggregated payload at half a core (measured before signatures were
checked; the check adds about 50 microseconds per call and 0.65 ms per MiB of body, its SHA-256, the
same for every producer). Only 127.0.0.1 is ever bound.
"""

from __future__ import annotations

import atexit
import base64
import bisect
import hashlib
import http.server
import itertools
import json
import os
import shutil
import signal
import socket
import ssl
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections import Counter, deque
from dataclasses import dataclass, replace
from typing import Any, Callable, Deque, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple, Union

from spark_kpl.testing._env import LOOPBACK_AWS_ENV
from spark_kpl.testing.kinesis import Record, _user_records
from spark_kpl.testing.sigv4 import Credentials, SignatureRejected, SigV4Verifier

__all__ = [
    "KINESIS_SHARD_BYTES_PER_SECOND",
    "KINESIS_SHARD_RECORDS_PER_SECOND",
    "Faults",
    "KinesisEndpoint",
    "KinesisEndpointError",
    "LOOPBACK_CREDENTIALS",
]

LOOPBACK = "127.0.0.1"
#: Kinesis's write limits per shard.
KINESIS_SHARD_RECORDS_PER_SECOND = 1000
KINESIS_SHARD_BYTES_PER_SECOND = 1 << 20

_TARGET_PREFIX = "Kinesis_20131202."
_JSON_TYPE = "application/x-amz-json-1.1"
_ACCOUNT = "000000000000"
_HASH_SPACE = 1 << 128
_MAX_RECORDS_PER_CALL = 500
_MAX_CALL_BYTES = 5 << 20
_MAX_RECORD_BYTES = 1 << 20
_IDLE_TIMEOUT = 300.0  # an idle keep-alive connection is closed after this long
_STOP_JOIN_TIMEOUT = 5.0
_LINGER_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a TCP RST


#: The static keys of :data:`LOOPBACK_AWS_ENV`, which the endpoint accepts unless told otherwise.
LOOPBACK_CREDENTIALS = Credentials(LOOPBACK_AWS_ENV["AWS_ACCESS_KEY_ID"], LOOPBACK_AWS_ENV["AWS_SECRET_ACCESS_KEY"])


class KinesisEndpointError(RuntimeError):
    """The endpoint could not start, or was used while stopped."""


@dataclass(frozen=True)
class Faults:
    """What the endpoint does wrong, on purpose. Rates are shares between 0 and 1.

    ``shard_records_per_second`` / ``shard_bytes_per_second``: per-shard write limits (``None``: no
    throttling); Kinesis's own are :data:`KINESIS_SHARD_RECORDS_PER_SECOND` and
    :data:`KINESIS_SHARD_BYTES_PER_SECOND` (see :meth:`kinesis_limits`). Bytes are data plus
    partition key, as Kinesis counts them. ``operations``: the calls that ``http_error_rate``,
    ``reset_rate`` and ``latency`` apply to.
    """

    shard_records_per_second: Optional[float] = None
    shard_bytes_per_second: Optional[float] = None
    http_error_rate: float = 0.0
    reset_rate: float = 0.0
    record_failure_rate: float = 0.0
    latency: float = 0.0
    operations: FrozenSet[str] = frozenset({"PutRecords"})

    def __post_init__(self) -> None:
        for name in ("http_error_rate", "reset_rate", "record_failure_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Faults.{name} must be between 0 and 1, got {value!r}")
        for name in ("shard_records_per_second", "shard_bytes_per_second"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"Faults.{name} must be positive or None, got {value!r}")
        if self.latency < 0:
            raise ValueError(f"Faults.latency must be >= 0 seconds, got {self.latency!r}")
        object.__setattr__(self, "operations", frozenset(self.operations))

    @classmethod
    def kinesis_limits(cls, share: float = 1.0, **others: Any) -> "Faults":
        """Kinesis's per-shard write limits, or ``share`` of them."""
        return cls(
            shard_records_per_second=KINESIS_SHARD_RECORDS_PER_SECOND * share,
            shard_bytes_per_second=KINESIS_SHARD_BYTES_PER_SECOND * share,
            **others,
        )


class _ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _not_found(name: str) -> _ApiError:
    return _ApiError(400, "ResourceNotFoundException",
                     f"Stream {name} under account {_ACCOUNT} not found.")


class _Shard:
    __slots__ = ("shard_id", "start", "end", "seq_base", "count", "stored",
                 "record_tokens", "byte_tokens", "refilled", "parents", "closed")

    def __init__(self, index: int, start: int, end: int, parents: Tuple[str, ...] = ()) -> None:
        self.shard_id = f"shardId-{index:012d}"
        self.start, self.end = start, end
        #: The shard(s) this one was split or merged from, as Kinesis names them.
        self.parents = parents
        #: A split or merge closed it: it keeps its records but takes no more.
        self.closed = False
        # 56 decimal digits, like Kinesis's; increasing within the shard.
        self.seq_base = 4960 * 10**52 + index * 10**36
        self.count = 0
        #: (sequence number, partition key, explicit hash key, base64 data, arrival epoch seconds),
        #: arrival order.
        self.stored: List[Tuple[str, str, Optional[str], str, float]] = []
        self.record_tokens = self.byte_tokens = -1.0  # full at first use
        self.refilled = 0.0

    def describe(self) -> Dict[str, Any]:
        sequence_range = {"StartingSequenceNumber": str(self.seq_base)}
        if self.closed:
            sequence_range["EndingSequenceNumber"] = str(self.seq_base + self.count)
        described: Dict[str, Any] = {
            "ShardId": self.shard_id,
            "HashKeyRange": {"StartingHashKey": str(self.start), "EndingHashKey": str(self.end)},
            "SequenceNumberRange": sequence_range,
        }
        for name, parent in zip(("ParentShardId", "AdjacentParentShardId"), self.parents):
            described[name] = parent
        return described


class _Stream:
    def __init__(self, name: str, shard_count: int, region: str) -> None:
        self.name = name
        self.arn = f"arn:aws:kinesis:{region}:{_ACCOUNT}:stream/{name}"
        self.created = time.time()
        width = _HASH_SPACE // shard_count
        #: Every shard ever, in shard-id order; closed ones keep their records.
        self.all_shards = [
            _Shard(i, i * width, _HASH_SPACE - 1 if i == shard_count - 1 else (i + 1) * width - 1)
            for i in range(shard_count)
        ]
        self._index_open_shards()

    def _index_open_shards(self) -> None:
        self.shards = sorted((s for s in self.all_shards if not s.closed), key=lambda s: s.start)
        self.starts = [s.start for s in self.shards]

    def shard_for(self, hash_key: int) -> _Shard:
        """The open shard whose hash range holds ``hash_key``."""
        return self.shards[bisect.bisect_right(self.starts, hash_key) - 1]

    def any_shard(self, shard_id: Any) -> _Shard:
        """A shard of the stream, open or closed."""
        for shard in self.all_shards:
            if shard.shard_id == shard_id:
                return shard
        raise _ApiError(400, "ResourceNotFoundException", f"Shard {shard_id} of stream {self.name} not found")

    def open_shard(self, shard_id: Any) -> _Shard:
        for shard in self.shards:
            if shard.shard_id == shard_id:
                return shard
        raise _ApiError(400, "ResourceNotFoundException" if all(s.shard_id != shard_id for s in self.all_shards)
                        else "InvalidArgumentException", f"Shard {shard_id} is not an open shard of stream {self.name}")

    def split(self, shard_id: Any, new_starting_hash_key: int) -> None:
        """Close ``shard_id`` and open two children, the second starting at ``new_starting_hash_key``."""
        parent = self.open_shard(shard_id)
        if not parent.start < new_starting_hash_key <= parent.end:
            raise _ApiError(400, "InvalidArgumentException",
                            f"NewStartingHashKey {new_starting_hash_key} is not inside {shard_id}'s hash range")
        self._replace([parent], [(parent.start, new_starting_hash_key - 1), (new_starting_hash_key, parent.end)])

    def merge(self, shard_id: Any, adjacent_shard_id: Any) -> None:
        """Close two adjacent shards and open one child covering both ranges."""
        first, second = sorted((self.open_shard(shard_id), self.open_shard(adjacent_shard_id)), key=lambda s: s.start)
        if first is second or first.end + 1 != second.start:
            raise _ApiError(400, "InvalidArgumentException",
                            f"Shards {shard_id} and {adjacent_shard_id} are not adjacent")
        self._replace([first, second], [(first.start, second.end)])

    def _replace(self, closing: List[_Shard], ranges: List[Tuple[int, int]]) -> None:
        parents = tuple(s.shard_id for s in closing)
        for shard in closing:
            shard.closed = True
        for start, end in ranges:
            self.all_shards.append(_Shard(len(self.all_shards), start, end, parents))
        self._index_open_shards()

    def summary(self) -> Dict[str, Any]:
        return {
            "StreamName": self.name,
            "StreamARN": self.arn,
            "StreamStatus": "ACTIVE",
            "StreamModeDetails": {"StreamMode": "PROVISIONED"},
            "RetentionPeriodHours": 24,
            "StreamCreationTimestamp": self.created,
            "EnhancedMonitoring": [{"ShardLevelMetrics": []}],
            "EncryptionType": "NONE",
            "OpenShardCount": len(self.shards),  # open ones only, as Kinesis counts
            "ConsumerCount": 0,
        }


def _validate_shard_count(name: str, shards: Any) -> int:
    if not isinstance(name, str) or not name or len(name) > 128:
        raise ValueError(f"bad stream name {name!r}")
    if not isinstance(shards, int) or isinstance(shards, bool) or not 1 <= shards <= 10000:
        raise ValueError(f"stream {name!r}: shard count must be 1 to 10000, got {shards!r}")
    return shards


def _decoded_size(data: str) -> int:
    """Bytes a base64 string decodes to, without decoding it."""
    return len(data) * 3 // 4 - (data[-2:] == "==") - (data[-1:] == "=")


class KinesisEndpoint:
    """An HTTPS Kinesis endpoint on 127.0.0.1 serving the KPL fast, with fault knobs.

    ``streams`` maps stream name to shard count (more with :meth:`create_stream` or the
    ``CreateStream`` call). ``store=False`` only counts records (for benchmarks): :meth:`records`
    then has nothing to return. A context manager; :meth:`stop` is idempotent and also runs at interpreter exit.
    """

    def __init__(
        self,
        streams: Optional[Mapping[str, int]] = None,
        *,
        store: bool = True,
        faults: Optional[Faults] = None,
        region: str = "us-east-1",
        credentials: Optional[List[Credentials]] = None,
    ) -> None:
        self.region = region
        #: Every request must be signed (SigV4) by one of these: by default the loopback keys that
        #: the test helpers give every process.
        self._verifier = SigV4Verifier(credentials or [LOOPBACK_CREDENTIALS], region)
        self.store = store
        self._lock = threading.Lock()
        self._streams: Dict[str, _Stream] = {}
        for name, shards in (streams or {}).items():
            self._streams[name] = _Stream(name, _validate_shard_count(name, shards), region)
        self._faults = faults or Faults()
        self._outage_until = 0.0
        #: stream name -> stored records after which the stream is deleted (see delete_stream_after)
        self._delete_after: Dict[str, int] = {}
        # Error diffusion: each call (record) adds the share; a fault is due when the sum reaches 1.
        self._carry: Dict[str, float] = {"reset": 0.5, "error": 0.5, "record": 0.5}
        self._error_503 = False
        self._counts: Counter = Counter()
        self._calls: Counter = Counter()
        self._record_errors: Counter = Counter()
        self._call_errors: Counter = Counter()
        #: Bodies of every call but PutRecords (which carries data), newest last.
        self._requests: Deque[Tuple[str, Dict[str, Any]]] = deque(maxlen=1000)
        self._request_ids = itertools.count(1)
        self._server: Optional[_TlsServer] = None
        self._serve_thread: Optional[threading.Thread] = None
        self._clients: Dict[str, Any] = {}
        self._ops: Dict[str, Callable[[Dict[str, Any]], Union[Dict[str, Any], bytes]]] = {
            "PutRecords": self._put_records,
            "PutRecord": self._put_record,
            "ListShards": self._list_shards,
            "DescribeStreamSummary": self._describe_stream_summary,
            "DescribeStream": self._describe_stream,
            "CreateStream": self._create_stream_call,
            "DeleteStream": self._delete_stream_call,
            "ListStreams": self._list_streams,
            "SplitShard": self._split_shard_call,
            "MergeShards": self._merge_shards_call,
            "GetShardIterator": self._get_shard_iterator,
            "GetRecords": self._get_records,
        }

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> "KinesisEndpoint":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> "KinesisEndpoint":
        """Generate a certificate, bind a free port on 127.0.0.1 and serve in a background thread."""
        if self._server is not None:
            raise KinesisEndpointError("KinesisEndpoint is already running")
        server = _TlsServer(self, _self_signed_context())
        self._server = server
        self._serve_thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2},
            name=f"kinesis-endpoint-{server.port}", daemon=True)
        self._serve_thread.start()
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        """Stop serving, reset open connections and join every thread this endpoint started."""
        atexit.unregister(self.stop)
        server, self._server = self._server, None
        thread, self._serve_thread = self._serve_thread, None
        self._clients.clear()
        if server is None:
            return
        server.shutdown()
        if thread is not None:
            thread.join(_STOP_JOIN_TIMEOUT)
        server.server_close()
        server.close_connections()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        if self._server is None:
            raise KinesisEndpointError("KinesisEndpoint is not running; call start() first")
        return self._server.port

    @property
    def endpoint_url(self) -> str:
        """HTTPS endpoint for AWS SDK clients (self-signed certificate: do not verify)."""
        return f"https://{LOOPBACK}:{self.port}"

    def kpl_options(self) -> Dict[str, str]:
        """KPL properties that keep every connection of the KPL (Kinesis and CloudWatch) here."""
        port = str(self.port)
        return {
            "Region": self.region,
            "KinesisEndpoint": LOOPBACK,
            "KinesisPort": port,
            "VerifyCertificate": "false",
            "MetricsLevel": "none",
            "CloudwatchEndpoint": LOOPBACK,
            "CloudwatchPort": port,
        }

    def client(self) -> Any:
        """A boto3 Kinesis client for this endpoint (TLS, unverified; no proxy; static keys)."""
        warnings.filterwarnings(  # each time: pytest resets the filters for every test
            "ignore", message=r"Unverified HTTPS request is being made to host '127\.0\.0\.1'")
        cached = self._clients.get("kinesis")
        if cached is not None:
            return cached
        import boto3
        from botocore.config import Config

        session = boto3.session.Session(
            aws_access_key_id=LOOPBACK_AWS_ENV["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=LOOPBACK_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
            region_name=self.region,
        )
        client = session.client(
            "kinesis", endpoint_url=self.endpoint_url, verify=False,
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"},  # faults show
                          connect_timeout=5, read_timeout=60,
                          proxies={}))
        self._clients["kinesis"] = client
        return client

    def accept_credentials(self, credentials: Credentials) -> None:
        """Accept requests signed with these credentials too, from now on."""
        self._verifier.accept(credentials)

    # -- streams -----------------------------------------------------------------------------

    def create_stream(self, name: str, shards: int = 1) -> None:
        """Create a stream, ACTIVE at once."""
        stream = _Stream(name, _validate_shard_count(name, shards), self.region)
        with self._lock:
            if name in self._streams:
                raise ValueError(f"stream {name!r} already exists")
            self._streams[name] = stream

    def delete_stream(self, name: str) -> None:
        """Delete a stream and what it stored; the name can be reused at once."""
        with self._lock:
            self._delete_after.pop(name, None)
            if self._streams.pop(name, None) is None:
                raise KeyError(f"no stream {name!r}")

    @property
    def streams(self) -> Dict[str, int]:
        with self._lock:
            return {name: len(s.shards) for name, s in self._streams.items()}

    def records(self, stream: str) -> List[Record]:
        """Every user record stored in ``stream``, de-aggregated: shard by shard, arrival order."""
        with self._lock:
            found = self._streams.get(stream)
            if found is None:
                raise KeyError(f"no stream {stream!r}")
            snapshot = [(s.shard_id, list(s.stored)) for s in found.all_shards]
        out: List[Record] = []
        for shard_id, stored in snapshot:
            for sequence_number, partition_key, _ehk, data, _arrived in stored:
                raw = {"Data": base64.b64decode(data), "SequenceNumber": sequence_number,
                       "PartitionKey": partition_key}
                out.extend(_user_records(raw, shard_id))
        return out

    # -- faults ------------------------------------------------------------------------------

    @property
    def faults(self) -> Faults:
        return self._faults

    def set_faults(self, faults: Optional[Faults] = None, **changes: Any) -> Faults:
        """Replace the faults (``faults``) and/or change some of their fields; returns the new ones.

        ``set_faults(Faults())`` clears them all (an outage in progress is ended by
        :meth:`end_outage`).
        """
        with self._lock:
            self._faults = replace(faults or self._faults, **changes)
            return self._faults

    def outage(self, seconds: float) -> None:
        """From now on, for ``seconds``, reset every connection and every request."""
        with self._lock:
            self._outage_until = time.monotonic() + seconds

    def end_outage(self) -> None:
        with self._lock:
            self._outage_until = 0.0

    def in_outage(self) -> bool:
        return time.monotonic() < self._outage_until

    def delete_stream_after(self, name: str, records: int) -> None:
        """Delete ``name`` inside the PutRecords call that brings its stored records to ``records``
        or more: a deletion mid-write at a known point, whatever the timing of the writer."""
        if records < 1:
            raise ValueError(f"records must be >= 1, got {records!r}")
        with self._lock:
            if name not in self._streams:
                raise KeyError(f"no stream {name!r}")
            self._delete_after[name] = records

    def split_shard(self, stream: str, shard_id: str, new_starting_hash_key: int) -> None:
        """Split an open shard as Kinesis's SplitShard does: it closes (keeping its records) and two
        children take its hash range, the second from ``new_starting_hash_key``."""
        with self._lock:
            self._stream({"StreamName": stream}).split(shard_id, new_starting_hash_key)

    def merge_shards(self, stream: str, shard_id: str, adjacent_shard_id: str) -> None:
        """Merge two adjacent open shards as Kinesis's MergeShards does."""
        with self._lock:
            self._stream({"StreamName": stream}).merge(shard_id, adjacent_shard_id)

    def hash_ranges(self, stream: str) -> Dict[str, Tuple[int, int]]:
        """Shard id -> (starting, ending hash key) of every shard of ``stream``, closed ones too."""
        with self._lock:
            return {s.shard_id: (s.start, s.end) for s in self._stream({"StreamName": stream}).all_shards}

    # -- counters ----------------------------------------------------------------------------

    @property
    def put_calls(self) -> int:
        """PutRecords/PutRecord calls received, whatever their answer."""
        return self._counts["put_calls"]

    @property
    def records_received(self) -> int:
        """Kinesis records accepted (given a sequence number): aggregates count once."""
        return self._counts["records_received"]

    @property
    def bytes_received(self) -> int:
        """Data and partition key bytes of the accepted records."""
        return self._counts["bytes_received"]

    @property
    def records_rejected(self) -> int:
        """Records given an error in their own result (throttled or failed)."""
        return self._counts["records_rejected"]

    @property
    def record_errors(self) -> Dict[str, int]:
        """Per-record error code -> count."""
        with self._lock:
            return dict(self._record_errors)

    @property
    def call_errors(self) -> Dict[str, int]:
        """Whole-call failures -> count: error codes, ``ConnectionReset`` and ``Outage``."""
        with self._lock:
            return dict(self._call_errors)

    @property
    def calls(self) -> Dict[str, int]:
        """Operation -> calls received."""
        with self._lock:
            return dict(self._calls)

    def requests(self, operation: Optional[str] = None) -> List[Dict[str, Any]]:
        """Bodies of the last calls (PutRecords excluded: too big), optionally of one operation."""
        with self._lock:
            return [body for op, body in self._requests if operation in (None, op)]

    def stats(self) -> Dict[str, Any]:
        """Every counter at once."""
        with self._lock:
            return {
                "put_calls": self._counts["put_calls"],
                "records_received": self._counts["records_received"],
                "bytes_received": self._counts["bytes_received"],
                "records_rejected": self._counts["records_rejected"],
                "record_errors": dict(self._record_errors),
                "call_errors": dict(self._call_errors),
                "calls": dict(self._calls),
            }

    def reset_counters(self) -> None:
        with self._lock:
            for counter in (self._counts, self._calls, self._record_errors, self._call_errors):
                counter.clear()
            self._requests.clear()

    # -- serving (called on connection threads) ----------------------------------------------

    def _note_call_error(self, code: str) -> None:
        with self._lock:
            self._call_errors[code] += 1

    def _serve(self, handler: "_Handler") -> None:
        """Answer one HTTP request."""
        length = handler.headers.get("Content-Length")
        if length is None:
            handler.respond(411, b"", "text/plain")
            handler.close_connection = True
            return
        body = handler.rfile.read(int(length))
        if self.in_outage():
            self._note_call_error("Outage")
            handler.reset()
            return
        target = handler.headers.get("X-Amz-Target", "")
        try:  # CloudWatch's calls come here too, signed for its own service
            self._verifier.verify("POST", handler.path, handler.headers.items(), body,
                                  "kinesis" if target.startswith(_TARGET_PREFIX) else "monitoring")
        except SignatureRejected as rejected:
            self._note_call_error(rejected.code)
            handler.respond_error(_ApiError(rejected.status, rejected.code, rejected.message))
            return
        if not target.startswith(_TARGET_PREFIX):
            self._answer_other(handler, target)
            return
        op = target[len(_TARGET_PREFIX):]
        faults = self._faults
        with self._lock:
            self._calls[op] += 1
            if op in ("PutRecords", "PutRecord"):
                self._counts["put_calls"] += 1
            faulty = op in faults.operations
            reset = faulty and self._due("reset", faults.reset_rate)
            error = faulty and not reset and self._due("error", faults.http_error_rate)
            error_503 = False
            if error:  # 500 and 503 in turn
                error_503 = self._error_503 = not self._error_503
        if faulty and faults.latency:
            time.sleep(faults.latency)
        if reset:
            self._note_call_error("ConnectionReset")
            handler.reset()
            return
        if error:
            failure = (_ApiError(503, "ServiceUnavailable", "Service Unavailable") if error_503
                       else _ApiError(500, "InternalFailure", "Internal service failure."))
            self._note_call_error(failure.code)
            handler.respond_error(failure)
            return
        try:
            try:
                payload = json.loads(body) if body else {}
            except ValueError as e:
                raise _ApiError(400, "SerializationException", f"bad JSON: {e}") from None
            if not isinstance(payload, dict):
                raise _ApiError(400, "SerializationException", "the body is not a JSON object")
            operation = self._ops.get(op)
            if operation is None:
                raise _ApiError(400, "UnknownOperationException", f"unsupported operation {op}")
            if op not in ("PutRecords", "PutRecord"):
                with self._lock:
                    self._requests.append((op, payload))
            answer = operation(payload)
        except _ApiError as e:
            self._note_call_error(e.code)
            handler.respond_error(e)
            return
        handler.respond(200, answer if isinstance(answer, bytes) else json.dumps(answer).encode())

    def _answer_other(self, handler: "_Handler", target: str) -> None:
        """CloudWatch's PutMetricData (JSON or query protocol) or anything else: accept, ignore."""
        with self._lock:
            self._calls[target or "(no X-Amz-Target)"] += 1
        if "json" in handler.headers.get("Content-Type", ""):
            handler.respond(200, b"{}", "application/x-amz-json-1.0")
        else:
            handler.respond(200, b'<PutMetricDataResponse xmlns="http://monitoring.amazonaws.com/'
                            b'doc/2010-08-01/"><ResponseMetadata><RequestId>0</RequestId>'
                            b"</ResponseMetadata></PutMetricDataResponse>", "text/xml")

    def _due(self, kind: str, share: float) -> bool:
        """Whether this call (record) gets fault ``kind``; the lock is held."""
        if share <= 0:
            return False
        carry = self._carry[kind] + share
        due = carry >= 1.0
        self._carry[kind] = carry - 1.0 if due else carry
        return due

    def _stream(self, payload: Mapping[str, Any]) -> _Stream:
        """The call's stream, by StreamName or StreamARN; the lock need not be held."""
        name = payload.get("StreamName")
        if name is None:
            arn = payload.get("StreamARN")
            if not isinstance(arn, str) or "stream/" not in arn:
                raise _ApiError(400, "InvalidArgumentException", "StreamName or StreamARN is required")
            name = arn.rsplit("stream/", 1)[1]
        stream = self._streams.get(name)
        if stream is None:
            raise _not_found(name)
        return stream

    def _put_record(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        stream = self._stream(payload)
        entry = {k: payload.get(k) for k in ("Data", "PartitionKey", "ExplicitHashKey")}
        result = self._put(stream, [entry])[0]
        if "ErrorCode" in result:
            status = 500 if result["ErrorCode"] == "InternalFailure" else 400
            raise _ApiError(status, result["ErrorCode"], result["ErrorMessage"])
        return {**result, "EncryptionType": "NONE"}

    def _put_records(self, payload: Dict[str, Any]) -> bytes:
        stream = self._stream(payload)
        entries = payload.get("Records")
        if not isinstance(entries, list) or not 1 <= len(entries) <= _MAX_RECORDS_PER_CALL:
            raise _ApiError(400, "ValidationException",
                            f"Records must be a list of 1 to {_MAX_RECORDS_PER_CALL} records")
        results = self._put(stream, entries)
        failed = sum(1 for r in results if "ErrorCode" in r)
        # Built by hand: the answer is most of this endpoint's JSON work.
        parts = [
            f'{{"ErrorCode":"{r["ErrorCode"]}","ErrorMessage":{json.dumps(r["ErrorMessage"])}}}'
            if "ErrorCode" in r else
            f'{{"SequenceNumber":"{r["SequenceNumber"]}","ShardId":"{r["ShardId"]}"}}'
            for r in results
        ]
        return (f'{{"FailedRecordCount":{failed},"EncryptionType":"NONE","Records":['
                + ",".join(parts) + "]}").encode()

    def _put(self, stream: _Stream, entries: List[Any]) -> List[Dict[str, str]]:
        """Route, throttle, fail or accept each record; one result per record, in order."""
        routed: List[Tuple[int, int, str, Optional[str], str]] = []
        call_bytes = 0
        md5 = hashlib.md5
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise _ApiError(400, "SerializationException", f"record {i} is not an object")
            data, key, ehk = entry.get("Data"), entry.get("PartitionKey"), entry.get("ExplicitHashKey")
            if not isinstance(data, str):
                raise _ApiError(400, "ValidationException", f"record {i}: Data is required")
            if not isinstance(key, str) or not 1 <= len(key) <= 256:
                raise _ApiError(400, "ValidationException",
                                f"record {i}: PartitionKey must be 1 to 256 characters")
            encoded_key = key.encode()
            size = _decoded_size(data) + len(encoded_key)
            if size > _MAX_RECORD_BYTES:
                raise _ApiError(400, "ValidationException", f"record {i} is larger than 1 MiB")
            call_bytes += size
            if ehk is None:
                hash_key = int.from_bytes(md5(encoded_key).digest(), "big")
            else:
                try:
                    hash_key = int(ehk)
                    valid = isinstance(ehk, str) and 0 <= hash_key < _HASH_SPACE
                except (TypeError, ValueError):
                    valid = False
                if not valid:
                    raise _ApiError(400, "InvalidArgumentException",
                                    f"record {i}: ExplicitHashKey {ehk!r} is not 0 to 2^128-1")
            routed.append((hash_key, size, key, ehk, data))
        if call_bytes > _MAX_CALL_BYTES:
            raise _ApiError(400, "InvalidArgumentException", "Records size exceeds 5 MB limit")

        faults = self._faults
        record_rate, byte_rate = faults.shard_records_per_second, faults.shard_bytes_per_second
        failure_rate = faults.record_failure_rate
        store = self.store
        results: List[Dict[str, str]] = []
        accepted = accepted_bytes = 0
        errors: Counter = Counter()
        with self._lock:
            if self._streams.get(stream.name) is not stream:  # deleted meanwhile
                raise _not_found(stream.name)
            now, arrived = time.monotonic(), time.time()
            for hash_key, size, key, ehk, data in routed:
                shard = stream.shard_for(hash_key)  # under the lock: a split or merge may have just happened
                if record_rate is not None or byte_rate is not None:
                    if _throttled(shard, size, now, record_rate, byte_rate):
                        errors["ProvisionedThroughputExceededException"] += 1
                        results.append({
                            "ErrorCode": "ProvisionedThroughputExceededException",
                            "ErrorMessage": f"Rate exceeded for shard {shard.shard_id} in stream "
                                            f"{stream.name} under account {_ACCOUNT}."})
                        continue
                if failure_rate and self._due("record", failure_rate):
                    errors["InternalFailure"] += 1
                    results.append({"ErrorCode": "InternalFailure",
                                    "ErrorMessage": "Internal service failure."})
                    continue
                shard.count += 1
                sequence_number = str(shard.seq_base + shard.count)
                if store:
                    shard.stored.append((sequence_number, key, ehk, data, arrived))
                accepted += 1
                accepted_bytes += size
                results.append({"SequenceNumber": sequence_number, "ShardId": shard.shard_id})
            self._counts["records_received"] += accepted
            self._counts["bytes_received"] += accepted_bytes
            self._counts["records_rejected"] += len(routed) - accepted
            self._record_errors.update(errors)
            deletion_due = self._delete_after.get(stream.name)
            if deletion_due is not None and sum(s.count for s in stream.all_shards) >= deletion_due:
                del self._delete_after[stream.name]
                del self._streams[stream.name]
        return results

    def _list_shards(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        token = payload.get("NextToken")
        if token is not None:
            try:
                name, offset = json.loads(base64.b64decode(token))
            except Exception:
                raise _ApiError(400, "InvalidArgumentException", "bad NextToken") from None
            stream = self._stream({"StreamName": name})
            shard_filter: Any = None
        else:
            stream = self._stream(payload)
            offset = 0
            shard_filter = payload.get("ShardFilter")
        with self._lock:
            shards = list(stream.all_shards)
        after = payload.get("ExclusiveStartShardId")
        if isinstance(shard_filter, dict):
            kind = shard_filter.get("Type")
            if kind == "AFTER_SHARD_ID":
                after = shard_filter.get("ShardId")
            elif kind == "AT_LATEST":
                shards = [s for s in shards if not s.closed]
            elif kind not in ("AT_TRIM_HORIZON", "FROM_TRIM_HORIZON", "AT_TIMESTAMP", "FROM_TIMESTAMP"):
                raise _ApiError(400, "InvalidArgumentException", f"bad ShardFilter Type {kind!r}")
            # Records are never trimmed here: the other filters select every shard, closed ones too.
        if after is not None:
            shards = [s for s in shards if s.shard_id > after]
        limit = payload.get("MaxResults") or 1000
        if not isinstance(limit, int) or not 1 <= limit <= 10000:
            raise _ApiError(400, "InvalidArgumentException", "MaxResults must be 1 to 10000")
        page = shards[offset: offset + limit]
        answer: Dict[str, Any] = {"Shards": [s.describe() for s in page]}
        if offset + limit < len(shards):
            answer["NextToken"] = base64.b64encode(
                json.dumps([stream.name, offset + limit]).encode()).decode()
        return answer

    def _describe_stream_summary(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        return {"StreamDescriptionSummary": self._stream(payload).summary()}

    def _describe_stream(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        stream = self._stream(payload)
        summary = stream.summary()
        for key in ("OpenShardCount", "ConsumerCount"):
            summary.pop(key)
        summary["Shards"] = [s.describe() for s in stream.all_shards]
        summary["HasMoreShards"] = False
        return {"StreamDescription": summary}

    def _create_stream_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        name = payload.get("StreamName")
        shards = payload.get("ShardCount", 4)  # on-demand streams start with 4 shards
        try:
            self.create_stream(name, shards)  # type: ignore[arg-type]
        except ValueError as e:
            if isinstance(name, str) and name in self._streams:
                raise _ApiError(400, "ResourceInUseException",
                                f"Stream {name} under account {_ACCOUNT} already exists.") from None
            raise _ApiError(400, "InvalidArgumentException", str(e)) from None
        return {}

    def _delete_stream_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        stream = self._stream(payload)
        try:
            self.delete_stream(stream.name)
        except KeyError:
            raise _not_found(stream.name) from None
        return {}

    def _split_shard_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        try:
            new_start = int(payload.get("NewStartingHashKey"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise _ApiError(400, "InvalidArgumentException", "NewStartingHashKey must be a decimal") from None
        with self._lock:
            self._stream(payload).split(payload.get("ShardToSplit"), new_start)
        return {}

    def _merge_shards_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            self._stream(payload).merge(payload.get("ShardToMerge"), payload.get("AdjacentShardToMerge"))
        return {}

    def _get_shard_iterator(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        """TRIM_HORIZON or LATEST only; the iterator names the stream, the shard and the next record's index."""
        stream = self._stream(payload)
        kind = payload.get("ShardIteratorType")
        with self._lock:
            shard = stream.any_shard(payload.get("ShardId"))
            if kind not in ("TRIM_HORIZON", "LATEST"):
                raise _ApiError(400, "InvalidArgumentException",
                                f"ShardIteratorType {kind!r}: this endpoint serves TRIM_HORIZON and LATEST")
            position = 0 if kind == "TRIM_HORIZON" else len(shard.stored)
        return {"ShardIterator": _shard_iterator(stream.name, shard.shard_id, position)}

    def _get_records(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        try:
            name, shard_id, position = json.loads(base64.b64decode(payload.get("ShardIterator") or ""))
        except Exception:
            raise _ApiError(400, "InvalidArgumentException", "bad ShardIterator") from None
        limit = payload.get("Limit") or 10000
        if not isinstance(limit, int) or not 1 <= limit <= 10000:
            raise _ApiError(400, "InvalidArgumentException", "Limit must be 1 to 10000")
        stream = self._stream({"StreamName": name})
        with self._lock:
            shard = stream.any_shard(shard_id)
            page, behind, closed = shard.stored[position: position + limit], len(shard.stored) - position, shard.closed
        answer: Dict[str, Any] = {
            "Records": [{"SequenceNumber": seq, "ApproximateArrivalTimestamp": arrived, "Data": data,
                         "PartitionKey": key, "EncryptionType": "NONE"}
                        for seq, key, _ehk, data, arrived in page],
            "MillisBehindLatest": 0 if behind <= limit else 1000,
        }
        if not (closed and behind <= limit):  # as Kinesis: no next iterator once a closed shard is read to its end
            answer["NextShardIterator"] = _shard_iterator(name, shard_id, position + len(page))
        return answer

    def _list_streams(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            streams = sorted(self._streams.values(), key=lambda s: s.name)
        return {"StreamNames": [s.name for s in streams], "HasMoreStreams": False,
                "StreamSummaries": [{"StreamName": s.name, "StreamARN": s.arn, "StreamStatus": "ACTIVE"}
                                    for s in streams]}


def _shard_iterator(stream: str, shard_id: str, position: int) -> str:
    return base64.b64encode(json.dumps([stream, shard_id, position]).encode()).decode()


def _throttled(shard: _Shard, size: int, now: float, record_rate: Optional[float],
               byte_rate: Optional[float]) -> bool:
    """Token buckets holding one second of each limit; a throttled record consumes nothing."""
    elapsed = now - shard.refilled
    shard.refilled = now
    if record_rate is not None:
        if shard.record_tokens < 0:
            shard.record_tokens = record_rate
        shard.record_tokens = min(record_rate, shard.record_tokens + elapsed * record_rate)
        if shard.record_tokens < 1:
            return True
    if byte_rate is not None:
        if shard.byte_tokens < 0:
            shard.byte_tokens = byte_rate
        shard.byte_tokens = min(byte_rate, shard.byte_tokens + elapsed * byte_rate)
        if shard.byte_tokens < size:
            return True
    if record_rate is not None:
        shard.record_tokens -= 1
    if byte_rate is not None:
        shard.byte_tokens -= size
    return False


# -- HTTP over TLS ---------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the KPL's HTTP client expects
    server_version = "spark-kpl-endpoint"
    sys_version = ""
    server: "_TlsServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (quiet)
        pass

    def do_POST(self) -> None:
        try:
            self.server.endpoint._serve(self)
        except (OSError, ValueError):
            raise  # the connection broke: _TlsServer closes it quietly
        except Exception as e:  # a bug here must not look like an injected fault
            traceback.print_exc()
            self.server.endpoint._note_call_error("EndpointError")
            self.close_connection = True
            self.respond_error(_ApiError(500, "InternalFailure", f"KinesisEndpoint bug: {e!r}"))

    def do_GET(self) -> None:
        self.respond(200, b"{}")  # a health check

    def respond(self, status: int, body: bytes, content_type: str = _JSON_TYPE,
                extra: str = "") -> None:
        """Status line, headers and body in one write (no Nagle stall between them)."""
        request_id = next(self.server.endpoint._request_ids)
        head = (f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}\r\n"
                f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                f"x-amzn-RequestId: {request_id:08x}-0000-4000-8000-000000000000\r\n"
                f"Date: {self.date_time_string()}\r\n{extra}"
                f"{'Connection: close' + chr(13) + chr(10) if self.close_connection else ''}\r\n")
        self.wfile.write(head.encode("latin-1") + body)

    def respond_error(self, error: _ApiError) -> None:
        body = json.dumps({"__type": error.code, "message": error.message}).encode()
        self.respond(error.status, body, extra=f"x-amzn-ErrorType: {error.code}:\r\n")

    def reset(self) -> None:
        """Close the connection with a TCP reset and no answer."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
        except OSError:
            pass


class _TlsServer(http.server.HTTPServer):
    """One thread per connection, TLS handshake on that thread; tracks its threads and sockets."""

    request_queue_size = 128
    allow_reuse_address = False

    def __init__(self, endpoint: KinesisEndpoint, context: ssl.SSLContext) -> None:
        self.endpoint = endpoint
        self.context = context
        self._conn_lock = threading.Lock()
        self._threads: Set[threading.Thread] = set()
        self._sockets: Set[socket.socket] = set()
        self._closing = False
        super().__init__((LOOPBACK, 0), _Handler)
        self.port: int = self.server_address[1]

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self._connection, args=(request, client_address),
                                  name=f"kinesis-endpoint-{self.port}-conn", daemon=True)
        with self._conn_lock:
            if self._closing:
                request.close()
                return
            self._threads.add(thread)
        thread.start()

    def _connection(self, raw: socket.socket, client_address: Any) -> None:
        conn: socket.socket = raw
        try:
            if self.endpoint.in_outage():
                self.endpoint._note_call_error("Outage")
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
                return
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            raw.settimeout(_IDLE_TIMEOUT)
            # Wrapping detaches ``raw``: track the TLS socket, before its handshake can block.
            conn = self.context.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
            with self._conn_lock:
                if self._closing:
                    return
                self._sockets.add(conn)
            conn.do_handshake()
            self.finish_request(conn, client_address)
        except (OSError, ValueError, ssl.SSLError):
            pass  # the client went away, or stop() shut the socket
        finally:
            with self._conn_lock:
                self._sockets.discard(conn)
                self._threads.discard(threading.current_thread())
            try:
                conn.close()
            except OSError:
                pass

    def close_connections(self) -> None:
        """Wake every connection thread (shut its socket) and join them."""
        with self._conn_lock:
            self._closing = True
            sockets, threads = list(self._sockets), list(self._threads)
        for sock in sockets:
            try:
                # The plain socket's shutdown: SSLSocket.shutdown would race its reading thread.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + _STOP_JOIN_TIMEOUT
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def self_signed_certificate(folder: str) -> Tuple[str, str]:
    """Write a fresh self-signed P-256 certificate for 127.0.0.1 and its key into ``folder``.

    Returns the paths of the certificate and the key (PEM); a client that trusts the certificate file
    verifies a server on 127.0.0.1 that uses them. Needs the ``openssl`` command.
    """
    openssl = shutil.which("openssl")
    if openssl is None:
        raise KinesisEndpointError("the `openssl` command is needed to make a certificate")
    key, cert = os.path.join(folder, "key.pem"), os.path.join(folder, "cert.pem")
    done = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "7", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    if done.returncode != 0:
        raise KinesisEndpointError(f"openssl could not make a certificate: {done.stderr.decode(errors='replace')}")
    return cert, key


def _self_signed_context() -> ssl.SSLContext:
    """A server context with a fresh self-signed certificate for 127.0.0.1."""
    folder = tempfile.mkdtemp(prefix="spark-kpl-endpoint-")
    try:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(*self_signed_certificate(folder))  # read into memory: the files can go
        return context
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- a stand-alone endpoint -------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m spark_kpl.testing.endpoint --stream NAME=SHARDS ... [--no-store]``.

    Prints one JSON line (port and KPL options), serves until SIGTERM or SIGINT, or until its
    stdin ends if stdin is a pipe (so it ends with the process that started it through one), then
    prints the counters as one JSON line.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m spark_kpl.testing.endpoint",
                                     description=main.__doc__)
    parser.add_argument("--stream", action="append", default=[], metavar="NAME=SHARDS")
    parser.add_argument("--no-store", action="store_true", help="count records, keep none")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--shard-limits", type=float, metavar="SHARE",
                        help="throttle at this share of Kinesis's per-shard limits")
    args = parser.parse_args(argv)
    streams = {}
    for spec in args.stream:
        name, _, shards = spec.rpartition("=")
        streams[name] = int(shards)
    faults = Faults.kinesis_limits(args.shard_limits) if args.shard_limits else None
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())

    def watch_stdin() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        done.set()

    with KinesisEndpoint(streams, store=not args.no_store, faults=faults,
                         region=args.region) as endpoint:
        print(json.dumps({"port": endpoint.port, "kpl_options": endpoint.kpl_options()}), flush=True)
        if stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode):
            threading.Thread(target=watch_stdin, daemon=True).start()
        while not done.wait(0.5):
            pass
        print(json.dumps(endpoint.stats()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
