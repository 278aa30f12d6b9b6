"""The harness's one way to wait for something: poll a condition until it holds or time runs out.

Everything that waits (a server coming up, a process going away, records arriving, a stream settling)
goes through here, so that every wait has a deadline and says what it was waiting for when it fails.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, TypeVar

__all__ = ["poll_until", "wait_for", "wait_until_steady"]

T = TypeVar("T")


def poll_until(condition: Callable[[], Any], timeout: float, every: float = 0.1) -> Any:
    """Calls ``condition`` every ``every`` seconds until it returns something true, and returns that;
    after ``timeout`` seconds returns its last (false) answer."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(min(every, max(0.0, deadline - time.monotonic())))


def wait_for(condition: Callable[[], Any], timeout: float, what: str,
             describe: Optional[Callable[[], str]] = None, every: float = 0.2) -> Any:
    """:func:`poll_until`, failing with ``what`` (and ``describe()``, when given, to say what was found
    instead) if ``condition`` does not hold within ``timeout`` seconds."""
    found = poll_until(condition, timeout, every)
    if not found:
        raise AssertionError(f"timed out waiting for {what}" + (f": {describe()}" if describe else ""))
    return found


def wait_until_steady(reading: Callable[[], T], quiet: float, timeout: float, what: str,
                      every: float = 0.2) -> T:
    """Returns ``reading()`` once it has not changed for ``quiet`` seconds; fails naming ``what`` if it
    keeps changing for ``timeout`` seconds."""
    last, since = reading(), time.monotonic()

    def steady() -> bool:
        nonlocal last, since
        now = reading()
        if now != last:
            last, since = now, time.monotonic()
        return time.monotonic() - since >= quiet

    wait_for(steady, timeout, f"{what} to stop changing for {quiet:.0f} s", lambda: f"last {last!r}", every)
    return last
