"""What the endpoint received and refused, counted for tests and benchmarks. Thread-safe."""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple

__all__ = ["Counters", "LIMIT_EXCEEDED", "PUT_OPERATIONS"]

PUT_OPERATIONS = ("PutRecords", "PutRecord")
#: The error code of a call refused for its operation's rate, counted per operation too.
LIMIT_EXCEEDED = "LimitExceededException"


class Counters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter = Counter()
        self._calls: Counter = Counter()
        self._record_errors: Counter = Counter()
        self._call_errors: Counter = Counter()
        #: Operation -> its calls refused with LimitExceededException.
        self._limits_exceeded: Counter = Counter()
        #: Bodies of every call but PutRecords (which carries data), newest last.
        self._requests: Deque[Tuple[str, Dict[str, Any]]] = deque(maxlen=1000)
        self._first_put_at: Optional[float] = None

    # -- noting ------------------------------------------------------------------------------

    def call(self, operation: str) -> None:
        with self._lock:
            self._calls[operation] += 1
            if operation in PUT_OPERATIONS:
                self._counts["put_calls"] += 1
                if self._first_put_at is None:
                    self._first_put_at = time.time()

    def call_error(self, code: str, operation: Optional[str] = None) -> None:
        """A whole call failed with ``code``; ``operation``: the call's, once known."""
        with self._lock:
            self._call_errors[code] += 1
            if code == LIMIT_EXCEEDED and operation is not None:
                self._limits_exceeded[operation] += 1

    def request(self, operation: str, body: Dict[str, Any]) -> None:
        with self._lock:
            self._requests.append((operation, body))

    def records(self, accepted: int, accepted_bytes: int, rejected: int, errors: Mapping[str, int]) -> None:
        with self._lock:
            self._counts["records_received"] += accepted
            self._counts["bytes_received"] += accepted_bytes
            self._counts["records_rejected"] += rejected
            self._record_errors.update(errors)

    def reset(self) -> None:
        with self._lock:
            for counter in (self._counts, self._calls, self._record_errors, self._call_errors, self._limits_exceeded):
                counter.clear()
            self._requests.clear()
            self._first_put_at = None

    # -- reading -----------------------------------------------------------------------------

    def count(self, name: str) -> int:
        """``put_calls``, ``records_received``, ``bytes_received`` or ``records_rejected``."""
        return self._counts[name]

    @property
    def first_put_at(self) -> Optional[float]:
        return self._first_put_at

    def record_errors(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._record_errors)

    def call_errors(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._call_errors)

    def calls(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._calls)

    def limits_exceeded(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._limits_exceeded)

    def requests(self, operation: Optional[str] = None) -> List[Dict[str, Any]]:
        with self._lock:
            return [body for op, body in self._requests if operation in (None, op)]

    def snapshot(self) -> Dict[str, Any]:
        with self._lock:
            return {
                **{name: self._counts[name]
                   for name in ("put_calls", "records_received", "bytes_received", "records_rejected")},
                "record_errors": dict(self._record_errors),
                "call_errors": dict(self._call_errors),
                "calls": dict(self._calls),
                "limits_exceeded": dict(self._limits_exceeded),
            }
