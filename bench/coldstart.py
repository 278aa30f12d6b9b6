"""Cold start benchmark: a fresh JVM's first write against the same JVM's later writes, per variant.

python bench/coldstart.py [--records 500000] [--later 8] [--rounds 2] [--variants default,fixed-heap,...]

A fresh executor JVM (dynamic allocation, a streaming query's first micro-batches) writes at a fraction
of the rate the same JVM reaches later. One run of the orchestrator hosts the project's
KinesisEndpoint (store=False, 127.0.0.1, one stream of 16 shards) and, per variant and round, starts
a child (bench/throughput.py's, a fresh JVM at local[2]) that caches --records rows of 100 B, makes
the sink's one-row warm-up write (the producer, the daemon, its connection and the shard map start
there), then one timed first write of the rows and --later timed writes of the same rows. The
variants are JVM flags (AppCDS's among them: a training child writes the archive first), JDK 25 with
Spark 4.3 (JDK 25's AOT cache among them, trained the same way), Spark's noop
sink (what Spark's own first job costs, under the same flags) and boto3's put_records in
foreachPartition (the baseline, 2 later writes); rounds interleave them, so that the machine's
drift falls on all alike.

Per child: the first write's rate, the steady rate (median of the later half of the later writes,
after at least --later/2 writes of warm-up) and their ratio; the first write's ramp (the rate in
each 100,000 rows as the endpoint received them); the JVM's CPU per record by thread kind (the
tasks, the JIT compilers, the garbage collector) in the first write and in the steady ones; from the
JVM's own logs, the compilations (by tier) and GC pauses in each. Per sink child, a second table: its
first write against boto3's warm writes of the same round, and its extra over the round's noop child in
the first write against in the warm ones (issue #40's targets), by the clock and by CPU per record; and
the seconds from the child's start to its first write. Writes OUT/coldstart.json; --report prints the
tables of a saved run.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from profile_sink import THREAD_KINDS

from spark_kpl_bench.processes import fixed_heap_flags
from spark_kpl_bench.throughput.child_process import run_process
from spark_kpl_bench.throughput.report import save_report
from spark_kpl_bench.throughput.settings import KPL_TUNING, ROOT, SHARDS
from spark_kpl_bench.throughput.study import study_start
from spark_kpl_bench.throughput.summary import kinesis_figures
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.env import apply_loopback_env
from spark_kpl_testing.processes import descendants, threads

apply_loopback_env()  # before any JVM or KPL daemon starts

STREAM = "bench-coldstart"
HEAP = "2g"
C1_ONLY = "-XX:TieredStopAtLevel=1"
C1_SOONER = "-XX:CompileThresholdScaling=0.1"


class Archive(NamedTuple):
    """A file that a training child's JVM writes at its exit and later JVMs map: in a variant's flags, its
    placeholder stands for this run's file (train_archive)."""
    placeholder: str
    runtime: str
    training_flag: str
    file_name: str
    report_key: str
    jar_on_class_path: bool  # the training child's, which its users must share (Variant.jar_on_class_path)


#: JDK 17's dynamic AppCDS: the classes loaded. JDK 25's AOT cache (JEP 483, 514, 515): the classes loaded
#: and linked, and the methods' profiles, so that the JIT compiles the hot path without profiling it again;
#: it holds no class of a custom class loader, such as the one Spark loads spark.jars with.
ARCHIVES = (
    Archive("{archive}", "jdk17", "-XX:ArchiveClassesAtExit=", "spark-kpl.jsa", "archive_training", False),
    Archive("{aot}", "jdk25", "-XX:AOTCacheOutput=", "spark-kpl.aot", "aot_cache_training", True))
ARCHIVE, AOT_CACHE = (archive.placeholder for archive in ARCHIVES)


class Variant(NamedTuple):
    producer: str  # the sink, Spark's noop sink, or boto3's put_records in foreachPartition
    java_options: List[str]
    master: str
    runtime: str = "jdk17"  # or "jdk25" (runtime_env)
    # the sink's jar on the JVM's class path too (spark.driver.extraClassPath), so that the application
    # class loader loads its classes and the KPL's, as an AOT cache requires
    jar_on_class_path: bool = False


