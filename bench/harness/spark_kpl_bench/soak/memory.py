"""Memory per second of the Spark JVM and its KPL daemons, and the rule that judges it flat."""

from __future__ import annotations

import math
import statistics
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List

from spark_kpl_bench.processes import rss_bytes
from spark_kpl_bench.soak.settings import FAULT_KINDS, FAULTS_FROM_SECONDS, FLAT_WITHIN, MIB, SETTLE_SECONDS
from spark_kpl_bench.soak.timeline import Clock, Minute, mib
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.processes import daemons_placed_in


def heap_reader(spark) -> Callable[[], int]:
    """The heap the Spark JVM has committed (with -Xms = -Xmx, its whole heap from the start). Its live set
    is measured by the class histograms' full GCs, not here: the heap pools' usage after their last
    collection counts survivor space and the old generation as of its last mixed or full collection,
    garbage included, so it jumps with the collector's timing (28, 5, then 118 MiB over minutes of a
    development run whose full-GC live set stayed near 80 MiB)."""
    management = spark.sparkContext._jvm.java.lang.management.ManagementFactory

    def read() -> int:
        return int(management.getMemoryMXBean().getHeapMemoryUsage().getCommitted())

    return read


def sample_each_second(endpoint: KinesisEndpoint, jvm: int, heap: Callable[[], int], native_dir: Path,
                       clock: Clock, minutes: int, stop: threading.Event) -> List[Minute]:
    """Peak RSS of the JVM and of its daemons (summed: during a restart the old one may still exit),
    the JVM's heap, and what the endpoint took, per minute of the run."""
    table = [Minute() for _ in range(minutes)]
    last = endpoint.stats()
    while not stop.wait(1.0):
        index = int(clock.now() // 60)
        if index >= minutes:
            break
        if index and table[index - 1].jvm_peak and not table[index].jvm_peak:
            print(f"[{clock.now():6.0f} s] minute {index}: {progress(table[index - 1])}", flush=True)
        minute = table[index]
        daemons = daemons_placed_in([jvm], native_dir)
        minute.jvm_peak = max(minute.jvm_peak, rss_bytes(jvm))
        minute.daemon_peak = max(minute.daemon_peak, sum(rss_bytes(d) for d in daemons))
        minute.daemon_pids.update(daemons)
        minute.heap_committed_peak = max(minute.heap_committed_peak, heap())
        stats = endpoint.stats()
        minute.kinesis_records += stats["records_received"] - last["records_received"]
        minute.bytes += stats["bytes_received"] - last["bytes_received"]
        minute.throttled += (stats["record_errors"].get("ProvisionedThroughputExceededException", 0)
                             - last["record_errors"].get("ProvisionedThroughputExceededException", 0))
        last = stats
    return table


def progress(minute: Minute) -> str:
    return (f"JVM RSS {mib(minute.jvm_peak)} MiB (heap committed {mib(minute.heap_committed_peak)}), "
            f"daemon RSS {mib(minute.daemon_peak)} MiB, "
            f"{minute.bytes / MIB / 60:.2f} MiB/s stored")


def baseline_minute(fault_every: float) -> int:
    """The (1-based) minute whose peak is the baseline: the first whole minute that starts SETTLE_SECONDS
    after the first cycle of faults has ended (its last fault, the daemon kill, one fault period past).
    With the defaults (faults every 60 s from second 60) the cycle ends at second 300 and the baseline is
    minute 7 (seconds 360-420); with faults every 25 s, minute 5."""
    first_cycle_ends = FAULTS_FROM_SECONDS + len(FAULT_KINDS) * fault_every
    return math.ceil((first_cycle_ends + SETTLE_SECONDS) / 60) + 1


def late_minutes(minutes: int) -> range:
    """The (1-based) minutes of the run's last quarter, at least one."""
    late = max(1, minutes // 4)
    return range(minutes - late + 1, minutes + 1)


@dataclass
class Flatness:
    """Flat: the median of the per-minute peaks of the last quarter of the run is within FLAT_WITHIN of
    the baseline minute's peak (on the plateau: see baseline_minute). A leak lifts every late minute, so
    their median; a single minute's burst (the in-flight records of a retried task, a catch-up after an
    outage) or a young daemon's first minutes after a kill do not decide alone."""

    baseline_minute: int
    baseline: int
    last_minutes: range
    late_median: int
    highest_late: int

    @property
    def ratio(self) -> float:
        return self.late_median / self.baseline if self.baseline else math.inf

    @property
    def flat(self) -> bool:
        return abs(self.ratio - 1) <= FLAT_WITHIN


def flatness(peaks: List[int], baseline: int) -> Flatness:
    last = late_minutes(len(peaks))
    late_peaks = [peaks[m - 1] for m in last]
    return Flatness(baseline, peaks[baseline - 1], last, int(statistics.median(late_peaks)), max(late_peaks))
