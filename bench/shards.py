"""Shard-count benchmark: the sink writing the same rows to streams of 8 to 4,096 shards, side by side.

python bench/shards.py [--shards 8,1024,4096] [--records 300000] [--record-bytes 100] [--runs 3]

One run of the orchestrator hosts the project's KinesisEndpoint (127.0.0.1) with one
stream per shard count, and starts, per stream, a child (bench/throughput.py's, a fresh JVM) that
caches the rows, makes a one-row warm-up write (its producer starts and lists the stream: past 1,000
shards in pages, as Kinesis pages ListShards), one untimed write of the whole workload, then --runs
timed writes. Rows: 100 B (--record-bytes), partition key "k<id>" (all distinct, so spread evenly over
the hash space by MD5), written by the sink with aggregation=executor (grouped per shard from the stream's map).

Per stream: records/s (median of the timed runs), the peak RSS of the JVM and of the KPL daemon, and
what the endpoint stored (user records per Kinesis record), and, from the Kinesis records it stored
(taken write by write), the timed writes' PUT payload units against the fewest their rows need
(spark_kpl_bench.payload_units). Writes bench/results/shards/shards.{json,png};
the targets (1,024 shards against 8: throughput >= 0.7, JVM and daemon peak RSS <= 1.5 x) are
printed, with the table, by --report.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

from spark_kpl import native
from spark_kpl_bench.payload_units import PayloadUnits, payload_units, units_table
from spark_kpl_bench.throughput.report import save_report
from spark_kpl_bench.throughput.study import sink_in_fresh_jvm, study_main, study_start
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.env import apply_loopback_env

apply_loopback_env()  # before any JVM or KPL daemon starts

#: The shard counts the targets compare: the largest against the smallest.
BASE, TARGET = 8, 1024
THROUGHPUT_SHARE, RSS_RATIO = 0.7, 1.5
#: Issue 51: the fewest PUT payload units over those used, in batch writes up to TARGET shards.
UNITS_EFFICIENCY = 0.8


def stream_name(shards: int) -> str:
    return f"bench-{shards}-shards"


def measure(args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    work, report, jar, log = study_start("shards", args, out, records=args.records,
        record_bytes=args.record_bytes, kpl_tuning={}, fixed_heap=args.fixed_heap, bare_daemon=args.bare_daemon,
        partitions=args.partitions)
    endpoint = KinesisEndpoint({stream_name(n): n for n in args.shards}).start()
    try:
        # No RateLimit (KPL_TUNING's): given, it would turn the daemon's shard prediction on for the
        # tasks' aggregates (KplDerivation.forExecutorAggregation), which the sink runs without.
        options = {**endpoint.kpl_options(), "aggregation": "executor", **args.sink_options}
        if args.bare_daemon:
            # Given as NativeExecutable, the daemon the sink would place starts without its launcher.
            options["NativeExecutable"] = str(native.install(jar=jar))
        for shards in args.shards:
            print(f"[{time.strftime('%H:%M:%S')}] {shards} shards: {args.records} records x (1 warm-up + "
                  f"{args.runs})", flush=True)
            writes: List[PayloadUnits] = []
            entry = sink_in_fresh_jvm(stream_name(shards), args.records, args.record_bytes, args.runs, options,
                                      args.heap, log, endpoint.stats,
                                      before_run=counting_units(endpoint, shards, writes),
                                      fixed_heap=args.fixed_heap, partitions=args.partitions)
            writes.append(payload_units(endpoint.kinesis_records(stream_name(shards), take=True)))
            for run, units in zip(entry["runs"], writes[1:]):  # the first: the one-row warm-up's
                run["payload_units"] = units.as_dict()
            timed = writes[2:]  # then the untimed write's
            if timed:
                entry["payload_units"] = sum(timed, PayloadUnits()).as_dict()
            entry.update(workload=f"shards_{shards}", shards=shards)
            report["results"].append(entry)
            print(json.dumps({k: entry.get(k) for k in ("records_per_s", "kinesis", "peak_rss_by_kind",
                                                        "returncode")}), flush=True)
            save_report(report, out, "shards")
    finally:
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
    save_report(report, out, "shards", finished=True)
    return report


def counting_units(endpoint: KinesisEndpoint, shards: int, writes: List[PayloadUnits]) -> Callable[[int], None]:
    """run_process's hook before each run: the Kinesis records stored since the last call are the last write's
    (at the first call: the one-row warm-up's); taken, so the endpoint holds one write at a time."""
    def before_run(_run: int) -> None:
        writes.append(payload_units(endpoint.kinesis_records(stream_name(shards), take=True)))
    return before_run


def table(report: Dict[str, Any]) -> List[str]:
    """The markdown table of the runs and the targets, 1,024 shards against 8."""
    rows = [e for e in report["results"] if e.get("records_per_s")]
    base = next((e for e in rows if e["shards"] == BASE), None)
    lines = ["| shards | records/s median (min–max) | vs 8 shards | first write (cold) records/s | "
             "peak RSS JVM MiB | peak RSS daemon MiB | heap: old gen peak / committed at it MiB | "
             "user records per Kinesis record | CPU µs per record: JVM / daemon / endpoint |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for e in rows:
        rate = e["records_per_s"]
        share = f"{rate['median'] / base['records_per_s']['median']:.2f}" if base else "–"
        lines.append(f"| {e['shards']:,} | {rate['median']:,.0f} ({rate['min']:,.0f}–{rate['max']:,.0f}) | {share} | "
                     f"{e.get('first_run_records_per_s', 0):,.0f} | {_mib(e, 'jvm')} | {_mib(e, 'daemon')} | "
                     f"{_old_gen(e)} | "
                     f"{e.get('kinesis', {}).get('user_records_per_record', 0):.1f} | {_cpu(e)} |")
    target = next((e for e in rows if e["shards"] == TARGET), None)
    if base and target:
        lines += ["", "| target (1,024 shards against 8) | measured | |", "|---|---:|---|"]
        share = target["records_per_s"]["median"] / base["records_per_s"]["median"]
        lines.append(f"| throughput ≥ {THROUGHPUT_SHARE} × | {share:.2f} | {_met(share >= THROUGHPUT_SHARE)} |")
        for kind in ("jvm", "daemon"):
            ratio = target["peak_rss_by_kind"][kind] / base["peak_rss_by_kind"][kind]
            lines.append(f"| {kind} peak RSS ≤ {RSS_RATIO} × | {ratio:.2f} | {_met(ratio <= RSS_RATIO)} |")
    counted = [e for e in rows if e.get("payload_units")]
    if counted:
        units = {e["shards"]: PayloadUnits.from_dict(e["payload_units"]) for e in counted}
        lines += ["", f"PUT payload units of the timed writes ({report['record_bytes']} B rows):", ""]
        lines += units_table([(f"{shards:,} shards", u) for shards, u in units.items()], "stream")
        lines += ["", f"target: efficiency ≥ {UNITS_EFFICIENCY} up to {TARGET:,} shards: "
                  + ", ".join(f"{shards:,} shards {u.efficiency:.2f} {_met(u.efficiency >= UNITS_EFFICIENCY)}"
                              for shards, u in units.items() if shards <= TARGET)]
    return lines


def _cpu(entry: Dict[str, Any]) -> str:
    cpu = entry.get("cpu_us_per_record", {})
    return " / ".join(f"{cpu[kind]:.2f}" if kind in cpu else "–" for kind in ("jvm", "daemon", "endpoint"))


def _old_gen(entry: Dict[str, Any]) -> str:
    """The old generation's peak use and the commitment at it (older runs did not record them: –)."""
    old = entry.get("heap_peaks", {}).get("G1 Old Gen")
    return f"{old['used'] / 2**20:,.0f} / {old['committed'] / 2**20:,.0f}" if old else "–"


def _mib(entry: Dict[str, Any], kind: str) -> str:
    return f"{entry['peak_rss_by_kind'].get(kind, 0) / 2**20:,.0f}"


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def plot(report: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [e for e in report["results"] if e.get("records_per_s")]
    shards = [e["shards"] for e in rows]
    fig, axes = plt.subplots(1, 4, figsize=(21, 4.5))
    axes[0].errorbar(shards, [e["records_per_s"]["median"] for e in rows],
                     yerr=[[e["records_per_s"]["median"] - e["records_per_s"]["min"] for e in rows],
                           [e["records_per_s"]["max"] - e["records_per_s"]["median"] for e in rows]],
                     marker="o", capsize=4)
    axes[0].set_title("records/s (median, min–max)")
    for kind in ("jvm", "daemon"):
        axes[1].plot(shards, [e["peak_rss_by_kind"].get(kind, 0) / 2**20 for e in rows], marker="o", label=kind)
    axes[1].set_title("peak RSS (MiB)")
    axes[1].legend()
    axes[2].plot(shards, [e.get("kinesis", {}).get("user_records_per_record", 0) for e in rows], marker="o")
    axes[2].set_yscale("log")
    axes[2].set_title("user records per Kinesis record")
    for kind in ("jvm", "daemon", "endpoint"):
        axes[3].plot(shards, [e.get("cpu_us_per_record", {}).get(kind, 0) for e in rows], marker="o", label=kind)
    axes[3].set_title("CPU µs per record (median run)")
    axes[3].legend()
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("shards")
        if ax is not axes[2]:
            ax.set_ylim(bottom=0)
    fig.suptitle(f"{report['records']:,} records of {report['record_bytes']} B, distinct keys, local[2]")
    fig.tight_layout()
    fig.savefig(out / "shards.png", dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=lambda v: [int(n) for n in v.split(",")], default=[8, 1024, 4096])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--record-bytes", type=int, default=100, help="bytes of data per row")
    parser.add_argument("--runs", type=int, default=3, help="timed writes per stream, after one untimed")
    parser.add_argument("--partitions", type=int, default=2,
                        help="tasks per write (local[2] runs two at once): one task fills one aggregate per shard "
                             "with the whole write's rows, as tasks sharing their aggregates would, up to the "
                             "task's cap on open aggregates (ShardAggregator.MAX_OPEN_BYTES)")
    parser.add_argument("--sink-options", type=json.loads, default={}, help="JSON object of extra sink options")
    parser.add_argument("--fixed-heap", action="store_true",
                        help="commit each child JVM's whole heap at start (-Xms = -Xmx, pre-touched): its RSS is "
                             "then the heap plus native memory, without G1's sizing")
    parser.add_argument("--bare-daemon", action="store_true",
                        help="start the KPL daemon bare, not through the launcher the sink places beside it: "
                             "glibc's allocator at its defaults (docs/native-daemon.md)")
    return study_main("shards", parser, measure, table, plot)


if __name__ == "__main__":
    sys.exit(main())
