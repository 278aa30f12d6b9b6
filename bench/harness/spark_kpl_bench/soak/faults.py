"""The faults the soak brings on, one every so many seconds, in turn."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

from spark_kpl_bench.soak.settings import BURST_SECONDS, FAULT_KINDS, FAULTS_FROM_SECONDS, OUTAGE_SECONDS
from spark_kpl_bench.soak.timeline import Clock, Event
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.polling import poll_until
from spark_kpl_testing.processes import daemons_placed_in


def burst(endpoint: KinesisEndpoint, **faults: Any) -> str:
    endpoint.set_faults(None, **faults)
    time.sleep(BURST_SECONDS)
    endpoint.set_faults(None, **dict.fromkeys(faults, 0.0))
    return f"{', '.join(f'{k}={v}' for k, v in faults.items())} for {BURST_SECONDS} s"


def outage(endpoint: KinesisEndpoint) -> str:
    endpoint.outage(OUTAGE_SECONDS)
    time.sleep(OUTAGE_SECONDS)
    return f"every connection and request reset for {OUTAGE_SECONDS} s"


def daemon_kill(jvm: int, native_dir: Path) -> Callable[[KinesisEndpoint], str]:
    def kill(_: KinesisEndpoint) -> str:
        # Between a producer's close and the next task's acquire there may be no daemon: wait for one.
        daemons = poll_until(lambda: daemons_placed_in([jvm], native_dir), 30, every=0.5)
        if not daemons:
            return "no daemon ran for 30 s: nothing killed"
        for daemon in daemons:
            os.kill(daemon, signal.SIGKILL)
        return f"SIGKILL to daemon pid {', '.join(map(str, daemons))}"

    return kill


def fault_cycle(jvm: int, native_dir: Path) -> List[Tuple[str, Callable[[KinesisEndpoint], str]]]:
    faults: Dict[str, Callable[[KinesisEndpoint], str]] = {
        "5xx burst": lambda ep: burst(ep, http_error_rate=0.3),
        "connection resets": lambda ep: burst(ep, reset_rate=0.3),
        "outage": outage,
        "KPL daemon kill": daemon_kill(jvm, native_dir),
    }
    return [(name, faults[name]) for name in FAULT_KINDS]


def inject_faults(endpoint: KinesisEndpoint, cycle, clock: Clock, every: float, until: float,
                  stop: threading.Event, events: List[Event]) -> None:
    """From FAULTS_FROM_SECONDS on, one fault of ``cycle`` every ``every`` seconds, in turn."""
    for number in range(sys.maxsize):
        due = FAULTS_FROM_SECONDS + number * every
        if due >= until or stop.wait(max(0.0, due - clock.now())):
            return
        name, fault = cycle[number % len(cycle)]
        started = clock.now()
        detail = fault(endpoint)
        events.append(Event(started, name, detail))
        print(f"[{started:6.0f} s] {name}: {detail}", flush=True)
