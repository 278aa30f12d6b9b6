"""Streaming latency: how long a micro-batch's write takes through the kpl sink against Spark's noop sink.

python bench/streaming_latency.py [--batches 200] [--latencies-ms 0,25] [--warmup-batches 20] [--block 50]
    [--rows 1000] [--record-bytes 100] [--shards 16]

The orchestrator hosts the project's KinesisEndpoint (127.0.0.1) and, per endpoint
latency (the endpoint's latency fault, added to every Kinesis call the sink and its daemon make:
DescribeStreamSummary, ListShards, PutRecords), starts one child (a fresh Spark driver, local[2]).
The child runs the same query twice, from a rate-micro-batch source of --rows rows of --record-bytes
(100 B) per micro-batch in 2 partitions: once into the kpl sink, once into Spark's noop sink. After
--warmup-batches of each (not counted), the two queries take turns in blocks of --block micro-batches
(each restarted from its own checkpoint) until each has run --batches, so that both see the same
machine. Per micro-batch Spark's StreamingQueryProgress gives durationMs["addBatch"] (the sink's write,
its commit included) and durationMs["triggerExecution"] (the whole micro-batch).

The endpoint's stream has --shards shards; the Kinesis records it stored are taken block by block and
split into micro-batches by the rate source's value each row starts with, for the counted micro-batches'
PUT payload units against the fewest their rows need (spark_kpl_bench.payload_units; a micro-batch's
rows cannot share a Kinesis record with another's).

Writes bench/results/streaming-latency/streaming-latency.{json,png} and prints the tables: per latency, the sink's and
noop's p50 and p99, and the sink's extra (its percentile less noop's); then the payload units.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List

from spark_kpl_bench.payload_units import PayloadUnits, payload_units, units_table
from spark_kpl_bench.throughput.child import await_go
from spark_kpl_bench.throughput.child_process import run_process
from spark_kpl_bench.throughput.report import save_report
from spark_kpl_bench.throughput.settings import JAR, ROOT, SHARDS
from spark_kpl_bench.throughput.study import exit_on_sigterm, machine, sha256_of, snapshot_jar
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.env import apply_loopback_env
from spark_kpl_testing.records import KinesisRecord

apply_loopback_env()  # before any JVM or KPL daemon starts

STREAM = "bench-streaming"
#: Every Kinesis call of the sink (driver and tasks) and of its daemon: all of them are far away.
DISTANT_OPERATIONS = frozenset({"DescribeStreamSummary", "ListShards", "PutRecords"})
SINKS = ("noop", "kpl")
DURATIONS = ("addBatch", "triggerExecution")
#: The sink's own timings in its log (--sink-log): KplStreamingWrite's line per micro-batch, KplDataWriter's per task.
SINK_TIMINGS = {
    "driver: planning": r"planned in ([\d.]+) ms",
    "task: taking the producer": r"producer in ([\d.]+) ms",
    "task: rows into aggregates": r"rows in ([\d.]+) ms",
    "task: commit until acknowledged": r"acknowledged ([\d.]+) ms after the commit began",
    "driver: stream check at commit": r"stream checked in ([\d.]+) ms",
    "driver: batch log after the check": r"batch recorded (?:in )?([\d.]+) ms",
}


# ------------------------------------------------------------------ child


def run_block(spark, sink: str, batches: int, checkpoint: Path, rows: int, row_bytes: int,
              options: Dict[str, str]) -> List[dict]:
    """Runs the query into ``sink`` for ``batches`` more micro-batches (from its checkpoint) and returns
    their progress: batch id, input rows and durations."""
    from pyspark.sql import functions as F

    source = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows).option("numPartitions", 2)
              .load())
    records = source.select(
        F.rpad(F.concat(F.col("value").cast("string"), F.lit("-")), row_bytes, "x").alias("data"),
        F.concat(F.lit("k"), F.col("value").cast("string")).alias("partitionKey"))
    writer = records.writeStream.format(sink).option("checkpointLocation", str(checkpoint))
    if sink == "kpl":
        writer = writer.option("streamName", STREAM).options(**options)
    query = writer.start()
    try:
        first = None
        while query.isActive:
            progress = as_dict(query.lastProgress)
            if progress:
                first = progress["batchId"] if first is None else first
                if progress["batchId"] - first + 1 >= batches:
                    break
            time.sleep(0.05)
        if query.exception() is not None:
            raise RuntimeError(f"the {sink} query failed: {query.exception()}")
    finally:
        query.stop()
    done = [p for p in map(as_dict, query.recentProgress) if "addBatch" in p["durationMs"]]
    return [{"batch": p["batchId"], "rows": p["numInputRows"],
             **{name: p["durationMs"].get(name) for name in DURATIONS}} for p in done[:batches]]


def as_dict(progress: Any) -> Dict[str, Any]:
    """A StreamingQueryProgress as a dict (PySpark 3.5 gives dicts, 4.x objects); {} for None."""
    if progress is None:
        return {}
    return progress if isinstance(progress, dict) else json.loads(progress.json)


def child(args: argparse.Namespace) -> int:
    from spark_kpl_testing.session import spark_session

    options = json.loads(args.options)
    spark = spark_session("bench-streaming-latency", heap=args.heap,
                          conf={"spark.sql.shuffle.partitions": "2",
                                "spark.sql.streaming.numRecentProgressUpdates": "1000"})
    if args.sink_log:  # the sink's own timings per micro-batch and task (driver and tasks share this JVM)
        jvm = spark.sparkContext._jvm
        assert jvm is not None  # a local session's gateway
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            "sparkkpl", jvm.org.apache.logging.log4j.Level.DEBUG)
    work = Path(tempfile.mkdtemp(prefix="spark-kpl-streaming-"))
    try:
        done = {sink: 0 for sink in SINKS}
        blocks = 0
        for sink in SINKS:
            batches = run_block(spark, sink, args.warmup_batches, work / sink, args.rows, args.record_bytes, options)
            print(json.dumps({"sink": sink, "phase": "warmup", "batches": batches}), flush=True)
        while min(done.values()) < args.batches:
            for sink in SINKS:
                count = min(args.block, args.batches - done[sink])
                if count <= 0:
                    continue
                await_go(blocks)  # the orchestrator reads the endpoint's counters around each block
                blocks += 1
                batches = run_block(spark, sink, count, work / sink, args.rows, args.record_bytes, options)
                done[sink] += len(batches)
                print(json.dumps({"sink": sink, "phase": "measured", "batches": batches}), flush=True)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


# ------------------------------------------------------------------ orchestrator


def percentile(values: List[float], share: float) -> float:
    """Nearest rank: the smallest value with at least ``share`` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def summarize(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per sink: p50 and p99 of each duration over the counted micro-batches, and the endpoint's calls
    per micro-batch while the kpl query ran."""
    summary: Dict[str, Any] = {}
    for sink in SINKS:
        counted = [r for r in runs if r.get("sink") == sink and r["phase"] == "measured"]
        batches = [b for r in counted for b in r["batches"] if b["addBatch"] is not None]
        entry: Dict[str, Any] = {"batches": len(batches)}
        for name in DURATIONS:
            values = [b[name] for b in batches]
            entry[name] = {"p50": percentile(values, 0.5), "p99": percentile(values, 0.99)} if values else {}
        calls: Dict[str, int] = {}
        for r in counted:
            for operation, n in r.get("endpoint_calls", {}).items():
                calls[operation] = calls.get(operation, 0) + n
        if sink == "kpl" and batches:
            entry["calls_per_batch"] = {op: n / len(batches) for op, n in sorted(calls.items())}
        summary[sink] = entry
    if summary["kpl"]["batches"] and summary["noop"]["batches"]:
        summary["extra"] = {name: {p: summary["kpl"][name][p] - summary["noop"][name][p] for p in ("p50", "p99")}
                            for name in DURATIONS}
    return summary


def table(report: Dict[str, Any]) -> List[str]:
    lines = ["| endpoint latency per call | kpl addBatch p50 / p99 ms | noop addBatch p50 / p99 ms | "
             "kpl's extra p50 / p99 ms | target: extra p50 ≤ latency + 50 ms | kpl triggerExecution p50 / p99 ms | "
             "noop triggerExecution p50 / p99 ms | Kinesis calls per micro-batch | "
             "kpl's user records per Kinesis record |",
             "|---:|---:|---:|---:|---|---:|---:|---|---:|"]
    for entry in report["results"]:
        s = entry.get("summary", {})
        if "extra" not in s:
            lines.append(f"| +{entry['latency_ms']} ms | failed (rc {entry['returncode']}) | | | | | | | |")
            continue
        extra = s["extra"]["addBatch"]["p50"]
        met = "met" if extra <= entry["latency_ms"] + 50 else "**missed**"
        calls = ", ".join(f"{op} {n:.2f}" for op, n in s["kpl"].get("calls_per_batch", {}).items())
        lines.append(f"| +{entry['latency_ms']} ms | {_pair(s['kpl']['addBatch'])} | {_pair(s['noop']['addBatch'])} | "
                     f"{_pair(s['extra']['addBatch'])} | {met} ({extra:.0f} ≤ {entry['latency_ms'] + 50}) | "
                     f"{_pair(s['kpl']['triggerExecution'])} | {_pair(s['noop']['triggerExecution'])} | {calls} | "
                     f"{_user_records_per_kinesis_record(entry)} |")
    return lines


def _user_records_per_kinesis_record(entry: Dict[str, Any]) -> str:
    """Over the sink's measured blocks, the rows against the Kinesis records the endpoint stored."""
    blocks = [r for r in entry["runs"]
              if r.get("sink") == "kpl" and r.get("phase") == "measured" and r.get("endpoint")]
    rows = sum(b["rows"] for r in blocks for b in r["batches"])
    stored = sum(r["endpoint"].get("records_received", 0) for r in blocks)
    return f"{rows / stored:.1f}" if stored else "–"


def _pair(figures: Dict[str, float]) -> str:
    return f"{figures['p50']:.0f} / {figures['p99']:.0f}"


def sink_timings(log: str) -> List[Dict[str, float]]:
    """Per child (latency) in the log, the median of each of the sink's timings, warm-up included."""
    runs = log.split("\n=== ")[1:]
    return [{name: statistics.median(values) for name, pattern in SINK_TIMINGS.items()
             if (values := [float(v) for v in re.findall(pattern, run)])} for run in runs]


def breakdown(report: Dict[str, Any]) -> List[str]:
    entries = [e for e in report["results"] if e.get("sink_timings")]
    if not entries:
        return []
    lines = ["| per micro-batch, ms (median) | " + " | ".join(f"+{e['latency_ms']} ms" for e in entries) + " |",
             "|---|" + "---:|" * len(entries)]
    for name in SINK_TIMINGS:
        lines.append(f"| {name} | " + " | ".join(f"{e['sink_timings'].get(name, float('nan')):.1f}" for e in entries)
                     + " |")
    return lines


def units(report: Dict[str, Any]) -> List[str]:
    """The sink's PUT payload units over its counted micro-batches, per endpoint latency."""
    counted = []
    for e in report["results"]:
        if e.get("payload_units"):
            counted.append((f"+{e['latency_ms']} ms", PayloadUnits.from_dict(e["payload_units"])))
            counted.append((f"+{e['latency_ms']} ms: micro-batches a stop interrupted (not counted above)",
                            PayloadUnits.from_dict(e["payload_units"]["interrupted"])))
    if not counted:
        return []
    return ([f"PUT payload units of the kpl query's counted micro-batches ({report['rows_per_batch']:,} rows of "
             f"{report['record_bytes']} B each, {report.get('stream_shards', SHARDS):,} shards):", ""]
            + units_table(counted, "endpoint latency per call"))


def plot(report: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = [e for e in report["results"] if e.get("runs")]
    fig, axes = plt.subplots(1, max(1, len(entries)), figsize=(6 * max(1, len(entries)), 4), squeeze=False)
    for ax, entry in zip(axes[0], entries):
        for sink in SINKS:
            values = sorted(b["addBatch"] for r in entry["runs"] if r.get("sink") == sink and r["phase"] == "measured"
                            for b in r["batches"] if b["addBatch"] is not None)
            ax.plot(values, [(i + 1) / len(values) for i in range(len(values))], label=sink)
        ax.set_xscale("log")
        ax.set_xlabel("addBatch ms")
        ax.set_ylabel("share of micro-batches")
        ax.set_title(f"endpoint +{entry['latency_ms']} ms per call")
        ax.legend()
    fig.suptitle(f"{report['rows_per_batch']:,} rows per micro-batch, 2 partitions, local[2]: addBatch CDF")
    fig.tight_layout()
    fig.savefig(out / "streaming-latency.png", dpi=80)


def recording_calls(endpoint: KinesisEndpoint, calls: List[Dict[str, int]]) -> Callable[[], Dict[str, Any]]:
    """The endpoint's counters for run_process, keeping its calls by operation at each read."""
    def counters() -> Dict[str, Any]:
        stats = endpoint.stats()
        calls.append(stats["calls"])
        return stats
    return counters


def micro_batch_units(records: Iterable[KinesisRecord], rows_per_batch: int) -> Dict[int, PayloadUnits]:
    """The units of each micro-batch's Kinesis records, by batch id: the rate source numbers rows on from
    batch to batch, and each row's data starts with its number."""
    batches: Dict[int, List[KinesisRecord]] = defaultdict(list)
    for record in records:
        first = record.user_records()[0].data
        batches[int(first.split(b"-", 1)[0]) // rows_per_batch].append(record)
    return {batch: payload_units(stored) for batch, stored in batches.items()}


def counting_units(endpoint: KinesisEndpoint, rows_per_batch: int,
                   taken: List[Dict[int, PayloadUnits]]) -> Callable[[int], None]:
    """run_process's hook before each measured block: the Kinesis records stored since the last call are the last
    block's (at the first call: the warm-ups'); taken, so the endpoint holds one block at a time."""
    def before_run(_run: int) -> None:
        taken.append(micro_batch_units(endpoint.kinesis_records(STREAM, take=True), rows_per_batch))
    return before_run


def counted_units(runs: List[Dict[str, Any]], taken: List[Dict[int, PayloadUnits]]) -> Dict[str, Any]:
    """The units of the kpl query's counted micro-batches (``taken``: the warm-ups', then each measured block's),
    and apart those of the micro-batch each block's stop interrupted (its records sent; Spark runs it again after
    the restart, where it is counted)."""
    counted = interrupted = PayloadUnits()
    measured = [run for run in runs if run.get("phase") == "measured"]
    for run, by_batch in zip(measured, taken[1:]):
        if run["sink"] != "kpl":
            continue
        ids = {b["batch"] for b in run["batches"]}
        for batch, units in by_batch.items():
            if batch in ids:
                counted += units
            else:
                interrupted += units
    return {**counted.as_dict(), "interrupted": interrupted.as_dict()}


def measure(args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="spark-kpl-streaming-bench-"))
    report: Dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv), "started_utc": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows_per_batch": args.rows, "record_bytes": args.record_bytes,
        "stream_shards": args.shards, "batches": args.batches, "warmup_batches": args.warmup_batches,
        "block": args.block, "sink_options": args.sink_options, "results": []}
    jar = snapshot_jar(work, JAR)  # others may rebuild build/libs meanwhile
    os.environ["SPARK_KPL_JAR"] = str(jar)
    report["machine"] = machine(jar)
    report["jar_sha256"] = sha256_of(jar)
    log = out / "streaming-latency.log"
    log.write_text("")
    endpoint = KinesisEndpoint({STREAM: args.shards}).start()
    try:
        options = {**endpoint.kpl_options(), **args.sink_options}
        for latency_ms in args.latencies_ms:
            endpoint.set_faults(Faults(latency=latency_ms / 1000, operations=DISTANT_OPERATIONS))
            print(f"[{time.strftime('%H:%M:%S')}] +{latency_ms} ms: {args.warmup_batches} + {args.batches} "
                  f"micro-batches per sink", flush=True)
            command = [sys.executable, str(Path(__file__).resolve()), "child", "--heap", args.heap,
                       "--rows", str(args.rows),
                       "--record-bytes", str(args.record_bytes), "--batches", str(args.batches), "--warmup-batches",
                       str(args.warmup_batches), "--block", str(args.block), "--options", json.dumps(options),
                       *(["--sink-log"] if args.sink_log else [])]
            calls: List[Dict[str, int]] = []  # the endpoint's calls by operation, before and after each block
            taken: List[Dict[int, PayloadUnits]] = []  # per measured block; the noop query's store nothing
            entry = run_process(command, log, timeout=1800, counters=recording_calls(endpoint, calls),
                                before_run=counting_units(endpoint, args.rows, taken))
            taken.append(micro_batch_units(endpoint.kinesis_records(STREAM, take=True), args.rows))
            entry["payload_units"] = counted_units(entry["runs"], taken)
            measured = [run for run in entry["runs"] if run.get("phase") == "measured"]
            for run, before, after in zip(measured, calls[::2], calls[1::2]):
                run["endpoint_calls"] = {op: n - before.get(op, 0) for op, n in after.items() if n > before.get(op, 0)}
            entry.update(latency_ms=latency_ms, summary=summarize(entry["runs"]))
            report["results"].append(entry)
            print("\n".join(table({"results": [entry]})[2:]), flush=True)
            save_report(report, out, "streaming-latency")
    finally:
        endpoint.set_faults(Faults())
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
    save_report(report, out, "streaming-latency", finished=True)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd")
    c = sub.add_parser("child")
    c.add_argument("--options", required=True)
    c.add_argument("--sink-log", action="store_true")
    for p in (parser, c):
        p.add_argument("--batches", type=int, default=200, help="counted micro-batches per sink and latency")
        p.add_argument("--warmup-batches", type=int, default=20, help="micro-batches per sink before, not counted")
        p.add_argument("--block", type=int, default=50, help="micro-batches of one query before the other's turn")
        p.add_argument("--rows", type=int, default=1000, help="rows per micro-batch")
        p.add_argument("--record-bytes", type=int, default=100, help="bytes of data per row")
        p.add_argument("--heap", default="2g")
    parser.add_argument("--shards", type=int, default=SHARDS, help="the stream's shards")
    parser.add_argument("--latencies-ms", type=lambda v: [int(n) for n in v.split(",")], default=[0, 25])
    parser.add_argument("--sink-options", type=json.loads, default={}, help="JSON object of extra sink options")
    parser.add_argument("--sink-log", action="store_true",
                        help="the sink's DEBUG log (its per-micro-batch and per-task timings) into the .log file")
    parser.add_argument("--out", default=str(ROOT / "bench/results/streaming-latency"))
    parser.add_argument("--report", action="store_true", help="print the table of OUT/streaming-latency.json, redraw")
    args = parser.parse_args()
    if args.cmd == "child":
        return child(args)
    exit_on_sigterm()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = json.loads((out / "streaming-latency.json").read_text()) if args.report else measure(args, out)
    log = out / "streaming-latency.log"
    if log.exists():
        for entry, timings in zip(report["results"], sink_timings(log.read_text())):
            entry["sink_timings"] = timings
        save_report(report, out, "streaming-latency")
    print("\n".join(table(report) + [""] + breakdown(report) + [""] + units(report)))
    plot(report, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
