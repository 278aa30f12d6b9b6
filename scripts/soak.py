"""A soak (issue 13, item 3): a Structured Streaming query writes through the sink at Kinesis's quota for
``--minutes`` while faults come and go; writes docs/soak.md.

``scripts/soak.sh [--minutes 20] [--fault-every 60]`` (or ``.venv/bin/python scripts/soak.py ...``).

The query (``rate-micro-batch`` source, ``recordId=prefix``, ``failOnError=true``, ``local[2,4]``) writes
numbered records ``soak-<n>`` through the real KPL into the project's own endpoint on 127.0.0.1, whose
one shard takes what a Kinesis shard takes and throttles the rest. From minute 3 on, one fault every
``--fault-every`` seconds, in turn: a 5xx burst, connection resets, a short outage, a SIGKILL to the KPL
daemon. Every second the resident memory of the Spark JVM and of its KPL daemon(s) is read; at the end
the stream is read back, the JVM is stopped, and what it left behind is counted.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import platform
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
sys.path.insert(0, str(REPO / "python"))

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
from spark_kpl_testing.processes import daemons_placed_in, rss_bytes, running_from, stop_process_tree  # noqa: E402

#: Two task threads, and Spark's task retry (4 attempts, as spark.task.maxFailures on a cluster).
MASTER = "local[2,4]"
DRIVER_MEMORY = "1g"
STREAM, SHARDS = "soak", 1
PARTITIONS = 2
RECORD_BYTES = 1000
#: About 30 s of a shard's quota per micro-batch: more than the sink's 16 MiB queue cap, so backpressure works.
ROWS_PER_BATCH = 30_000
WARM_UP_MINUTES = 1  # JIT, class loading, the daemon's first shard map: not the steady state
BASELINE_MINUTE = WARM_UP_MINUTES + 1
FAULTS_FROM_SECONDS = BASELINE_MINUTE * 60  # the baseline minute sees throttling only
BURST_SECONDS = 20
OUTAGE_SECONDS = 10  # shorter than RecordTtl (30 s), but records queued behind the throttle may still expire
FLAT_WITHIN = 0.10
MAX_RESTARTS, RESTART_PAUSE_SECONDS = 10, 5.0
JVM_EXIT_SECONDS = 60
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
    heap_live_peak: int = 0
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
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            daemons = daemons_placed_in([jvm], native_dir)
            if daemons:
                for daemon in daemons:
                    os.kill(daemon, signal.SIGKILL)
                return f"SIGKILL to daemon pid {', '.join(map(str, daemons))}"
            time.sleep(0.5)
        return "no daemon ran for 30 s: nothing killed"

    return kill


def fault_cycle(jvm: int, native_dir: Path) -> List[Tuple[str, Callable[[KinesisEndpoint], str]]]:
    return [
        ("5xx burst", lambda ep: burst(ep, http_error_rate=0.3)),
        ("connection resets", lambda ep: burst(ep, reset_rate=0.3)),
        ("outage", outage),
        ("KPL daemon kill", daemon_kill(jvm, native_dir)),
    ]


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


def heap_reader(spark) -> Callable[[], Tuple[int, int]]:
    """(heap committed, heap in use after the last collection) of the Spark JVM: what its RSS growth
    is made of, told from live data that stays (a leak)."""
    management = spark.sparkContext._jvm.java.lang.management.ManagementFactory

    def read() -> Tuple[int, int]:
        committed = management.getMemoryMXBean().getHeapMemoryUsage().getCommitted()
        pools = [pool.getCollectionUsage() for pool in management.getMemoryPoolMXBeans()
                 if pool.getType().toString() == "Heap memory"]
        return committed, sum(usage.getUsed() for usage in pools if usage is not None)

    return read


def sample_each_second(endpoint: KinesisEndpoint, jvm: int, heap: Callable[[], Tuple[int, int]], native_dir: Path,
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
        committed, live = heap()
        minute.heap_committed_peak = max(minute.heap_committed_peak, committed)
        minute.heap_live_peak = max(minute.heap_live_peak, live)
        stats = endpoint.stats()
        minute.kinesis_records += stats["records_received"] - last["records_received"]
        minute.bytes += stats["bytes_received"] - last["bytes_received"]
        minute.throttled += (stats["record_errors"].get("ProvisionedThroughputExceededException", 0)
                             - last["record_errors"].get("ProvisionedThroughputExceededException", 0))
        last = stats
    return table


def progress(minute: Minute) -> str:
    return (f"JVM RSS {mib(minute.jvm_peak)} MiB (heap committed {mib(minute.heap_committed_peak)}, live after GC "
            f"{mib(minute.heap_live_peak)}), daemon RSS {mib(minute.daemon_peak)} MiB, "
            f"{minute.bytes / MIB / 60:.2f} MiB/s stored")


@dataclass
class Flatness:
    """Flat: the median of the per-minute peaks of the last quarter of the run is within FLAT_WITHIN of
    the baseline minute's peak. A leak lifts every late minute, so their median; a single minute's burst
    (the in-flight records of a retried task, a catch-up after an outage) does not decide alone."""

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


def flatness(peaks: List[int]) -> Flatness:
    late = max(1, len(peaks) // 4)
    last = range(len(peaks) - late + 1, len(peaks) + 1)  # 1-based minutes
    late_peaks = [peaks[m - 1] for m in last]
    return Flatness(peaks[BASELINE_MINUTE - 1], last, int(statistics.median(late_peaks)), max(late_peaks))


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
              run_ids: List[str], interrupted: threading.Event) -> None:
    """Runs the query until ``until``; when it fails (a batch's tasks failed 4 times), restarts it from
    its checkpoint after a pause, up to MAX_RESTARTS times, as a job supervisor with a retry policy
    would: the failed batch was not committed, so the restart sends it again. Stops it at ``until``,
    mid-batch."""
    from pyspark.errors import StreamingQueryException

    while clock.now() < until:
        query = start()
        run_ids.append(str(query.runId))
        try:
            while not query.awaitTermination(1.0):
                if interrupted.is_set():
                    raise KeyboardInterrupt
                if clock.now() >= until:
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


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{platform.node()}: {cpu}, {os.cpu_count()} CPUs; load average at start {load}"


def render(command: str, started: str, host: str, spark_version: str, minutes: List[Minute], events: List[Event],
           restarts: List[Event], delivery: Delivery, failed_attempts: int, leftovers: Leftovers) -> str:
    jvm = flatness([m.jvm_peak for m in minutes])
    daemon = flatness([m.daemon_peak for m in minutes])
    late = f"minutes {jvm.last_minutes.start}-{jvm.last_minutes.stop - 1}"
    verdicts = {
        "records lost": delivery.lost == 0,
        "every duplicate detectable by record id": delivery.undetectable == 0 and delivery.foreign == 0,
        "JVM RSS flat": jvm.flat,
        "daemon RSS flat": daemon.flat,
        "no daemon or pipe folder left": not (leftovers.daemons or leftovers.pipe_folders),
        "every fault injected": {e.fault for e in events} >= {"5xx burst", "connection resets", "outage",
                                                              "KPL daemon kill"},
    }
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
        f"- Faults, from second {FAULTS_FROM_SECONDS} on, one at a time in turn: a 5xx burst (30 % of PutRecords "
        f"calls answered 500/503 for {BURST_SECONDS} s), connection resets (30 % of calls for {BURST_SECONDS} s), "
        f"an outage ({OUTAGE_SECONDS} s, shorter than `RecordTtl` 30 s), a SIGKILL to the KPL daemon.",
        "- Failures, handled as a production job would: `failOnError=true` (a record Kinesis finally refuses "
        "fails its task; nothing is dead-lettered, so *lost* must be 0 outright); a daemon kill fails the tasks "
        "whose records it held and Spark retries them (4 attempts); a batch whose tasks fail 4 times fails the "
        "query, and the script restarts it from its checkpoint, as a job supervisor with a retry policy "
        "would. The uncommitted batch is sent again: at-least-once, duplicates carry the same record id.",
        f"- Memory: every second, the resident set (RSS, from /proc) of the Spark JVM (driver, local-mode "
        f"executor, {DRIVER_MEMORY} heap) and of its KPL daemons, summed; each minute's peak is below. "
        f"*Flat* means: the median of the per-minute peaks of the last quarter of the run ({late}) is within "
        f"{FLAT_WITHIN:.0%} of minute {BASELINE_MINUTE}'s, the first minute after a {WARM_UP_MINUTES}-minute "
        "warm-up (JIT, class loading, the daemon's first shard map) and the last before the faults. The median "
        "of the last minutes, not each minute: the daemon's RSS follows the records in flight, so one minute's "
        "burst (a retried task re-sending its records, a catch-up after an outage) lifts that minute alone, "
        "while a leak lifts every late minute. The highest late peak is shown beside it. A killed daemon is "
        "replaced by a young one: the pids column shows which minutes ran on which. *Heap committed* is the "
        "heap the JVM has taken from the system (it grows up to "
        f"the {DRIVER_MEMORY} maximum and is part of the RSS); *live after GC* is the heap in use right after the "
        "last collection (the heap pools' collection usage): what a leak would make climb.",
        "",
        "## Memory and throughput per minute",
        "",
        "| minute | JVM peak RSS (MiB) | vs minute 2 | JVM heap committed (MiB) | JVM heap live after GC (MiB) "
        "| daemon peak RSS (MiB) | vs minute 2 | daemon pids seen | MiB/s stored | Kinesis records/s stored "
        "| records throttled | faults that minute |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for number, minute in enumerate(minutes, start=1):
        faults = [e.fault for e in events + restarts if int(e.second // 60) == number - 1]
        lines.append(
            f"| {number} | {mib(minute.jvm_peak)} | {minute.jvm_peak / jvm.baseline:.2f} "
            f"| {mib(minute.heap_committed_peak)} | {mib(minute.heap_live_peak)} "
            f"| {mib(minute.daemon_peak)} | {minute.daemon_peak / max(daemon.baseline, 1):.2f} "
            f"| {', '.join(map(str, sorted(minute.daemon_pids))) or 'none'} | {minute.bytes / MIB / 60:.2f} "
            f"| {minute.kinesis_records / 60:.1f} | {minute.throttled:,} | {', '.join(faults) or '-'} |")
    lines += [
        "",
        "| process | minute 2 peak (MiB) | median peak, " + late + " (MiB) | ratio | flat within 10 % "
        "| highest peak, " + late + " (MiB) |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for name, measure in (("Spark JVM", jvm), ("KPL daemon(s)", daemon)):
        lines.append(f"| {name} | {mib(measure.baseline)} | {mib(measure.late_median)} | {measure.ratio:.3f} "
                     f"| {'yes' if measure.flat else 'NO'} | {mib(measure.highest_late)} |")
    lines += [
        "",
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
    for key, value in {"spark.driver.memory": DRIVER_MEMORY, "spark.ui.enabled": "false",
                       "spark.ui.showConsoleProgress": "false"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=20)
    parser.add_argument("--fault-every", type=float, default=60.0, help="seconds between two faults")
    parser.add_argument("--rows-per-batch", type=int, default=ROWS_PER_BATCH)
    parser.add_argument("--out", default=str(REPO / "docs" / "soak.md"))
    args = parser.parse_args(argv)
    if args.minutes < BASELINE_MINUTE + 1:
        parser.error(f"--minutes must be at least {BASELINE_MINUTE + 1}: a warm-up, a baseline and a faulty minute")
    command = " ".join(["scripts/soak.sh", *(argv if argv is not None else sys.argv[1:])])
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
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
        jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        until = args.minutes * 60.0
        clock = Clock()
        events: List[Event] = []
        restarts: List[Event] = []
        run_ids: List[str] = []
        sampled: Dict[str, List[Minute]] = {}

        def sample() -> None:
            sampled["minutes"] = sample_each_second(endpoint, jvm, heap_reader(spark), native_dir, clock,
                                                    args.minutes, stop)

        threads = [threading.Thread(target=sample, daemon=True),
                   threading.Thread(target=inject_faults, daemon=True,
                                    args=(endpoint, fault_cycle(jvm, native_dir), clock, args.fault_every,
                                          until - BURST_SECONDS, stop, events))]
        for thread in threads:
            thread.start()
        run_query(lambda: start_query(spark, endpoint, checkpoint, native_dir, args.rows_per_batch),
                  clock, until, restarts, run_ids, interrupted)
        stop.set()
        for thread in threads:
            thread.join(BURST_SECONDS + 5)
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
                    failed_attempts, leftovers)
    Path(args.out).write_text(report)
    print(report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
