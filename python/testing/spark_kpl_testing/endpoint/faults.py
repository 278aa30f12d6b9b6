"""What the endpoint does wrong on purpose: the fault settings, when each fault is due, and throttling."""

from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Dict, FrozenSet, NamedTuple, Optional, Tuple

__all__ = ["KINESIS_CONTROL_PLANE_LIMITS", "KINESIS_SHARD_BYTES_PER_SECOND", "KINESIS_SHARD_RECORDS_PER_SECOND",
           "CallFault", "CallLimit", "ControlPlaneLimits", "FaultInjector", "Faults", "TokenBuckets"]

#: Kinesis's write limits per shard.
KINESIS_SHARD_RECORDS_PER_SECOND = 1000
KINESIS_SHARD_BYTES_PER_SECOND = 1 << 20


@dataclass(frozen=True)
class Faults:
    """What the endpoint does wrong, on purpose. Rates are shares between 0 and 1.

    ``control_plane_limits``: refuse the calls past Kinesis's limits on each control-plane operation
    (:data:`KINESIS_CONTROL_PLANE_LIMITS`, per account or per stream) with ``LimitExceededException``,
    as Kinesis does; on in :meth:`kinesis_limits`.

    ``shard_records_per_second`` / ``shard_bytes_per_second``: per-shard write limits (``None``: no
    throttling); Kinesis's own are :data:`KINESIS_SHARD_RECORDS_PER_SECOND` and
    :data:`KINESIS_SHARD_BYTES_PER_SECOND` (see :meth:`kinesis_limits`). Bytes are data plus
    partition key, as Kinesis counts them. ``operations``: the calls that ``http_error_rate``,
    ``reset_rate``, ``limit_exceeded_rate`` and ``latency`` apply to. ``limit_exceeded_rate``: the share
    of those calls refused with ``LimitExceededException``, as Kinesis refuses a control-plane call over
    its rate (``ListShards``: 1,000 a second per stream). ``streams``: when set, those faults fall only on
    calls naming one of these streams (by ``StreamName`` or ``StreamARN``), so that one stream can be made
    slow while others are not.

    ``starved_data``: a Kinesis record whose data holds these bytes (inside an aggregate too) is refused for its
    shard's throughput, however idle the shard, for ``starved_seconds`` from the first such refusal: a record
    that other writers keep outrunning at a busy shard.
    """

    shard_records_per_second: Optional[float] = None
    shard_bytes_per_second: Optional[float] = None
    control_plane_limits: bool = False
    http_error_rate: float = 0.0
    reset_rate: float = 0.0
    limit_exceeded_rate: float = 0.0
    record_failure_rate: float = 0.0
    latency: float = 0.0
    operations: FrozenSet[str] = frozenset({"PutRecords"})
    streams: Optional[FrozenSet[str]] = None
    starved_data: Optional[bytes] = None
    starved_seconds: float = 0.0

    def __post_init__(self) -> None:
        for name in ("http_error_rate", "reset_rate", "limit_exceeded_rate", "record_failure_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Faults.{name} must be between 0 and 1, got {value!r}")
        for name in ("shard_records_per_second", "shard_bytes_per_second"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"Faults.{name} must be positive or None, got {value!r}")
        if self.starved_seconds < 0:
            raise ValueError(f"Faults.starved_seconds must be >= 0, got {self.starved_seconds!r}")
        if self.latency < 0:
            raise ValueError(f"Faults.latency must be >= 0 seconds, got {self.latency!r}")
        object.__setattr__(self, "operations", frozenset(self.operations))
        if self.streams is not None:
            object.__setattr__(self, "streams", frozenset(self.streams))

    @classmethod
    def kinesis_limits(cls, share: float = 1.0, **others: Any) -> "Faults":
        """Kinesis's per-shard write limits, or ``share`` of them, and its control-plane limits (whole:
        ``share`` slows the writes, not the calls that look at the streams)."""
        others.setdefault("control_plane_limits", True)
        return cls(
            shard_records_per_second=KINESIS_SHARD_RECORDS_PER_SECOND * share,
            shard_bytes_per_second=KINESIS_SHARD_BYTES_PER_SECOND * share,
            **others,
        )


@dataclass(frozen=True)
class CallFault:
    """What happens to one call: a TCP reset, an HTTP error answer (500 or 503), or a refusal for being
    over the call rate, after ``latency``."""

    latency: float = 0.0
    reset: bool = False
    http_status: Optional[int] = None
    limit_exceeded: bool = False