#: A noop variant with a sink variant's flags and runtime is its Spark floor.
VARIANTS: Dict[str, Variant] = {
    "default": Variant("sink", [], "local[2]"),
    "fixed-heap": Variant("sink", fixed_heap_flags(HEAP), "local[2]"),
    "c1-only": Variant("sink", [C1_ONLY], "local[2]"),
    # C2 for the hottest methods only: its thresholds 10 times HotSpot's defaults
    "c2-hot-only": Variant("sink", ["-XX:Tier4InvocationThreshold=50000", "-XX:Tier4MinInvocationThreshold=6000",
                                    "-XX:Tier4CompileThreshold=150000", "-XX:Tier4BackEdgeThreshold=400000"],
                           "local[2]"),
    # every tier's thresholds at a fifth of HotSpot's: the row path reaches C1 and C2 sooner
    "compile-sooner": Variant("sink", ["-XX:CompileThresholdScaling=0.2"], "local[2]"),
    # the classes a training write loaded (Spark's, the sink's, the KPL's), mapped from an archive (AppCDS)
    "cds": Variant("sink", [f"-XX:SharedArchiveFile={ARCHIVE}"], "local[2]"),
    "cds-c1": Variant("sink", [f"-XX:SharedArchiveFile={ARCHIVE}", C1_ONLY], "local[2]"),
    "noop": Variant("noop", [], "local[2]"),
    "c1-noop": Variant("noop", [C1_ONLY], "local[2]"),
    # C1 only, at a tenth of its thresholds: C1 compiles fast, so sooner leaves less to the interpreter
    "c1-sooner": Variant("sink", [C1_ONLY, C1_SOONER], "local[2]"),
    "c1-sooner-noop": Variant("noop", [C1_ONLY, C1_SOONER], "local[2]"),
    "cds-noop": Variant("noop", [f"-XX:SharedArchiveFile={ARCHIVE}"], "local[2]"),
    "boto3": Variant("boto3", [], "local[2]"),
    # one task slot on the two cores: the compilers need not take the tasks' core
    "one-task": Variant("sink", [], "local[1]"),
    "jdk25": Variant("sink", [], "local[2]", "jdk25"),
    "jdk25-noop": Variant("noop", [], "local[2]", "jdk25"),
    # the classes, their linking and the methods' profiles of a training write, from JDK 25's AOT cache
    "jdk25-aot": Variant("sink", [f"-XX:AOTCache={AOT_CACHE}"], "local[2]", "jdk25", jar_on_class_path=True),
    "jdk25-aot-noop": Variant("noop", [f"-XX:AOTCache={AOT_CACHE}"], "local[2]", "jdk25", jar_on_class_path=True),
    "jdk25-aot-c1": Variant("sink", [f"-XX:AOTCache={AOT_CACHE}", C1_ONLY], "local[2]", "jdk25",
                            jar_on_class_path=True),
    "jdk25-aot-c1-noop": Variant("noop", [f"-XX:AOTCache={AOT_CACHE}", C1_ONLY], "local[2]", "jdk25",
                                 jar_on_class_path=True),
}
#: Timed writes after the first for boto3: at a tenth of the sink's rate, two keep its child near a minute.
BOTO3_LATER = 2
#: Rows per window of the first write's ramp.
RAMP_WINDOW = 100_000
#: The share of its steady rate a fresh JVM should reach within its first 500,000 rows.
TARGET_SHARE = 0.8
#: The sink's classes whose compilation the report follows (their tier-4 compilations by time).
SINK_CLASSES = ("sparkkpl.",)


