"""The harness's one reader of /proc: process trees, memory and CPU, and stopping what was started.

Tests, scripts and benchmarks count KPL daemons per JVM, sample resident memory, check that nothing was
left behind, and stop every process they started by its own pid. A pid can be reused once its process
has gone, so whatever signals a process it saw earlier checks its start time first.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from spark_kpl_testing.polling import poll_until

__all__ = [
    "ProcessStat", "age_seconds", "alive", "anonymous_mappings", "cmdline", "daemons_placed_in", "descendants",
    "driver_jvm_pid", "environment", "executable", "jcmd", "live_children", "log_tail", "process_stat",
    "process_table", "runs_from", "stop_process_tree", "stop_processes", "terminate", "threads", "wait_gone",
]

_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")
#: The kernel keeps a command name to 15 characters.
_COMMAND_CHARS = 15


@dataclass(frozen=True)
class ProcessStat:
    """The fields of ``/proc/<pid>/stat`` (or of a thread's ``task/<tid>/stat``) the harness uses."""

    pid: int
    command: str
    state: str
    ppid: int
    pgid: int
    cpu_ticks: int  # user plus system time
    start_ticks: int  # since boot: with the pid, names one process even after the pid is reused
    rss_pages: int

    @property
    def cpu_seconds(self) -> float:
        return self.cpu_ticks / _TICKS

    @property
    def rss_bytes(self) -> int:
        return self.rss_pages * _PAGE

    @property
    def gone(self) -> bool:
        return self.state in ("Z", "X")


def _read_stat(path: str) -> Optional[ProcessStat]:
    try:
        with open(path, "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None  # exited meanwhile
    # The command name is in parentheses and may hold spaces or parentheses: split after the last ')'.
    close = raw.rindex(")")
    fields = raw[close + 2:].split()
    return ProcessStat(pid=int(raw[:raw.index(" ")]), command=raw[raw.index("(") + 1:close], state=fields[0],
                       ppid=int(fields[1]), pgid=int(fields[2]), cpu_ticks=int(fields[11]) + int(fields[12]),
                       start_ticks=int(fields[19]), rss_pages=int(fields[21]))


def process_stat(pid: int) -> Optional[ProcessStat]:
    """``pid``'s stat, or None once it has exited."""
    return _read_stat(f"/proc/{pid}/stat")


def process_table() -> Dict[int, ProcessStat]:
    """Every running process (zombies left out), by pid."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = process_stat(int(entry))
            if found is not None and not found.gone:
                table[found.pid] = found
    return table


def live_children(parent: int, name: str) -> List[int]:
    """Pids of ``parent``'s running children whose command name starts with ``name`` (cut as the kernel
    cuts it)."""
    return sorted(p.pid for p in process_table().values()
                  if p.ppid == parent and p.command.startswith(name[:_COMMAND_CHARS]))


def descendants(*roots: int) -> Dict[int, ProcessStat]:
    """Every running process below ``roots`` (children, their children, ...; not the roots), by pid."""
    table = process_table()
    children: Dict[int, List[int]] = {}
    for process in table.values():
        children.setdefault(process.ppid, []).append(process.pid)
    found: Dict[int, ProcessStat] = {}
    parents = list(roots)
    while parents:
        for child in children.get(parents.pop(), []):
            if child not in found:
                found[child] = table[child]
                parents.append(child)
    return found


def cmdline(pid: int) -> List[str]:
    """``pid``'s arguments; empty once it has exited."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def environment(pid: int) -> Dict[str, str]:
    """``pid``'s environment as it stands in its memory (a program may have rewritten it in place)."""
    entries = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
    return dict(entry.split("=", 1) for entry in entries if "=" in entry)


def anonymous_mappings(pid: int) -> List[Tuple[int, int]]:
    """``pid``'s memory mappings backed by no file, as (start, end) addresses, in address order."""
    mappings = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        if len(fields) == 5:  # a sixth field names the file or [heap], [stack] ...
            start, end = (int(address, 16) for address in fields[0].split("-"))
            mappings.append((start, end))
    return mappings


def alive(pid: int, start_ticks: Optional[int] = None) -> bool:
    """Whether ``pid`` runs (not a zombie) and, given its start time, is still the same process."""
    found = process_stat(pid)
    return found is not None and not found.gone and start_ticks in (None, found.start_ticks)


def executable(pid: int) -> Optional[Path]:
    """The binary ``pid`` runs; None once it has exited, or if it is not ours to read."""
    try:
        return Path(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return None


def runs_from(pid: int, folder: Path) -> bool:
    """Whether ``pid`` runs a binary that lies in ``folder``."""
    binary = executable(pid)
    return binary is not None and str(binary).startswith(f"{folder}{os.sep}")


def daemons_placed_in(parents: Iterable[int], folder: Path) -> List[int]:
    """Pids of the running KPL daemons, children of ``parents``, whose binary lies in ``folder``
    (a write's own ``nativeDir`` tells its daemons from those of other writes)."""
    return [daemon for parent in parents for daemon in live_children(parent, "kinesis_producer")
            if runs_from(daemon, folder)]


def age_seconds(pid: int) -> float:
    """How long ``pid`` has been running."""
    found = process_stat(pid)
    if found is None:
        raise ProcessLookupError(pid)
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - found.start_ticks / _TICKS


def threads(pid: int) -> Dict[int, ProcessStat]:
    """Every thread of ``pid`` by thread id, with its name (``command``) and CPU ticks so far."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        found = _read_stat(f"/proc/{pid}/task/{tid}/stat")
        if found is not None:
            threads[found.pid] = found
    return threads


def terminate(process: "subprocess.Popen", grace: float) -> None:
    """SIGTERM ``process`` itself (not its group), then SIGKILL if it outlives ``grace`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=grace)


def stop_process_tree(process: "subprocess.Popen", timeout: float) -> None:
    """TERM to ``process`` (a JVM's shutdown hooks close its KPL producers), KILL if it outlives
    ``timeout``; then the same to whatever it started that is still running (daemons, workers)."""
    children = {pid: found.start_ticks for pid, found in descendants(process.pid).items()}
    terminate(process, timeout)
    stop_processes(children, timeout)


def stop_processes(pids: Mapping[int, int], timeout: float) -> None:
    """TERM to each process (pid -> start ticks, so a reused pid is left alone), KILL to those that
    outlive ``timeout``."""
    _signal_each(pids, signal.SIGTERM)
    if not poll_until(lambda: not any(alive(p, s) for p, s in pids.items()), timeout):
        _signal_each(pids, signal.SIGKILL)
        poll_until(lambda: not any(alive(p, s) for p, s in pids.items()), 5.0)


def _signal_each(pids: Mapping[int, int], sig: int) -> None:
    for pid, start_ticks in pids.items():
        if alive(pid, start_ticks):
            try:
                os.kill(pid, sig)
            except OSError:
                pass  # exited meanwhile


def jcmd(pid: int, *command: str, timeout: float) -> str:
    """What the JDK's ``jcmd`` answers for JVM ``pid``: the jcmd beside that JVM's own ``java``, run without
    JAVA_TOOL_OPTIONS (jcmd is a JVM too, and would act on those options itself)."""
    java = executable(pid)
    if java is None:
        raise ProcessLookupError(pid)
    env = {name: value for name, value in os.environ.items() if name != "JAVA_TOOL_OPTIONS"}
    return subprocess.run([str(java.with_name("jcmd")), str(pid), *command], capture_output=True, text=True,
                          timeout=timeout, check=True, env=env).stdout


def driver_jvm_pid(spark: Any) -> int:
    """The pid of a SparkSession's driver JVM (in local mode, the tasks' JVM too)."""
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def log_tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` of a process's log file, for an error message."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "<no log>"


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether ``pid`` has exited (or is a zombie) within ``timeout`` seconds."""
    return poll_until(lambda: not alive(pid), timeout)

