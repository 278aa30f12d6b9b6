"""The machine a test, benchmark or report ran on, as every generated report describes it."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any, Dict

__all__ = ["facts", "summary"]


def _meminfo_mib(field: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) // 1024
    return 0


def facts() -> Dict[str, Any]:
    """CPU model and count, memory, kernel, Python and the load average, now."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown CPU")
    return {"node": platform.node(), "cpu": cpu, "nproc": os.cpu_count(), "memory_mib": _meminfo_mib("MemTotal"),
            "memory_available_mib": _meminfo_mib("MemAvailable"), "kernel": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "loadavg": [round(x, 2) for x in os.getloadavg()]}


def summary() -> str:
    """One line for a report's header: the machine, and how busy it was at the start."""
    host = facts()
    load = ", ".join(f"{x:.1f}" for x in host["loadavg"])
    return (f"{host['node']}: {host['cpu']}, {host['nproc']} CPUs, {host['memory_mib'] / 1024:.1f} GiB RAM, "
            f"{host['kernel']}, Python {host['python']}; load average at start {load}")


def bundled_kpl_version(jar: Path) -> str:
    """The KPL release a built jar of the sink bundles, as its build recorded it."""
    import zipfile
    with zipfile.ZipFile(jar) as z:
        return z.read("sparkkpl/kpl-version.txt").decode().strip()
