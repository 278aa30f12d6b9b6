"""A soak: a Structured Streaming query writes through the sink at Kinesis's quota for
``--minutes`` while faults come and go; writes docs/soak.md.

``scripts/soak.sh [--minutes 20] [--fault-every 60]`` (or ``.venv/bin/python scripts/soak.py ...``).

The query (``rate-micro-batch`` source, ``recordId=prefix``, ``failOnError=true``, ``local[2,4]``) writes
numbered records ``soak-<n>`` through the real KPL into the project's own endpoint on 127.0.0.1, whose
one shard takes what a Kinesis shard takes and throttles the rest. After a one-minute warm-up, one fault
every ``--fault-every`` seconds, in turn: a 5xx burst, connection resets, a short outage, a SIGKILL to the
KPL daemon. Every second the resident memory of the Spark JVM and of its KPL daemon(s) is read; at the end
the stream is read back, the JVM is stopped, and what it left behind is counted.

Memory is judged on the plateau, by a rule fixed before the run: the baseline is the peak of the first
whole minute that starts a minute after the first cycle of faults has ended (so the daemon then running is
one that replaced a killed one and has been through a retry burst, and the JVM has run every fault's
code path), and a process is *flat* when the median of the per-minute peaks of the run's last quarter is
within 10 % of that baseline. The JVM runs with its heap fixed and resident from the start (``-Xms`` =
``-Xmx``, ``-XX:+AlwaysPreTouch``), so its RSS moves only with native memory. A class histogram of the JVM
(``jcmd GC.class_histogram``, after a full GC) is taken at the end of the baseline minute and again just
before the query stops; the report lists the classes whose live bytes grew most between the two.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

REPO = Path(__file__).resolve().parents[1]

from spark_kpl_testing.env import apply_loopback_env  # noqa: E402

apply_loopback_env()

import spark_kpl  # noqa: E402
from spark_kpl import dedup  # noqa: E402
from spark_kpl_testing.endpoint import (  # noqa: E402
    KINESIS_SHARD_BYTES_PER_SECOND,
    KINESIS_SHARD_RECORDS_PER_SECOND,
    Faults,
    KinesisEndpoint,
)
from spark_kpl_testing.host import summary  # noqa: E402
from spark_kpl_testing.polling import poll_until  # noqa: E402
from spark_kpl_testing.processes import (  # noqa: E402
    cmdline,
    daemons_placed_in,
    driver_jvm_pid,
    fixed_heap_flags,
    jcmd,
    rss_bytes,
    running_from,
    stop_process_tree,
)

#: Two task threads, and Spark's task retry (4 attempts, as spark.task.maxFailures on a cluster).
MASTER = "local[2,4]"
#: The driver JVM's heap (spark.driver.memory becomes its -Xmx; local mode, so it is the executor's too).
DRIVER_MEMORY = "1g"
#: As a long-running streaming job's JVM is run: the heap at its maximum from the start (-Xms = -Xmx), and
#: every page of it touched at start (AlwaysPreTouch), so the heap is resident from the first second. The
#: JVM's RSS is then the fixed heap plus native memory (metaspace, code cache, thread stacks, direct
#: buffers, malloc), and its growth is native growth, not G1 taking pages it was always allowed to take
#: (the run before this rule: RSS 543 -> 874 MiB in one step at minute 10, heap committed 242 -> 567 MiB,
#: live heap flat). spark.driver.extraJavaOptions reaches the local-mode JVM's command line through
#: spark-submit, which refuses -Xmx there; main() checks the flags on /proc/<pid>/cmdline.
DRIVER_JAVA_OPTIONS = " ".join(fixed_heap_flags(DRIVER_MEMORY))
DRIVER_HEAP_FLAGS = (f"-Xmx{DRIVER_MEMORY}", *fixed_heap_flags(DRIVER_MEMORY))
STREAM, SHARDS = "soak", 1
PARTITIONS = 2
RECORD_BYTES = 1000
#: About 30 s of a shard's quota per micro-batch: more than the sink's 16 MiB queue cap, so backpressure works.
ROWS_PER_BATCH = 30_000
WARM_UP_MINUTES = 1  # JIT, class loading, the daemon's first shard map: not the steady state
FAULTS_FROM_SECONDS = WARM_UP_MINUTES * 60  # the faults start right after the warm-up
FAULT_KINDS = ("5xx burst", "connection resets", "outage", "KPL daemon kill")  # one cycle, in this order
#: After the first cycle of faults has ended, a minute more before the baseline minute starts: the daemon
#: that replaced the killed one has then been through a retry burst (the next cycle's first fault), and
#: the tasks the kill failed have been retried. Before that, a daemon's RSS is below its plateau: it grows
#: through its first retry burst, and a kill replaces it by a young one that grows again.
SETTLE_SECONDS = 60
BURST_SECONDS = 20
OUTAGE_SECONDS = 10  # shorter than RecordTtl (30 s), but records queued behind the throttle may still expire
#: Flat: the median of the last quarter's per-minute peaks within 10 % of the baseline minute's peak.
FLAT_WITHIN = 0.10
MAX_RESTARTS, RESTART_PAUSE_SECONDS = 10, 5.0
JVM_EXIT_SECONDS = 60
HISTOGRAM_SECONDS = 120  # jcmd's time limit for a class histogram (a full GC of the 1g heap, then the count)
TOP_GROWERS = 15
MIB = 1 << 20


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


# -- faults ----------------------------------------------------------------------------------------


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


# -- memory ----------------------------------------------------------------------------------------


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


# -- what the heap holds ---------------------------------------------------------------------------


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


# -- the query ---------------------------------------------------------------------------------------


def start_query(spark, endpoint: KinesisEndpoint, checkpoint: Path, native_dir: Path, rows_per_batch: int):
    from pyspark.sql import functions as F

    rows = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
            .option("numPartitions", PARTITIONS).load()
            .select(F.rpad(F.format_string("soak-%d ", "value"), RECORD_BYTES, ".").alias("data")))
    return (rows.writeStream.format("kpl").option("checkpointLocation", str(checkpoint))
            .option("streamName", STREAM).option("recordId", "prefix").option("failOnError", "true")
            .option("nativeDir", str(native_dir)).options(**endpoint.kpl_options()).start())


def run_query(start: Callable[[], Any], clock: Clock, until: float, restarts: List[Event],
              run_ids: List[str], interrupted: threading.Event, before_stop: Callable[[], None]) -> None:
    """Runs the query until ``until``; when it fails (a batch's tasks failed 4 times), restarts it from
    its checkpoint after a pause, up to MAX_RESTARTS times, as a job supervisor with a retry policy
    would: the failed batch was not committed, so the restart sends it again. At ``until`` calls
    ``before_stop`` (the query still running), then stops it, mid-batch."""
    from pyspark.errors import StreamingQueryException

    while clock.now() < until:
        query = start()
        run_ids.append(str(query.runId))
        try:
            while not query.awaitTermination(1.0):
                if interrupted.is_set():
                    raise KeyboardInterrupt
                if clock.now() >= until:
                    before_stop()
                    query.stop()
                    return
            raise RuntimeError("the query ended by itself")
        except StreamingQueryException as error:
            restarts.append(Event(clock.now(), "query restarted from its checkpoint", first_line(error)))
            print(f"[{clock.now():6.0f} s] query failed: {first_line(error)}", flush=True)
            if len(restarts) > MAX_RESTARTS:
                raise
            time.sleep(RESTART_PAUSE_SECONDS)


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:240]


def committed_rows(checkpoint: Path, rows_per_batch: int) -> Tuple[int, int]:
    """(batches committed, rows they hold): the source offset logged for the last committed batch. A
    batch the stop interrupted is not among them; a restart would send it again."""
    commits = [int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit()]
    if not commits:
        return 0, 0
    last = max(commits)
    offset = json.loads((checkpoint / "offsets" / str(last)).read_text().splitlines()[-1])
    rows = int(offset["offset"])
    if rows != (last + 1) * rows_per_batch:
        raise AssertionError(f"batch {last} ends at row {rows}, not {(last + 1) * rows_per_batch}")
    return last + 1, rows


def failed_task_attempts(spark, run_ids: List[str]) -> int:
    """Task attempts that failed in the query's jobs (a streaming run's job group is its run id)."""
    tracker = spark.sparkContext.statusTracker()
    stages = (stage for run in run_ids for job in tracker.getJobIdsForGroup(run)
              for stage in (tracker.getJobInfo(job).stageIds if tracker.getJobInfo(job) else []))
    return sum(info.numFailedTasks for info in map(tracker.getStageInfo, stages) if info)


# -- reading back ---------------------------------------------------------------------------------


@dataclass
class Delivery:
    batches: int
    rows: int
    read: int = 0
    lost: int = 0
    duplicates: int = 0
    undetectable: int = 0  # rows whose copies carry different record ids
    interrupted_batch: int = 0  # distinct rows past the last committed batch
    foreign: int = 0  # records that are no row of the query


def read_back(endpoint: KinesisEndpoint, batches: int, rows: int) -> Delivery:
    delivery = Delivery(batches, rows)
    copies: Counter = Counter()
    ids: Dict[int, Set[dedup.RecordId]] = {}
    for record in endpoint.records(STREAM):
        delivery.read += 1
        try:
            row = int(dedup.strip(record.data).split(b" ", 1)[0].removeprefix(b"soak-"))
        except ValueError:
            delivery.foreign += 1
            continue
        copies[row] += 1
        ids.setdefault(row, set()).add(dedup.record_id(record.data))
    delivery.lost = sum(1 for row in range(rows) if row not in copies)
    delivery.duplicates = sum(copies.values()) - len(copies)
    delivery.undetectable = sum(1 for found in ids.values() if len(found) > 1)
    delivery.interrupted_batch = sum(1 for row in copies if row >= rows)
    return delivery


# -- the end -------------------------------------------------------------------------------------


@dataclass
class Leftovers:
    daemons: List[int]
    pipe_folders: List[str]


def stop_spark(spark, native_dir: Path) -> Leftovers:
    """Stops the Spark JVM as a cluster manager stops an executor (SIGTERM: its shutdown hooks close the
    KPL producers), counts the daemons and producer pipe folders it left in ``native_dir``, then stops
    whatever is still running."""
    jvm = spark.sparkContext._gateway.proc
    try:
        spark.stop()
    except Exception as error:  # a py4j call that Ctrl-C interrupted leaves the gateway unusable
        print(f"spark.stop() failed ({first_line(error)}); stopping the JVM by its pid", flush=True)
    jvm.send_signal(signal.SIGTERM)
    try:
        jvm.wait(JVM_EXIT_SECONDS)
    except subprocess.TimeoutExpired:
        print(f"the JVM outlived SIGTERM by {JVM_EXIT_SECONDS} s", flush=True)
    # Counted before stop_process_tree, which would stop a left daemon and hide it.
    daemons = running_from(native_dir)
    folders = sorted(p.name for p in native_dir.glob("producer-*")) if native_dir.exists() else []
    stop_process_tree(jvm, 10)
    for daemon in daemons:
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon, signal.SIGKILL)
    return Leftovers(daemons, folders)


# -- the report ------------------------------------------------------------------------------------


def mib(value: int) -> str:
    return f"{value / MIB:.1f}"


#: What a class in a histogram belongs to, by name prefix (the first that matches).
CLASS_OWNERS = (
    ("org.apache.spark.status.", "Spark's status store: jobs, stages, tasks kept for the status API and UI, "
                                 "kept with the UI off too; bounded by spark.ui.retainedJobs/Stages/Tasks"),
    ("org.apache.spark.sql.execution.ui.", "Spark SQL's executions kept for the UI; bounded by "
                                           "spark.sql.ui.retainedExecutions"),
    ("org.apache.spark.sql.streaming.", "streaming query progress; bounded by "
                                        "spark.sql.streaming.numRecentProgressUpdates"),
    ("org.apache.spark.scheduler.AccumulableInfo", "accumulator values of stages and tasks in the status store"),
    ("com.codahale.metrics.", "Dropwizard metrics: samples of Spark's timers and histograms (an exponentially "
                              "decaying reservoir keeps at most 1028 each)"),
    ("sparkkpl.shaded.software.amazon.kinesis.producer.", "the KPL's Java side (bundled in the sink's jar)"),
    ("sparkkpl.shaded.", "a library bundled in the sink's jar"),
    ("sparkkpl.", "the sink"),
    ("org.apache.spark.", "Spark"),
    ("scala.", "Scala collections and options (of whichever owner)"),
    ("java.", "JDK type (of whichever owner: see the classes beside it)"),
    ("[", "array (of whichever owner: see the classes beside it)"),
)


def owner(name: str) -> str:
    return next((what for prefix, what in CLASS_OWNERS if name.startswith(prefix)), "")


def render_histograms(histograms: Dict[str, Histogram]) -> List[str]:
    lines = ["## What the JVM's heap holds: class histograms", ""]
    taken = [(name, histograms[name]) for name in ("warm-up", "baseline", "end") if name in histograms]
    if not taken:
        return lines + ["None taken: jcmd failed or the run ended first.", ""]
    lines += [
        "`jcmd <pid> GC.class_histogram` (a full GC, then the live objects counted per class): "
        + "; ".join(f"{name} at second {h.second:.0f}" for name, h in taken)
        + " (the warm-up's 5 s before the first fault, the baseline's at the end of the baseline minute, the "
        "end's just before the query stopped). Live heap after the full GC, MiB: "
        + " -> ".join(f"{mib(h.total_bytes)} ({name})" for name, h in taken) + ".",
        "",
    ]
    for (name0, before), (name1, after) in zip(taken, taken[1:]):
        grew = growers(before, after, TOP_GROWERS)
        lines += [
            f"The {len(grew)} classes whose live bytes grew most from the {name0} histogram to the {name1} one "
            f"(all classes together: {(after.total_bytes - before.total_bytes) / MIB:+.1f} MiB):",
            "",
            f"| class | instances, {name0} | instances, {name1} | instances delta | bytes delta (KiB) "
            f"| bytes, {name1} (KiB) | what it is |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for cls, instances, size, size_after in grew:
            lines.append(f"| `{cls}` | {before.classes.get(cls, (0, 0))[0]:,} | {after.classes.get(cls, (0, 0))[0]:,} "
                         f"| {instances:+,} | {size / 1024:+,.1f} | {size_after / 1024:,.1f} | {owner(cls)} |")
        lines.append("")
    return lines


def render(command: str, started: str, host: str, spark_version: str, minutes: List[Minute], events: List[Event],
           restarts: List[Event], delivery: Delivery, failed_attempts: int, leftovers: Leftovers, baseline: int,
           fault_every: float, flags: List[str], histograms: Dict[str, Histogram]) -> str:
    jvm = flatness([m.jvm_peak for m in minutes], baseline)
    daemon = flatness([m.daemon_peak for m in minutes], baseline)
    late = f"minutes {jvm.last_minutes.start}-{jvm.last_minutes.stop - 1}"
    rule = f"late median within {FLAT_WITHIN:.0%} of minute {baseline}"
    verdicts = {
        "no record lost": delivery.lost == 0,
        "every duplicate detectable by record id": delivery.undetectable == 0 and delivery.foreign == 0,
        f"JVM RSS flat ({rule})": jvm.flat,
        f"daemon RSS flat ({rule})": daemon.flat,
        "no daemon or pipe folder left": not (leftovers.daemons or leftovers.pipe_folders),
        "every fault injected": {e.fault for e in events} >= set(FAULT_KINDS),
    }
    first_cycle_ends = FAULTS_FROM_SECONDS + len(FAULT_KINDS) * fault_every
    lines = [
        "# Soak: a streaming query at Kinesis's quota while faults come and go",
        "",
        f"Generated by `{command}` on {started} on {host}; Spark {spark_version}, master `{MASTER}`, "
        "KPL 1.0.9. Never edited by hand: re-run the command to update it.",
        "",
        f"**Verdict: {'PASS' if all(verdicts.values()) else 'FAIL'}** ("
        + "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in verdicts.items()) + ").",
        "",
        "## Set-up",
        "",
        f"- A Structured Streaming query: source `rate-micro-batch` ({ROWS_PER_BATCH:,} rows a micro-batch in "
        f"{PARTITIONS} Spark partitions), each row a record `soak-<n>` padded to {RECORD_BYTES} bytes, written "
        f"with `format(\"kpl\")`, `recordId=prefix` and `failOnError=true`, default trigger (the next batch "
        "starts as soon as one commits), so the query offers all the stream can take.",
        f"- The stream: {SHARDS} shard on the project's endpoint (`spark_kpl_testing.endpoint.KinesisEndpoint`, "
        f"TLS on 127.0.0.1), which throttles it at Kinesis's own per-shard limits "
        f"({KINESIS_SHARD_RECORDS_PER_SECOND:,} records/s, {KINESIS_SHARD_BYTES_PER_SECOND // MIB} MiB/s) "
        "for the whole run: the KPL sends up to 150 % of that (its `RateLimit`), so throttling is constant.",
        f"- Faults, from second {FAULTS_FROM_SECONDS} on (after a {WARM_UP_MINUTES}-minute warm-up: JIT, class "
        f"loading, the daemon's first shard map), one every {fault_every:g} s in turn: a 5xx burst (30 % of "
        f"PutRecords calls answered 500/503 for {BURST_SECONDS} s), connection resets (30 % of calls for "
        f"{BURST_SECONDS} s), an outage ({OUTAGE_SECONDS} s, shorter than `RecordTtl` 30 s), a SIGKILL to the KPL "
        "daemon.",
        "- Failures, handled as a production job would: `failOnError=true` (a record Kinesis finally refuses "
        "fails its task; nothing is dead-lettered, so *lost* must be 0 outright); a daemon kill fails the tasks "
        "whose records it held and Spark retries them (4 attempts); a batch whose tasks fail 4 times fails the "
        "query, and the script restarts it from its checkpoint, as a job supervisor with a retry policy "
        "would. The uncommitted batch is sent again: at-least-once, duplicates carry the same record id.",
        "- Memory: every second, the resident set (RSS, from /proc) of the Spark JVM (driver and local-mode "
        "executor) and of its KPL daemons, summed; each minute's peak is below.",
        f"- The JVM's heap, as on its command line (/proc/<pid>/cmdline): `{' '.join(flags)}` "
        f"(`spark.driver.memory={DRIVER_MEMORY}`, `spark.driver.extraJavaOptions={DRIVER_JAVA_OPTIONS}`). As a "
        "long-running streaming job's JVM is run, the heap is fixed at its maximum from the start, and "
        "`AlwaysPreTouch` touches every page of it at start, so the whole heap is resident from the first "
        "second: the JVM's RSS is the fixed heap plus native memory, and its growth is growth of native memory "
        "(metaspace, code cache, thread stacks, direct buffers, malloc), not G1 taking pages it was always "
        "allowed to take. Without these flags the run before this one stepped 543 -> 874 MiB at the second "
        "daemon kill, when G1 grew its committed heap 242 -> 567 MiB while the live heap stayed flat: that "
        "measured heap sizing, not a leak. The price: 10 % of the RSS is now about "
        f"{FLAT_WITHIN * jvm.baseline / MIB:.0f} MiB of native growth, "
        "so the heap's contents are judged apart, by the class histograms below. *Beyond the heap* is the "
        "minute's peak RSS less the heap committed (all of it resident): native memory, shown beside the "
        "verdict but not judged apart. The run before this one also showed a per-minute *live after GC*, the "
        "heap pools' usage after their last collection; it is no live set (it counts survivor space, whose "
        "size follows the young generation's, and the old generation as of its last mixed or full "
        "collection, garbage included), so this report measures the live set by full GCs instead.",
        f"- *Flat* means: the median of the per-minute peaks of the last quarter of the run ({late}) is within "
        f"{FLAT_WITHIN:.0%} of the peak of minute {baseline}, the baseline. The baseline is on the plateau: the "
        f"first whole minute that starts {SETTLE_SECONDS} s after the first cycle of faults has ended (its last "
        f"fault, the daemon kill, at second {FAULTS_FROM_SECONDS + (len(FAULT_KINDS) - 1) * fault_every:g}, "
        f"its period over at second {first_cycle_ends:g}). By then the JVM has run every fault's code path, the "
        "tasks the kill failed have been retried, and the daemon running is one that replaced a killed daemon "
        "and has been through a retry burst. A daemon grows through its first retry bursts to a plateau, and "
        "each kill replaces it by a young one that grows again (the run before this rule: 79 MiB at minute 2, "
        "before any fault, then 87-110 MiB), so a baseline taken before the faults measures the warm-up, not "
        "a leak. The rule was fixed before the run. The median of the last minutes, not each minute: the "
        "daemon's RSS follows the records in flight and its age, so one minute's burst (a retried task "
        "re-sending its records, a catch-up after an outage) or a young daemon's minute lifts or lowers that "
        "minute alone, while a leak lifts every late minute. The highest late peak is shown beside it; the "
        "pids column shows which minutes ran on which daemon. A limit of this rule: a replacement daemon "
        "reaches, within seconds, a level set by the retry burst its start meets, and keeps it for its life "
        "(in the run of 2026-11-24 07:18, 176-184 MiB after kills that met about 3,000 throttled records in "
        "their minute, 88-103 MiB after kills that met about 820). So the daemon's ratio also depends on which "
        "daemons the baseline minute and the last minutes land on; growth within each daemon's life, from its "
        "first whole minute, is the sharper test for a leak.",
        "",
        "## Memory and throughput per minute",
        "",
        f"| minute | JVM peak RSS (MiB) | vs minute {baseline} | JVM heap committed (MiB) | JVM beyond the heap (MiB) "
        f"| daemon peak RSS (MiB) | vs minute {baseline} | daemon pids seen "
        "| MiB/s stored | Kinesis records/s stored | records throttled | faults that minute |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for number, minute in enumerate(minutes, start=1):
        faults = [e.fault for e in events + restarts if int(e.second // 60) == number - 1]
        role = (" (warm-up)" if number <= WARM_UP_MINUTES else " **(baseline)**" if number == baseline
                else " (late)" if number in jvm.last_minutes else "")
        lines.append(
            f"| {number}{role} | {mib(minute.jvm_peak)} | {minute.jvm_peak / max(jvm.baseline, 1):.2f} "
            f"| {mib(minute.heap_committed_peak)} | {mib(minute.jvm_peak - minute.heap_committed_peak)} "
            f"| {mib(minute.daemon_peak)} | {minute.daemon_peak / max(daemon.baseline, 1):.2f} "
            f"| {', '.join(map(str, sorted(minute.daemon_pids))) or 'none'} | {minute.bytes / MIB / 60:.2f} "
            f"| {minute.kinesis_records / 60:.1f} | {minute.throttled:,} | {', '.join(faults) or '-'} |")
    lines += [
        "",
        f"| process | baseline: minute {baseline} peak (MiB) | median peak, {late} (MiB) | ratio "
        f"| flat within {FLAT_WITHIN:.0%} | highest peak, {late} (MiB) |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for name, measure in (("Spark JVM", jvm), ("KPL daemon(s)", daemon)):
        lines.append(f"| {name} | {mib(measure.baseline)} | {mib(measure.late_median)} | {measure.ratio:.3f} "
                     f"| {'yes' if measure.flat else 'NO'} | {mib(measure.highest_late)} |")
    native = flatness([m.jvm_peak - m.heap_committed_peak for m in minutes], baseline)
    lines.append(f"| Spark JVM beyond the heap (native; shown, not judged) | {mib(native.baseline)} "
                 f"| {mib(native.late_median)} | {native.ratio:.3f} | - | {mib(native.highest_late)} |")
    lines += ["", *render_histograms(histograms)]
    lines += [
        "## Records",
        "",
        f"- Committed: {delivery.batches} micro-batches, rows 0 to {delivery.rows - 1:,} ({delivery.rows:,} records).",
        f"- Read back from the stream: {delivery.read:,} records.",
        f"- **Lost** (a committed row not in the stream): {delivery.lost:,}. Dead-lettered: 0 (`failOnError=true`).",
        f"- **Duplicates** (copies beyond the first): {delivery.duplicates:,}; rows whose copies carry different "
        f"record ids: {delivery.undetectable:,} (0: every duplicate is detectable, `spark_kpl.dedup` drops it); "
        f"records that are no row of the query: {delivery.foreign:,}.",
        f"- Rows of the batch the final stop interrupted (past the last commit; a restart would send them "
        f"again): {delivery.interrupted_batch:,}.",
        f"- Failed task attempts (retried by Spark): {failed_attempts}; query restarts from the checkpoint: "
        f"{len(restarts)}.",
        "",
        "## Left behind once the JVM exited",
        "",
        f"- KPL daemons still running from the run's `nativeDir`: {len(leftovers.daemons)}"
        + (f" (pids {', '.join(map(str, leftovers.daemons))}, then killed by the script)" if leftovers.daemons
           else "") + ".",
        f"- Producer pipe folders (`producer-*`) left in it: {len(leftovers.pipe_folders)}"
        + (f" ({', '.join(leftovers.pipe_folders)})" if leftovers.pipe_folders else "") + ".",
        "",
        "## Faults, as injected",
        "",
        "| second | fault | what |",
        "|---:|---|---|",
    ]
    for event in sorted(events + restarts, key=lambda e: e.second):
        lines.append(f"| {event.second:.0f} | {event.fault} | {event.detail.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


# -- main ------------------------------------------------------------------------------------------


def start_spark():
    from pyspark.sql import SparkSession

    builder = spark_kpl.configure(SparkSession.builder.master(MASTER).appName("spark-kpl-soak"))
    for key, value in {"spark.driver.memory": DRIVER_MEMORY, "spark.driver.extraJavaOptions": DRIVER_JAVA_OPTIONS,
                       "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def heap_flags(jvm: int) -> List[str]:
    """The heap flags on the JVM's command line (/proc/<pid>/cmdline), as the JVM was really started;
    raises if one of DRIVER_HEAP_FLAGS is missing (the report would then describe a JVM that did not run)."""
    found = [a for a in cmdline(jvm) if a.startswith(("-Xms", "-Xmx", "-XX:+AlwaysPreTouch"))]
    missing = [flag for flag in DRIVER_HEAP_FLAGS if flag not in found]
    if missing:
        raise RuntimeError(f"the Spark JVM (pid {jvm}) runs without {', '.join(missing)}: its heap flags are {found}")
    return found


def take_histograms(jvm: int, clock: Clock, baseline: int, stop: threading.Event,
                    histograms: Dict[str, Histogram]) -> None:
    """The warm-up histogram (5 s before the first fault) and the baseline one (at the end of the baseline
    minute, so that its full GC falls outside it); main() takes the last just before the query stops."""
    for name, second in (("warm-up", FAULTS_FROM_SECONDS - 5), ("baseline", baseline * 60)):
        if stop.wait(max(0.0, second - clock.now())):
            return
        try:
            histograms[name] = class_histogram(jvm, clock)
        except (OSError, subprocess.SubprocessError) as error:
            print(f"[{clock.now():6.0f} s] no {name} class histogram: {first_line(error)}", flush=True)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=20)
    parser.add_argument("--fault-every", type=float, default=60.0, help="seconds between two faults")
    parser.add_argument("--rows-per-batch", type=int, default=ROWS_PER_BATCH)
    parser.add_argument("--out", default=str(REPO / "docs" / "soak.md"))
    args = parser.parse_args(argv)
    baseline = baseline_minute(args.fault_every)
    if late_minutes(args.minutes).start <= baseline:
        shortest = next(m for m in range(baseline, 10 * baseline + 10) if late_minutes(m).start > baseline)
        parser.error(f"--minutes must be at least {shortest} with --fault-every {args.fault_every:g}: the baseline "
                     f"is minute {baseline} (a minute after the first cycle of faults), and the last quarter "
                     "of the run must come after it")
    command = " ".join(["scripts/soak.sh", *(argv if argv is not None else sys.argv[1:])])
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = summary()
    # Ctrl-C and SIGTERM are noted, and acted on between two calls into the JVM: an exception raised inside
    # a py4j call breaks the gateway that the clean-up below needs.
    interrupted = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: interrupted.set())

    work = Path(tempfile.mkdtemp(prefix="spark-kpl-soak-"))
    native_dir, checkpoint = work / "native", work / "checkpoint"
    endpoint = KinesisEndpoint({STREAM: SHARDS}, faults=Faults.kinesis_limits()).start()
    spark = None
    stop = threading.Event()
    threads: List[threading.Thread] = []
    try:
        spark = start_spark()
        # PySpark's own SIGINT handler calls into the JVM from inside a call: the note above instead.
        signal.signal(signal.SIGINT, lambda *_: interrupted.set())
        jvm = driver_jvm_pid(spark)
        flags = heap_flags(jvm)
        print(f"Spark JVM pid {jvm}: {' '.join(flags)}; baseline minute {baseline}, last quarter minutes "
              f"{late_minutes(args.minutes).start}-{args.minutes}", flush=True)
        until = args.minutes * 60.0
        clock = Clock()
        events: List[Event] = []
        restarts: List[Event] = []
        run_ids: List[str] = []
        sampled: Dict[str, List[Minute]] = {}
        histograms: Dict[str, Histogram] = {}

        def final_histogram() -> None:
            try:
                histograms["end"] = class_histogram(jvm, clock)
            except (OSError, subprocess.SubprocessError) as error:
                print(f"[{clock.now():6.0f} s] no final class histogram: {first_line(error)}", flush=True)

        def sample() -> None:
            sampled["minutes"] = sample_each_second(endpoint, jvm, heap_reader(spark), native_dir, clock,
                                                    args.minutes, stop)

        threads = [threading.Thread(target=sample, daemon=True),
                   threading.Thread(target=inject_faults, daemon=True,
                                    args=(endpoint, fault_cycle(jvm, native_dir), clock, args.fault_every,
                                          until - BURST_SECONDS, stop, events)),
                   threading.Thread(target=take_histograms, daemon=True,
                                    args=(jvm, clock, baseline, stop, histograms))]
        for thread in threads:
            thread.start()
        run_query(lambda: start_query(spark, endpoint, checkpoint, native_dir, args.rows_per_batch),
                  clock, until, restarts, run_ids, interrupted, final_histogram)
        stop.set()
        for thread in threads:
            thread.join(max(BURST_SECONDS, HISTOGRAM_SECONDS) + 5)
        failed_attempts = failed_task_attempts(spark, run_ids)
        delivery = read_back(endpoint, *committed_rows(checkpoint, args.rows_per_batch))
        spark_version = spark.version
        leftovers = stop_spark(spark, native_dir)
        spark = None
    finally:
        stop.set()
        try:
            if spark is not None:
                stop_spark(spark, native_dir)
        finally:
            endpoint.stop()
            shutil.rmtree(work, ignore_errors=True)
    report = render(command, started, host, spark_version, sampled["minutes"], events, restarts, delivery,
                    failed_attempts, leftovers, baseline, args.fault_every, flags, histograms)
    Path(args.out).write_text(report)
    print(report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
