"""Latency benchmark: the sink's throughput with Kinesis 0, 25 and 50 ms away, side by side.

python bench/latency.py [--latencies 0,25,50] [--sizes 100,1000] [--rounds 5]

Executors reach Kinesis in 20 to 50 ms in production, this machine's endpoint in none. One run of the
orchestrator hosts the project's KinesisEndpoint (store=False, 127.0.0.1, one stream of 16 shards) and,
per record size, starts a child (bench/throughput.py's, a fresh JVM) that caches the rows, makes a
one-row warm-up write and one untimed write of the whole workload, then --rounds rounds of timed
writes, one per latency in turn: before each, the endpoint's latency fault (added to every PutRecords
call) is set to that write's latency. Interleaved in one warm JVM, the latencies share its JIT state,
heap and daemon, and the machine's drift falls on all of them alike: the ratios compare the latency
alone (how a fresh JVM ramps up is bench/throughput.py's first-write column). The sink runs at its
defaults (aggregation=executor, the benchmark's KPL tuning). Rows: keys "k<id>", 600,000 of 100 B,
200,000 of 1 KB, 30,000 of 10 KB.

Per size and latency: records/s (median of the rounds) and its share of the same size's rate at 0
ms; the target is >= 0.8 at +25 and +50 ms. Writes bench/results/latency/latency.{json,png}; --report prints
the table of a saved run and redraws the plot.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from spark_kpl_bench.throughput.report import save_report
from spark_kpl_bench.throughput.settings import KPL_TUNING, SHARDS
from spark_kpl_bench.throughput.study import sink_in_fresh_jvm, study_main, study_start
from spark_kpl_bench.throughput.summary import cpu_per_record, summarize, timed_runs
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.env import apply_loopback_env

apply_loopback_env()  # before any JVM or KPL daemon starts

STREAM = "bench-latency"
#: Rows per write by record size: each write moves a similar number of bytes.
RECORDS = {100: 600_000, 1000: 200_000, 10_000: 30_000}
#: The share of its zero-latency rate the sink keeps at each added latency.
TARGET_SHARE = 0.8


def measure(args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    work, report, _jar, log = study_start("latency", args, out, shards=SHARDS, kpl_tuning=KPL_TUNING,
        latencies_ms=args.latencies)
    endpoint = KinesisEndpoint({STREAM: SHARDS}, store=False).start()

    def latency_of(run: int) -> int:
        """Run 0 is the untimed write, at no added latency; then the latencies in turn."""
        return 0 if run == 0 else args.latencies[(run - 1) % len(args.latencies)]

    try:
        options = {**endpoint.kpl_options(), **KPL_TUNING, "aggregation": "executor", **args.sink_options}
        for size in args.sizes:
            records = RECORDS.get(size, 30_000_000 // size)
            runs = args.rounds * len(args.latencies)
            print(f"[{time.strftime('%H:%M:%S')}] {size} B: {records} records x (1 warm-up + {args.rounds} rounds "
                  f"of {args.latencies} ms)", flush=True)
            entry = sink_in_fresh_jvm(STREAM, records, size, runs, options, args.heap, log, endpoint.stats,
                                      before_run=lambda run: endpoint.set_faults(latency=latency_of(run) / 1000))
            endpoint.set_faults(Faults())
            for index, run in enumerate(entry["runs"]):
                run["latency_ms"] = latency_of(index)
            entry["workload"] = f"latency_{size}B"
            entry["by_latency"] = {ms: by_latency(entry, ms) for ms in args.latencies}
            report["results"].append(entry)
            print(json.dumps({"by_latency": entry["by_latency"], "returncode": entry["returncode"]}), flush=True)
            save_report(report, out, "latency")
    finally:
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
    save_report(report, out, "latency", finished=True)
    return report


def by_latency(entry: Dict[str, Any], latency_ms: int) -> Dict[str, Any]:
    """The timed runs at one latency, summarized as throughput.py summarizes a whole entry."""
    runs = [r for r in timed_runs(entry) if r["latency_ms"] == latency_ms]
    part: Dict[str, Any] = {"runs": runs}
    summarize(part, entry["record_bytes"])
    part["cpu_us_per_record"] = cpu_per_record(part)
    del part["runs"]
    return part


def _share(entry: Dict[str, Any], latency_ms: int) -> float:
    """The median rate at ``latency_ms`` against the same JVM's at 0 ms."""
    rates = {int(ms): part["records_per_s"]["median"] for ms, part in entry["by_latency"].items()}
    return rates[latency_ms] / rates[0]


def table(report: Dict[str, Any]) -> List[str]:
    lines = ["| record | added latency per PutRecords | records/s median (min–max) | vs 0 ms | target | "
             "user records per Kinesis record | PutRecords calls/s | CPU µs per record: JVM / daemon |",
             "|---:|---:|---:|---:|---|---:|---:|---:|"]
    for e in report["results"]:
        for ms, part in sorted(e.get("by_latency", {}).items(), key=lambda item: int(item[0])):
            rate, kinesis, cpu = part["records_per_s"], part.get("kinesis", {}), part.get("cpu_us_per_record", {})
            share = _share(e, int(ms))
            target = "–" if int(ms) == 0 else ("met" if share >= TARGET_SHARE else "**missed**")
            lines.append(f"| {e['record_bytes']:,} B | {ms} ms | {rate['median']:,.0f} "
                         f"({rate['min']:,.0f}–{rate['max']:,.0f}) | {share:.2f} | {target} | "
                         f"{kinesis.get('user_records_per_record', 0):.1f} | {kinesis.get('put_calls_per_s', 0):.1f} | "
                         f"{cpu.get('jvm', 0):.2f} / {cpu.get('daemon', 0):.2f} |")
    return lines


def plot(report: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for e in report["results"]:
        latencies = sorted(int(ms) for ms in e.get("by_latency", {}))
        ax.plot(latencies, [_share(e, ms) for ms in latencies], marker="o", label=f"{e['record_bytes']} B")
    ax.axhline(TARGET_SHARE, linestyle="--", color="grey", label=f"target {TARGET_SHARE}")
    ax.set_xlabel("latency added to each PutRecords call (ms)")
    ax.set_ylabel("records/s against 0 ms (median of rounds)")
    ax.set_ylim(0, 1.3)
    ax.legend()
    fig.suptitle(f"the sink at its defaults, {report['shards']} shards, local[2], latencies interleaved")
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latencies", type=lambda v: [int(n) for n in v.split(",")], default=[0, 25, 50],
                        help="milliseconds added to each PutRecords call; 0 first, the base of the ratios")
    parser.add_argument("--sizes", type=lambda v: [int(n) for n in v.split(",")], default=[100, 1000, 10_000])
    parser.add_argument("--rounds", type=int, default=5, help="timed writes per latency, interleaved")
    parser.add_argument("--sink-options", type=json.loads, default={}, help="JSON object of extra sink options")
    return study_main("latency", parser, measure, table, plot)


if __name__ == "__main__":
    sys.exit(main())
