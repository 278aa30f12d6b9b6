"""Looking at processes through /proc, to count daemons per JVM and check nothing was left behind."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List


def _stat(pid: int) -> List[str]:
    # The command name is in parentheses and may hold spaces: split after the last ')'.
    raw = Path(f"/proc/{pid}/stat").read_text()
    return [raw[raw.index("(") + 1:raw.rindex(")")]] + raw[raw.rindex(")") + 2:].split()


def live_children(parent: int, name: str) -> List[int]:
    """Pids of ``parent``'s running (not zombie) children whose command name starts with ``name``.

    The kernel truncates command names to 15 characters, so ``name`` should be a prefix of that.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command, state, ppid = _stat(int(entry.name))[:3]
        except (OSError, ValueError, IndexError):
            continue
        if int(ppid) == parent and state != "Z" and command.startswith(name[:15]):
            found.append(int(entry.name))
    return sorted(found)


def age_seconds(pid: int) -> float:
    """How long ``pid`` has been running."""
    started_ticks = int(_stat(pid)[20])  # field 22 of /proc/<pid>/stat
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - started_ticks / os.sysconf("SC_CLK_TCK")


def daemons_placed_in(parents: Iterable[int], folder: Path) -> List[int]:
    """Pids of the running KPL daemons, children of ``parents``, whose binary lies in ``folder``
    (a write's own ``nativeDir`` tells its daemons from those of other writes)."""
    found = []
    for parent in parents:
        for daemon in live_children(parent, "kinesis_producer"):
            try:
                if os.readlink(f"/proc/{daemon}/exe").startswith(f"{folder}{os.sep}"):
                    found.append(daemon)
            except OSError:
                pass  # it exited meanwhile
    return found
