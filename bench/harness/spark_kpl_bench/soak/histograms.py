"""Class histograms of the Spark JVM's live heap, and the classes that grew between two."""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass
from typing import Dict, List, Tuple

from spark_kpl_bench.soak.settings import FAULTS_FROM_SECONDS, HISTOGRAM_SECONDS
from spark_kpl_bench.soak.timeline import Clock, first_line, mib
from spark_kpl_testing.processes import jcmd


@dataclass
class Histogram:
    """A class histogram of the JVM's live heap (jcmd GC.class_histogram runs a full GC first):
    class name -> (instances, bytes), summed over class loaders."""

    second: float
    classes: Dict[str, Tuple[int, int]]

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.classes.values())


def class_histogram(jvm: int, clock: Clock) -> Histogram:
    """The JVM's class histogram, by the jcmd of the JDK it runs from (its /proc/<pid>/exe)."""
    second = clock.now()
    out = jcmd(jvm, "GC.class_histogram", timeout=HISTOGRAM_SECONDS)
    classes: Dict[str, Tuple[int, int]] = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0].endswith(":") and fields[0][:-1].isdigit():
            instances, size = classes.get(fields[3], (0, 0))
            classes[fields[3]] = (instances + int(fields[1]), size + int(fields[2]))
    print(f"[{second:6.0f} s] class histogram: {len(classes)} classes, {mib(sum(b for _, b in classes.values()))} "
          "MiB live", flush=True)
    return Histogram(second, classes)


def growers(before: Histogram, after: Histogram, top: int) -> List[Tuple[str, int, int, int]]:
    """The ``top`` classes whose live bytes grew most: (class, instances delta, bytes delta, bytes after)."""
    deltas = []
    for name in set(before.classes) | set(after.classes):
        instances0, bytes0 = before.classes.get(name, (0, 0))
        instances1, bytes1 = after.classes.get(name, (0, 0))
        deltas.append((name, instances1 - instances0, bytes1 - bytes0, bytes1))
    return sorted((d for d in deltas if d[2] > 0), key=lambda d: -d[2])[:top]


def take_histograms(jvm: int, clock: Clock, baseline: int, stop: threading.Event,
                    histograms: Dict[str, Histogram]) -> None:
    """The warm-up histogram (5 s before the first fault) and the baseline one (at the end of the baseline
    minute, so that its full GC falls outside it); the runner takes the last just before the query stops."""
    for name, second in (("warm-up", FAULTS_FROM_SECONDS - 5), ("baseline", baseline * 60)):
        if stop.wait(max(0.0, second - clock.now())):
            return
        try:
            histograms[name] = class_histogram(jvm, clock)
        except (OSError, subprocess.SubprocessError) as error:
            print(f"[{clock.now():6.0f} s] no {name} class histogram: {first_line(error)}", flush=True)