class FaultInjector:
    """The faults in force, an outage window, and which call or record each fault falls on.

    Shares are exact and evenly spread, not drawn at random (error diffusion: each call or record adds
    its share to a carry, and the fault is due when the carry reaches 1), so a test with few calls still
    meets each fault it asks for, the same way every run. Thread-safe.
    """

    def __init__(self, faults: Optional[Faults] = None) -> None:
        self._lock = threading.Lock()
        self._faults = faults or Faults()
        self._outage_until = 0.0
        self._carry: Dict[str, float] = {"reset": 0.5, "error": 0.5, "limit": 0.5, "record": 0.5}
        self._last_error_503 = False
        self._starved_since: Optional[float] = None

    @property
    def faults(self) -> Faults:
        return self._faults

    def set(self, faults: Optional[Faults] = None, **changes: Any) -> Faults:
        with self._lock:
            self._faults = replace(faults or self._faults, **changes)
            self._starved_since = None
            return self._faults

    def outage(self, seconds: float) -> None:
        with self._lock:
            self._outage_until = time.monotonic() + seconds

    def end_outage(self) -> None:
        with self._lock:
            self._outage_until = 0.0

    def in_outage(self) -> bool:
        return time.monotonic() < self._outage_until

    def call_fault(self, operation: str, body: bytes = b"") -> CallFault:
        """The fault due for this call of ``operation`` with request ``body`` (none, mostly)."""
        faults = self._faults
        if operation not in faults.operations:
            return CallFault()
        if faults.streams is not None and _stream_named(body) not in faults.streams:
            return CallFault()
        with self._lock:
            if self._due("reset", faults.reset_rate):
                return CallFault(faults.latency, reset=True)
            if self._due("error", faults.http_error_rate):  # 500 and 503 in turn
                self._last_error_503 = not self._last_error_503
                return CallFault(faults.latency, http_status=503 if self._last_error_503 else 500)
            if self._due("limit", faults.limit_exceeded_rate):
                return CallFault(faults.latency, limit_exceeded=True)
        return CallFault(faults.latency)

    def record_fails(self) -> bool:
        """Whether this record gets ``InternalFailure`` in its own result."""
        rate = self._faults.record_failure_rate
        if not rate:
            return False
        with self._lock:
            return self._due("record", rate)

    def record_starved(self, data: str) -> bool:
        """Whether this record (``data`` base64, as sent) is refused for throughput by ``starved_data``."""
        faults = self._faults
        if faults.starved_data is None or faults.starved_data not in base64.b64decode(data):
            return False
        with self._lock:
            now = time.monotonic()
            if self._starved_since is None:
                self._starved_since = now
            return now - self._starved_since < faults.starved_seconds

    def _due(self, kind: str, share: float) -> bool:
        if share <= 0:
            return False
        carry = self._carry[kind] + share
        due = carry >= 1.0
        self._carry[kind] = carry - 1.0 if due else carry
        return due


def _stream_named(body: bytes) -> Optional[str]:
    """The stream a call's JSON body names by ``StreamName`` or ``StreamARN``, if any."""
    try:
        payload = json.loads(body or b"{}")
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    name = payload.get("StreamName")
    arn = payload.get("StreamARN")
    if name is None and isinstance(arn, str) and "stream/" in arn:
        name = arn.rsplit("stream/", 1)[1]
    return name if isinstance(name, str) else None


class TokenBuckets:
    """A shard's write limits: token buckets holding one second of each; a throttled record takes nothing."""

    __slots__ = ("record_tokens", "byte_tokens", "refilled")

    def __init__(self) -> None:
        self.record_tokens = self.byte_tokens = -1.0  # full at first use
        self.refilled = 0.0

    def throttled(self, size: int, now: float, record_rate: Optional[float], byte_rate: Optional[float]) -> bool:
        elapsed = now - self.refilled
        self.refilled = now
        if record_rate is not None:
            if self.record_tokens < 0:
                self.record_tokens = record_rate
            self.record_tokens = min(record_rate, self.record_tokens + elapsed * record_rate)
            if self.record_tokens < 1:
                return True
        if byte_rate is not None:
            if self.byte_tokens < 0:
                self.byte_tokens = byte_rate
            self.byte_tokens = min(byte_rate, self.byte_tokens + elapsed * byte_rate)
            if self.byte_tokens < size:
                return True
        if record_rate is not None:
            self.record_tokens -= 1
        if byte_rate is not None:
            self.byte_tokens -= size
        return False


# -- Kinesis's control-plane limits ------------------------------------------------------------------


class CallLimit(NamedTuple):
    """How many calls of an operation Kinesis takes a second, counted per account or per stream."""

    per_second: float
    per_stream: bool


#: The Kinesis API reference's limit on each control-plane operation the endpoint serves, as each
#: operation's page states it ("... has a limit of N transactions per second per account", or "per data
#: stream"; the same text in botocore 1.44.8's model). UpdateMaxRecordSize and
#: UpdateStreamRecordDistributionStrategy have none stated; GetShardIterator and GetRecords are reads,
#: refused with ProvisionedThroughputExceededException, not served at their limits here.
KINESIS_CONTROL_PLANE_LIMITS: Dict[str, CallLimit] = {
    "CreateStream": CallLimit(5, per_stream=False),
    "DeleteStream": CallLimit(5, per_stream=False),
    "DescribeStream": CallLimit(10, per_stream=False),
    "DescribeStreamSummary": CallLimit(20, per_stream=False),
    "ListShards": CallLimit(1000, per_stream=True),
    "ListStreams": CallLimit(5, per_stream=False),
    "MergeShards": CallLimit(5, per_stream=False),
    "SplitShard": CallLimit(5, per_stream=False),
}


class ControlPlaneLimits:
    """A token bucket per limited operation and account or stream, holding one second of its calls (a burst of
    that many passes at once, as the shards' buckets let one second of records through); a refused call
    takes nothing. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: Dict[Tuple[str, str], TokenBuckets] = {}

    def refuses(self, operation: str, stream: Optional[str], now: float) -> bool:
        """Whether this call of ``operation``, naming ``stream`` (None: none), is over its limit at ``now``
        (monotonic seconds)."""
        limit = KINESIS_CONTROL_PLANE_LIMITS.get(operation)
        if limit is None:
            return False
        scope = (stream or "") if limit.per_stream else ""  # one account: "" stands for it
        with self._lock:
            bucket = self._buckets.setdefault((operation, scope), TokenBuckets())
            # A call is a record of no bytes to the shard's buckets.
            return bucket.throttled(0, now, limit.per_second, None)
