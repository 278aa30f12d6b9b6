"""What the benchmarks and the soak read of a process, beyond what the tests need: its resident memory and
CPU time now, the processes running from a folder, and the flags that fix a JVM's heap for a memory figure."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

from spark_kpl_testing.processes import process_stat, process_table, runs_from

__all__ = ["cpu_seconds", "fixed_heap_flags", "rss_bytes", "running_from"]

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` now; 0 once it has exited."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def cpu_seconds(pid: int) -> float:
    """CPU time ``pid`` has used so far (user and system); 0 once it has exited."""
    found = process_stat(pid)
    return found.cpu_seconds if found else 0.0


def running_from(folder: Path) -> List[int]:
    """Pids of every running process whose binary lies in ``folder``, whoever its parent is now (a daemon
    its JVM left behind belongs to init)."""
    return sorted(pid for pid in process_table() if runs_from(pid, folder))


def fixed_heap_flags(heap: str) -> List[str]:
    """JVM flags, beside ``-Xmx<heap>``, that commit and touch the whole heap at start: the JVM's RSS is
    then the heap plus native memory, and does not follow how much of the heap G1 chooses to commit."""
    return [f"-Xms{heap}", "-XX:+AlwaysPreTouch"]
