"""The soak's clock, the events and per-minute samples it records, and how it prints them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Set

from spark_kpl_bench.soak.settings import MIB


@dataclass
class Event:
    second: float
    fault: str
    detail: str


@dataclass
class Minute:
    jvm_peak: int = 0
    daemon_peak: int = 0
    daemon_pids: Set[int] = field(default_factory=set)
    heap_committed_peak: int = 0
    kinesis_records: int = 0
    bytes: int = 0
    throttled: int = 0


class Clock:
    """Seconds since the query first started; every timeline in the report counts from there."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self.start


def mib(value: int) -> str:
    return f"{value / MIB:.1f}"


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:240]
