"""Looking at processes through /proc, to count daemons per JVM and check nothing was left behind."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Tuple


def _stat(pid: int) -> List[str]:
    # The command name is in parentheses and may hold spaces: split after the last ')'.
    raw = Path(f"/proc/{pid}/stat").read_text()
    return [raw[raw.index("(") + 1:raw.rindex(")")]] + raw[raw.rindex(")") + 2:].split()


def _live_processes() -> Iterator[Tuple[int, str, int]]:
    """(pid, command name, parent pid) of every process not a zombie."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command, state, ppid = _stat(int(entry.name))[:3]
        except (OSError, ValueError, IndexError):
            continue
        if state != "Z":
            yield int(entry.name), command, int(ppid)


def live_children(parent: int, name: str) -> List[int]:
    """Pids of ``parent``'s running (not zombie) children whose command name starts with ``name``.

    The kernel truncates command names to 15 characters, so ``name`` should be a prefix of that.
    """
    return sorted(pid for pid, command, ppid in _live_processes()
                  if ppid == parent and command.startswith(name[:15]))


def descendants(root: int) -> Dict[int, str]:
    """Every live process below ``root`` (children, their children, ...): pid -> command name."""
    table = list(_live_processes())
    found: Dict[int, str] = {}
    parents = [root]
    while parents:
        parent = parents.pop()
        for pid, command, ppid in table:
            if ppid == parent and pid not in found:
                found[pid] = command
                parents.append(pid)
    return found


def running_from(folder: Path) -> List[int]:
    """Pids of every live process whose binary lies in ``folder``, whoever its parent is now (a daemon
    its JVM left behind belongs to init)."""
    return sorted(pid for pid, _, _ in _live_processes() if _runs_from(pid, folder))


def _runs_from(pid: int, folder: Path) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/exe").startswith(f"{folder}{os.sep}")
    except OSError:
        return False  # exited meanwhile, or not ours to read


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` now; 0 once it has exited."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def age_seconds(pid: int) -> float:
    """How long ``pid`` has been running."""
    started_ticks = int(_stat(pid)[20])  # field 22 of /proc/<pid>/stat
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - started_ticks / os.sysconf("SC_CLK_TCK")


def daemons_placed_in(parents: Iterable[int], folder: Path) -> List[int]:
    """Pids of the running KPL daemons, children of ``parents``, whose binary lies in ``folder``
    (a write's own ``nativeDir`` tells its daemons from those of other writes)."""
    return [daemon for parent in parents for daemon in live_children(parent, "kinesis_producer")
            if _runs_from(daemon, folder)]
