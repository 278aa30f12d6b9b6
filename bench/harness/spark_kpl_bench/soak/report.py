"""docs/soak.md from what a soak measured."""

from __future__ import annotations

from typing import Dict, List

from spark_kpl_bench.soak.histograms import Histogram, growers
from spark_kpl_bench.soak.memory import flatness
from spark_kpl_bench.soak.readback import Delivery, Leftovers
from spark_kpl_bench.soak.settings import (
    BURST_SECONDS,
    DRIVER_JAVA_OPTIONS,
    DRIVER_MEMORY,
    FAULT_KINDS,
    FAULTS_FROM_SECONDS,
    FLAT_WITHIN,
    MASTER,
    MIB,
    OUTAGE_SECONDS,
    PARTITIONS,
    RECORD_BYTES,
    ROWS_PER_BATCH,
    SETTLE_SECONDS,
    SHARDS,
    TOP_GROWERS,
    WARM_UP_MINUTES,
)
from spark_kpl_bench.soak.timeline import Event, Minute, mib
from spark_kpl_testing.endpoint import KINESIS_SHARD_BYTES_PER_SECOND, KINESIS_SHARD_RECORDS_PER_SECOND

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