class Timeline(threading.Thread):
    """Every ``interval`` s: the endpoint's bytes received, and the CPU seconds of the child JVM's
    threads by kind (tasks, JIT compilers, GC, ...), so that any stretch of a run can be cut out of it."""

    def __init__(self, stats: Callable[[], Dict[str, Any]], interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.stats, self.interval = stats, interval
        self.samples: List[Tuple[float, int, Dict[str, float]]] = []
        self.jvm: Optional[int] = None
        #: Every thread of the JVM seen so far, with its kind and CPU seconds when last seen: the JVM
        #: ends idle compiler threads and Spark idle task threads, whose CPU must not leave the sums.
        self.seen: Dict[int, Tuple[str, float]] = {}
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            if self.jvm is None:
                self.jvm = next((pid for pid, p in descendants(os.getpid()).items() if p.command == "java"), None)
                self.seen = {}
            try:
                for tid, thread in (threads(self.jvm) if self.jvm else {}).items():
                    kind = next((k for prefix, k in THREAD_KINDS if thread.command.startswith(prefix[:15])), "other")
                    self.seen[tid] = (kind, thread.cpu_seconds)
            except FileNotFoundError:  # it exited (spark-submit's launcher is a java too): look again
                self.jvm = None
            by_kind: Dict[str, float] = {}
            for kind, seconds in self.seen.values():
                by_kind[kind] = by_kind.get(kind, 0.0) + seconds
            self.samples.append((time.time(), self.stats()["bytes_received"], by_kind))
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(5)

    def bytes_at(self, when: float) -> float:
        return _interpolate([(t, b) for t, b, _ in self.samples], when)

    def cpu_between(self, start: float, end: float) -> Dict[str, float]:
        kinds = {k for _, _, by_kind in self.samples for k in by_kind}
        return {k: _interpolate([(t, c.get(k, 0.0)) for t, _, c in self.samples if c], end)
                - _interpolate([(t, c.get(k, 0.0)) for t, _, c in self.samples if c], start) for k in kinds}

    def ramp(self, start: float, seconds: float, records: int) -> List[float]:
        """records/s in each RAMP_WINDOW rows of the run, by when the endpoint had their share of its bytes."""
        end = start + seconds
        base, total = self.bytes_at(start), self.bytes_at(end) - self.bytes_at(start)
        if total <= 0:
            return []
        # (time, rows arrived), rows counted by the run's share of the bytes it delivered
        arrived = [(start, 0.0)] + [(t, (b - base) / total * records) for t, b, _ in self.samples
                                    if start < t < end] + [(end, float(records))]
        crossings = [start] + [_time_of(arrived, rows) for rows in range(RAMP_WINDOW, records + 1, RAMP_WINDOW)]
        return [RAMP_WINDOW / (b - a) for a, b in zip(crossings, crossings[1:]) if b > a]


def _interpolate(points: List[Tuple[float, float]], at: float) -> float:
    if not points:
        return 0.0
    if at <= points[0][0]:
        return points[0][1]
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if t0 <= at <= t1:
            return v0 if t1 == t0 else v0 + (v1 - v0) * (at - t0) / (t1 - t0)
    return points[-1][1]


def _time_of(arrived: List[Tuple[float, float]], rows: float) -> float:
    """When the arrival curve (time, rows) reached ``rows``."""
    for (t0, r0), (t1, r1) in zip(arrived, arrived[1:]):
        if r0 <= rows <= r1:
            return t1 if r1 == r0 else t0 + (t1 - t0) * (rows - r0) / (r1 - r0)
    return arrived[-1][0]


# ------------------------------------------------------------------ the JVM's own logs

#: -Xlog lines decorated with "tm": milliseconds since the epoch, e.g. "[1764123456789ms] ...".
_LOG_TIME = re.compile(r"^\[(\d+)ms\]")
#: A compilation as jit+compilation=debug logs it: id, flags (% s ! b n), tier, method.
_COMPILATION = re.compile(r"^\[\d+ms\]\s+\d+\s+(?:[%sbn!]\s+)*([0-4])\s+(\S+)")
_GC_PAUSE = re.compile(r"Pause .* (\d+\.\d+)ms$")


def log_flags(work: Path, name: str) -> List[str]:
    return [f"-Xlog:gc:file={work / (name + '.gc.log')}:tm",
            f"-Xlog:jit+compilation=debug:file={work / (name + '.jit.log')}:tm"]


def read_log(path: Path) -> List[Tuple[float, str]]:
    if not path.exists():
        return []
    lines = []
    for line in path.read_text(errors="replace").splitlines():
        found = _LOG_TIME.match(line)
        if found:
            lines.append((int(found.group(1)) / 1000, line))
    return lines


def jvm_log_figures(work: Path, name: str, start: float, end: float) -> Dict[str, Any]:
    """Compilations by tier, the sink's tier-4 compilations, and GC pauses between two times."""
    tiers: Dict[str, int] = {}
    sink_c2 = 0
    for when, line in read_log(work / (name + ".jit.log")):
        found = _COMPILATION.match(line)
        if found and start <= when <= end and "made not entrant" not in line:
            tiers[found.group(1)] = tiers.get(found.group(1), 0) + 1
            sink_c2 += found.group(1) == "4" and found.group(2).startswith(SINK_CLASSES)
    pauses = [float(m.group(1)) for when, line in read_log(work / (name + ".gc.log"))
              if start <= when <= end for m in [_GC_PAUSE.search(line)] if m]
    return {"compilations_by_tier": dict(sorted(tiers.items())), "sink_tier4_compilations": sink_c2,
            "gc_pauses": len(pauses), "gc_pause_ms": round(sum(pauses), 1)}


def sink_tier4_timeline(work: Path, name: str, start: float) -> List[Tuple[float, str]]:
    """When (s after the first write started) each sink method reached tier 4, and which."""
    found = []
    for when, line in read_log(work / (name + ".jit.log")):
        match = _COMPILATION.match(line)
        if match and match.group(1) == "4" and match.group(2).startswith(SINK_CLASSES) \
                and "made not entrant" not in line:
            found.append((round(when - start, 3), match.group(2)))
    return found


# ------------------------------------------------------------------ one child

def child_command(producer: str, records: int, writes: int, master: str, java_options: List[str],
                  endpoint: KinesisEndpoint, class_path: Optional[Path] = None) -> List[str]:
    """bench/throughput.py's child: ``writes`` writes of the same ``records`` cached rows of 100 B; the jar
    ``class_path`` on its JVM's class path too."""
    options = ({**endpoint.kpl_options(), **KPL_TUNING, "aggregation": "executor"} if producer != "boto3"
               else {"_endpoint_url": endpoint.endpoint_url})
    conf = {"spark.driver.extraJavaOptions": " ".join(java_options),
            **({"spark.driver.extraClassPath": str(class_path)} if class_path else {})}
    return [sys.executable, str(ROOT / "bench/throughput.py"), "child", "--heap", HEAP, "--producer", producer,
            "--records", str(records), "--size", "100", "--runs", str(writes),
            "--options", json.dumps(options), "--stream", STREAM, "--master", master, "--conf", json.dumps(conf)]


def spark43_site_packages() -> Optional[Path]:
    """Where scripts/install.sh put Spark 4.3's pyspark, if it did."""
    return next((ROOT / ".venv-spark43/lib").glob("python*/site-packages"), None)


def runtime_env(runtime: str, args: argparse.Namespace) -> Dict[str, str]:
    """What a child of ``runtime`` lays over the loopback environment. "jdk17": this venv's Spark 4.1 on the
    machine's JDK 17, as it is. "jdk25": Spark 4.3 on JDK 25 (--jdk25). Spark 4.1's Hadoop client cannot run
    on JDK 25 (it calls Subject.getSubject, which JDK 24+ refuses); Spark 4.3's, 3.5.0, can. The child takes
    Spark 4.3's pyspark from .venv-spark43, ahead of this venv's on its path, and the harness from this venv."""
    if runtime == "jdk17":
        return {}
    return {"JAVA_HOME": args.jdk25, "PYTHONPATH": str(spark43_site_packages())}


def with_archives(flags: List[str], work: Path) -> List[str]:
    """``flags`` with each archive's placeholder replaced by this run's file."""
    for archive in ARCHIVES:
        flags = [flag.replace(archive.placeholder, str(work / archive.file_name)) for flag in flags]
    return flags


def train_archive(archive: Archive, args: argparse.Namespace, endpoint: KinesisEndpoint, work: Path, jar: Path,
                  log: Path) -> Dict[str, Any]:
    """The archive of the variants that map ``archive``: a training child of its runtime, the sink's warm-up and
    two writes of the run's rows at the JVM's defaults, whose JVM writes the archive at its exit. What
    scripts/build-cds-archive.sh does for a user."""
    path = work / archive.file_name
    started = time.time()
    entry = run_process(child_command("sink", args.records, 2, "local[2]", [archive.training_flag + str(path)],
                                      endpoint, jar if archive.jar_on_class_path else None),
                        log, timeout=900, env=runtime_env(archive.runtime, args))
    # the child's stdout closes when its JVM has exited, the archive written
    return {"returncode": entry["returncode"], "seconds": round(time.time() - started, 1),
            "archive_bytes": path.stat().st_size if path.exists() else None}


def measure_child(variant: str, index: int, args: argparse.Namespace, endpoint: KinesisEndpoint, work: Path,
                  jar: Path, log: Path) -> Dict[str, Any]:
    producer, flags, master, runtime, jar_on_class_path = VARIANTS[variant]
    name = f"{variant}-{index}"
    flags = with_archives(flags, work)
    java_options = [*flags, *(log_flags(work, name) if args.jvm_logs else [])]
    later = BOTO3_LATER if producer == "boto3" else args.later
    load_before = os.getloadavg()
    timeline = Timeline(endpoint.stats)
    timeline.start()
    try:
        entry = run_process(child_command(producer, args.records, 1 + later, master, java_options, endpoint,
                                          jar if jar_on_class_path else None),
                            log, timeout=900, counters=endpoint.stats, env=runtime_env(runtime, args))
    finally:
        timeline.stop()
    entry.update(variant=variant, producer=producer, java_options=flags, master=master, runtime=runtime,
                 jar_on_class_path=jar_on_class_path, records=args.records,
                 loadavg_before=[round(x, 2) for x in load_before],
                 loadavg_after=[round(x, 2) for x in os.getloadavg()])
    runs = [r for r in entry["runs"] if r.get("seconds")]
    for run in runs:
        start, end = run["wall_start"], run["wall_start"] + run["seconds"]
        run["jvm_cpu_seconds_by_thread"] = {k: round(v, 3) for k, v in timeline.cpu_between(start, end).items()}
        if args.jvm_logs:
            run["jvm_log"] = jvm_log_figures(work, name, start, end)
    if len(runs) < 2:
        return entry
    first, later = runs[0], runs[1:]
    steady = later[len(later) // 2:]  # after at least half of the later writes
    entry["first_rate"] = first["records"] / first["seconds"]
    entry["steady_rate"] = statistics.median(r["records"] / r["seconds"] for r in steady)
    entry["ratio"] = entry["first_rate"] / entry["steady_rate"]
    entry["extra_seconds"] = first["seconds"] - statistics.median(r["seconds"] for r in steady)
    entry["later_rates"] = [round(r["records"] / r["seconds"]) for r in later]
    # CPU-bound on cores of its own (an idle machine), a write's rate follows the CPU it needs per record:
    # unlike the rates, this ratio holds on a machine that other work keeps busy.
    entry["cpu_ratio"] = statistics.median(_all_cpu(r) for r in steady) / _all_cpu(first)
    if producer == "sink":
        # the time the tasks waited for room under the producer's outstanding budget
        entry["blocked_ms"] = {"first": first["blocked_ms"],
                               "steady": statistics.median(r["blocked_ms"] for r in steady)}
        entry["first_ramp"] = [round(rate) for rate in timeline.ramp(first["wall_start"], first["seconds"],
                                                                     first["records"])]
        # the same windows in the steady writes: the first 100,000 rows of any write carry its start
        steady_ramps = [timeline.ramp(r["wall_start"], r["seconds"], r["records"]) for r in steady]
        entry["steady_ramp"] = [round(statistics.median(rates)) for rates in zip(*steady_ramps)]
    entry["cpu_us_per_record"] = {
        "first": _per_record(first), "steady": {k: statistics.median(_per_record(r).get(k, 0.0) for r in steady)
                                                for k in _per_record(first)}}
    if args.jvm_logs:
        entry["sink_tier4"] = sink_tier4_timeline(work, name, first["wall_start"])
    return entry


def _all_cpu(run: Dict[str, Any]) -> float:
    """CPU seconds per record of the JVM, the KPL daemon, Python and the endpoint in a run."""
    return sum(run.get("cpu_seconds", {}).values()) / run["records"]


def _per_record(run: Dict[str, Any]) -> Dict[str, float]:
    """CPU µs per record: the JVM by thread kind, and the KPL daemon (whole process)."""
    spent = {k: 1e6 * v / run["records"] for k, v in run["jvm_cpu_seconds_by_thread"].items()}
    spent["KPL daemon"] = 1e6 * run.get("cpu_seconds", {}).get("daemon", 0.0) / run["records"]
    spent["JVM (all threads)"] = 1e6 * run.get("cpu_seconds", {}).get("jvm", 0.0) / run["records"]
    return {k: round(v, 3) for k, v in spent.items()}


# ------------------------------------------------------------------ the run and its report

def measure(args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    work, report, jar, log = study_start(
        "coldstart", args, out, shards=SHARDS, heap=HEAP, records=args.records, later_writes=args.later,
        kpl_tuning=KPL_TUNING, jvm_logs=args.jvm_logs,
        variants={v: VARIANTS[v]._asdict() for v in args.variants}, jdk25=args.jdk25)
    endpoint = KinesisEndpoint({STREAM: SHARDS}, store=False).start()
    try:
        for archive in ARCHIVES:
            if any(archive.placeholder in flag for v in args.variants for flag in VARIANTS[v].java_options):
                report[archive.report_key] = train_archive(archive, args, endpoint, work, jar, log)
                print(f"{archive.file_name}: {report[archive.report_key]}", flush=True)
        for index in range(args.rounds):
            for variant in args.variants:
                print(f"[{time.strftime('%H:%M:%S')}] round {index}: {variant}", flush=True)
                entry = measure_child(variant, index, args, endpoint, work, jar, log)
                entry["round"] = index
                report["results"].append(entry)
                print(json.dumps({k: entry.get(k) for k in ("first_rate", "steady_rate", "ratio", "extra_seconds",
                                                            "first_ramp", "loadavg_after", "returncode")},
                                 default=round), flush=True)
                save_report(report, out, "coldstart")
    finally:
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
    save_report(report, out, "coldstart", finished=True)
    return report

#: The first write's extra over Spark's noop sink, at most this many times a warm write's (issue #40).
EXTRA_TARGET = 1.5
#: A fresh JVM's first write, at least this many times boto3's rate in the same run (issue #40).
BOTO3_TARGET = 8.0


def child_cpu_us(run: Dict[str, Any]) -> float:
    """CPU µs per record of the child's processes (JVM, KPL daemon, Python), the endpoint left out."""
    return 1e6 * sum(v for k, v in run.get("cpu_seconds", {}).items() if k != "endpoint") / run["records"]


def first_and_warm(entry: Dict[str, Any]) -> Dict[str, float]:
    """A child's first write and its warm writes (the median of the later half): seconds, child CPU per record."""
    runs = [r for r in entry["runs"] if r.get("seconds")]
    later = runs[1:]
    steady = later[len(later) // 2:]
    return {"first_s": runs[0]["seconds"], "warm_s": statistics.median(r["seconds"] for r in steady),
            "first_cpu": child_cpu_us(runs[0]), "warm_cpu": statistics.median(child_cpu_us(r) for r in steady)}


def spark_floors(variant: str, variants: List[str]) -> List[str]:
    """Spark's own cost to set ``variant`` against, of those the run has: noop at its runtime's JVM defaults
    (the issue's floor), and noop with ``variant``'s flags and master (the flags change Spark's cost too)."""
    own = VARIANTS[variant]
    floors = (Variant("noop", [], "local[2]", own.runtime), own._replace(producer="noop"))
    return list(dict.fromkeys(v for floor in floors for v in variants if VARIANTS[v] == floor))


def first_write_rows(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Per sink child and Spark floor (the floor's noop child of the same round): the sink's extra over the
    floor in the first write against in the warm ones, by the clock and by the child's CPU per record; and
    the first write's rate over boto3's warm rate in the same round."""
    by_round: Dict[int, Dict[str, Dict[str, Any]]] = {}
    for e in report["results"]:
        if "ratio" in e:
            by_round.setdefault(e["round"], {})[e["variant"]] = e
    rows = []
    for index, children in sorted(by_round.items()):
        boto3 = children.get("boto3")
        for variant, e in children.items():
            if e["producer"] != "sink":
                continue
            sink = first_and_warm(e)
            for floor in filter(None, (children.get(f) for f in spark_floors(variant, list(report["variants"])))):
                spark = first_and_warm(floor)
                row = {"variant": variant, "round": index, "floor": floor["variant"], "first_rate": e["first_rate"],
                       "first_extra_s": sink["first_s"] - spark["first_s"],
                       "warm_extra_s": sink["warm_s"] - spark["warm_s"],
                       "first_extra_cpu": sink["first_cpu"] - spark["first_cpu"],
                       "warm_extra_cpu": sink["warm_cpu"] - spark["warm_cpu"],
                       "start_s": start_seconds(e), "floor_start_s": start_seconds(floor),
                       "load": [e["loadavg_before"][0], e["loadavg_after"][0]]}
                row["extra_ratio_s"] = row["first_extra_s"] / row["warm_extra_s"]
                row["extra_ratio_cpu"] = row["first_extra_cpu"] / row["warm_extra_cpu"]
                if boto3:
                    row.update(boto3_rates(e, boto3))
                rows.append(row)
    return rows


def boto3_rates(sink: Dict[str, Any], boto3: Dict[str, Any]) -> Dict[str, float]:
    """The sink's first write against boto3's warm writes: by the clock, and by all CPU per record (the
    endpoint's too, as boto3 makes it parse every record), the rate ratio of two CPU-bound writes."""
    later = [r for r in boto3["runs"] if r.get("seconds")][1:]
    return {"boto3_rate": boto3["steady_rate"], "vs_boto3": sink["first_rate"] / boto3["steady_rate"],
            "vs_boto3_cpu": statistics.median(_all_cpu(r) for r in later[len(later) // 2:]) / _all_cpu(sink["runs"][0])}


def start_seconds(entry: Dict[str, Any]) -> float:
    """From the child's start to its first timed write: Python, the JVM, Spark's session, caching the rows
    and (the sink) its one-row warm-up write, where its producer and daemon start."""
    return entry["runs"][0]["wall_start"] - entry["started"]


def first_write_table(report: Dict[str, Any]) -> List[str]:
    lines = ["| variant | round | first write records/s | boto3 records/s (warm) | first / boto3 | "
             "by all CPU per record | sink's extra over noop s, first / warm | ratio | "
             "extra CPU µs/record, first / warm | ratio | Spark floor | start s (floor's) | load average |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r in first_write_rows(report):
        boto3 = (f"{r['boto3_rate']:,.0f} | {r['vs_boto3']:.1f} | {r['vs_boto3_cpu']:.1f}" if "boto3_rate" in r
                 else "– | – | –")
        lines.append(f"| {r['variant']} | {r['round']} | {r['first_rate']:,.0f} | {boto3} | "
                     f"{r['first_extra_s']:.2f} / {r['warm_extra_s']:.2f} | {r['extra_ratio_s']:.1f} | "
                     f"{r['first_extra_cpu']:.2f} / {r['warm_extra_cpu']:.2f} | {r['extra_ratio_cpu']:.1f} | "
                     f"{r['floor']} | {r['start_s']:.1f} ({r['floor_start_s']:.1f}) | "
                     f"{r['load'][0]:.1f} → {r['load'][1]:.1f} |")
    return lines


def first_write_medians(report: Dict[str, Any]) -> List[str]:
    """The table above by variant and floor, each figure the median over the rounds, against the targets."""
    groups: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for r in first_write_rows(report):
        groups.setdefault((r["variant"], r["floor"]), []).append(r)
    lines = ["| variant | Spark floor | rounds | first / boto3 (≥ 8) | first extra / warm extra over the floor, "
             "by the clock (≤ 1.5) | by CPU per record (≤ 1.5) | start s |", "|---|---|---:|---:|---:|---:|---:|"]
    for (variant, floor), rows in groups.items():
        def median(key: str, rows: List[Dict[str, Any]] = rows) -> str:
            found = [r[key] for r in rows if key in r]
            return f"{statistics.median(found):.1f}" if found else "–"

        lines.append(f"| {variant} | {floor} | {len(rows)} | {median('vs_boto3')} | {median('extra_ratio_s')} | "
                     f"{median('extra_ratio_cpu')} | {median('start_s')} |")
    return lines


def table(report: Dict[str, Any]) -> List[str]:
    lines = ["| variant | round | first write records/s | steady records/s | first / steady | target | "
             "CPU per record steady / first | "
             "first write's extra s | first write by 100,000 rows (records/s) | tasks blocked ms first / steady | "
             "JVM CPU µs/record first / steady | of it JIT compilers | of it GC | KPL daemon | "
             "user records per Kinesis record first / steady | load average |",
             "|---|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for e in report["results"]:
        if "ratio" not in e:
            lines.append(f"| {e['variant']} | {e['round']} | failed (return code {e['returncode']}) |")
            continue
        cpu = e["cpu_us_per_record"]

        def pair(kind: str, cpu: Dict[str, Dict[str, float]] = cpu) -> str:
            return f"{cpu['first'].get(kind, 0):.2f} / {cpu['steady'].get(kind, 0):.2f}"

        target = "–" if e["producer"] != "sink" else "met" if e["ratio"] >= TARGET_SHARE else "**missed**"
        ramp = ", ".join(f"{rate / 1000:.0f}k" for rate in e.get("first_ramp", [])) or "–"
        load = f"{e['loadavg_before'][0]:.1f} → {e['loadavg_after'][0]:.1f}"
        blocked = e.get("blocked_ms")
        blocked_ms = f"{blocked['first']:,.0f} / {blocked['steady']:,.0f}" if blocked else "–"
        lines.append(f"| {e['variant']} | {e['round']} | {e['first_rate']:,.0f} | {e['steady_rate']:,.0f} | "
                     f"{e['ratio']:.2f} | {target} | {e['cpu_ratio']:.2f} | {e['extra_seconds']:.2f} | {ramp} | "
                     f"{blocked_ms} | "
                     f"{pair('JVM (all threads)')} | {pair('JIT compiler')} | {pair('garbage collector')} | "
                     f"{pair('KPL daemon')} | {_aggregation(e)} | {load} |")
    return lines


def _aggregation(entry: Dict[str, Any]) -> str:
    """User records per Kinesis record in the first write and in the steady ones, as the endpoint stored them."""
    timed = [r for r in entry["runs"] if r.get("seconds") and not r.get("warmup")]
    later = timed[1:]
    first, steady = (kinesis_figures(runs).get("user_records_per_record")
                     for runs in (timed[:1], later[len(later) // 2:]))
    return f"{first:.1f} / {steady:.1f}" if first and steady else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=500_000, help="rows of 100 B per write")
    parser.add_argument("--later", type=int, default=8, help="timed writes after the first; the steady rate is "
                                                             "the median of their later half")
    parser.add_argument("--rounds", type=int, default=2, help="children per variant, the variants interleaved")
    parser.add_argument("--variants", type=lambda v: v.split(","), default=list(VARIANTS),
                        help=f"comma-separated, of {','.join(VARIANTS)}")
    parser.add_argument("--no-jvm-logs", dest="jvm_logs", action="store_false",
                        help="without the JVM's GC and compilation logs")
    parser.add_argument("--jar", help="the sink's jar to measure (default: this checkout's build, copied)")
    parser.add_argument("--jdk25", default=next(iter(sorted(glob.glob("/usr/lib/jvm/*-25-*"))), None),
                        help="a JDK 25's home, for the jdk25 variants (default: the first /usr/lib/jvm/*-25-*)")
    parser.add_argument("--out", default=str(ROOT / "bench/results/coldstart"))
    parser.add_argument("--report", action="store_true", help="print the table of OUT/coldstart.json")
    args = parser.parse_args()
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}: choose from {','.join(VARIANTS)}")
    if any(VARIANTS[v].runtime == "jdk25" for v in args.variants) and not args.report \
            and not (args.jdk25 and spark43_site_packages()):
        parser.error("the jdk25 variants need a JDK 25 (--jdk25) and Spark 4.3 in .venv-spark43 (scripts/install.sh)")

    def terminated(signum, frame):  # run the finally blocks: stop the child and the endpoint
        raise SystemExit(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminated)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = json.loads((out / "coldstart.json").read_text()) if args.report else measure(args, out)
    print("\n".join(table(report)))
    print("\n".join(["", *first_write_table(report), "", *first_write_medians(report)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
