"""Cluster benchmark: the sink on standalone clusters (2 executors of 1 core; 1 of 2) against local[2].

python bench/cluster.py [--shards 16,1024] [--records 600000] [--runs 3]

local[2] runs both tasks in the driver's JVM with one KPL daemon; the cluster runs one task in each of
two executor JVMs, each with its own producer and daemon, as production does. One run of the
orchestrator hosts the project's KinesisEndpoint (store=False, 127.0.0.1) with one stream per shard
count, and two StandaloneClusters (2 workers of 1 core, and 1 worker of 2 cores, 2 GiB each); per
stream it starts three children (bench/throughput.py's, each a fresh driver JVM): one on local[2], one
on each cluster, with the same rows (100 B, keys "k<id>", cached before the writes), the same sink
options and the same endpoint: one warm-up write, one untimed write of the workload, then --runs
timed ones.

Per stream and mode: records/s (median), the cluster's share of local mode's (target >= 0.8), and
what Kinesis stored: user records per Kinesis record (each concurrent task fills aggregates of its
own, so the count per shard falls as tasks grow; docs/aggregation.md gives the model). The sampled
RSS covers the driver's process tree only, which on the cluster leaves the executors out: it is not
reported. CPU per record counts the executors' trees too (JVM and KPL daemon), by kind. Writes
bench/results/cluster/cluster.{json,png}; --report prints the table of a saved run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

from spark_kpl_bench.throughput.report import save_report
from spark_kpl_bench.throughput.settings import KPL_TUNING
from spark_kpl_bench.throughput.study import sink_in_fresh_jvm, study_main, study_start
from spark_kpl_testing.cluster import StandaloneCluster
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.env import apply_loopback_env

apply_loopback_env()  # before any JVM or KPL daemon starts

RECORD_BYTES = 100
#: local mode; the issue's shape (two executors of one core); and one executor of two cores, which tells
#: the cost of a second executor JVM and daemon from the cost of leaving local mode.
MODES = ("local[2]", "cluster 2 x 1 core", "cluster 1 x 2 cores")
TARGET_MODE = MODES[1]
#: The share of local mode's rate the cluster keeps.
TARGET_SHARE = 0.8


def stream_name(shards: int) -> str:
    return f"bench-cluster-{shards}"


def measure(args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    work, report, jar, log = study_start("cluster", args, out, records=args.records, record_bytes=RECORD_BYTES,
        kpl_tuning=KPL_TUNING)
    endpoint = KinesisEndpoint({stream_name(n): n for n in args.shards}, store=False).start()
    try:
        with StandaloneCluster(workers=2, cores_per_worker=1, memory_per_worker="2g") as two, \
                StandaloneCluster(workers=1, cores_per_worker=2, memory_per_worker="2g") as one:
            setups: List[Tuple[str, Dict[str, str], Callable[[], Sequence[int]]]] = [("local[2]", {}, tuple)] + [
                (cluster.master_url, {**cluster.spark_conf(), "spark.jars": str(jar)}, cluster.executor_pids)
                for cluster in (two, one)]
            options = {**endpoint.kpl_options(), **KPL_TUNING, "aggregation": "executor"}
            for shards in args.shards:
                for mode, (master, conf, executors) in zip(MODES, setups):
                    print(f"[{time.strftime('%H:%M:%S')}] {shards} shards, {mode}: {args.records} records x "
                          f"(1 warm-up + {args.runs})", flush=True)
                    entry = sink_in_fresh_jvm(stream_name(shards), args.records, RECORD_BYTES, args.runs, options,
                                              args.heap, log, endpoint.stats, spark=(master, conf), also=executors)
                    entry.update(workload=f"cluster_{shards}", shards=shards, mode=mode)
                    for partial in ("peak_rss_by_kind", "peak_rss_bytes"):
                        entry.pop(partial, None)  # the driver's tree only: misleading for the cluster
                    report["results"].append(entry)
                    print(json.dumps({k: entry.get(k) for k in ("records_per_s", "kinesis", "returncode")}),
                          flush=True)
                    save_report(report, out, "cluster")
    finally:
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
    save_report(report, out, "cluster", finished=True)
    return report


def _share(entry: Dict[str, Any], rows: List[Dict[str, Any]]) -> float:
    local = next(e for e in rows if e["shards"] == entry["shards"] and e["mode"] == MODES[0])
    return entry["records_per_s"]["median"] / local["records_per_s"]["median"]


def table(report: Dict[str, Any]) -> List[str]:
    rows = [e for e in report["results"] if e.get("records_per_s")]
    lines = ["| shards | Spark | records/s median (min–max) | vs local[2] | target | first write (cold) records/s | "
             "user records per Kinesis record | CPU µs per record: JVMs / daemons / endpoint |",
             "|---:|---|---:|---:|---|---:|---:|---:|"]
    for e in rows:
        rate, share = e["records_per_s"], _share(e, rows)
        target = "–" if e["mode"] != TARGET_MODE else ("met" if share >= TARGET_SHARE else "**missed**")
        lines.append(f"| {e['shards']:,} | {e['mode']} | {rate['median']:,.0f} "
                     f"({rate['min']:,.0f}–{rate['max']:,.0f}) | {share:.2f} | {target} | "
                     f"{e.get('first_run_records_per_s', 0):,.0f} | "
                     f"{e.get('kinesis', {}).get('user_records_per_record', 0):.1f} | "
                     f"{_cpu(e)} |")
    return lines


def timeline_table(report: Dict[str, Any]) -> List[str]:
    """Where a write's time goes, from Spark's own record of its tasks (the child's task_timeline):
    medians over the timed runs, in ms from the write's start."""
    lines = ["| shards | Spark | write ms | first task launched | launches spread | ends spread | after the last "
             "task | tasks' busy share of 2 cores |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for e in report["results"]:
        phases = [_phases(run) for run in e.get("runs", []) if not run.get("warmup") and run.get("task_timeline")]
        if phases:
            median = {key: statistics.median(p[key] for p in phases) for key in phases[0]}
            cells = [f"{median[key]:,.0f}" for key in ("write", "first_launch", "launch_spread", "end_spread",
                                                       "after_last")]
            lines.append(f"| {e['shards']:,} | {e['mode']} | {' | '.join(cells)} | {median['busy_share']:.2f} |")
    return lines


def _phases(run: Dict[str, Any]) -> Dict[str, float]:
    """One write's phases from the tasks of its writing stage: of the stages Spark ran for it (the write,
    then the small read of its result), the one whose tasks took the most time."""
    by_stage: Dict[int, List[Dict[str, Any]]] = {}
    for task in run["task_timeline"]:
        if task["ms"] is not None:
            by_stage.setdefault(task["stage"], []).append(task)
    tasks = max(by_stage.values(), key=lambda stage: sum(t["ms"] for t in stage))
    launches = [t["launched_ms"] for t in tasks]
    ends = [t["launched_ms"] + t["ms"] for t in tasks]
    write_ms = run["seconds"] * 1000
    return {"write": write_ms, "first_launch": min(launches), "launch_spread": max(launches) - min(launches),
            "end_spread": max(ends) - min(ends), "after_last": write_ms - max(ends),
            "busy_share": sum(t["ms"] for t in tasks) / (2 * write_ms)}


def _cpu(entry: Dict[str, Any]) -> str:
    cpu = entry.get("cpu_us_per_record", {})
    return " / ".join(f"{cpu.get(kind, 0):.2f}" for kind in ("jvm", "daemon", "endpoint"))


def plot(report: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [e for e in report["results"] if e.get("records_per_s")]
    shards = sorted({e["shards"] for e in rows})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    width = 0.27
    for offset, mode in zip((-width, 0, width), MODES):
        same = {e["shards"]: e for e in rows if e["mode"] == mode}
        x = [i + offset for i in range(len(shards))]
        axes[0].bar(x, [same[n]["records_per_s"]["median"] if n in same else 0 for n in shards], width, label=mode)
        axes[1].bar(x, [same[n].get("kinesis", {}).get("user_records_per_record", 0) if n in same else 0
                        for n in shards], width, label=mode)
    axes[0].set_title("records/s (median)")
    axes[1].set_title("user records per Kinesis record")
    for ax in axes:
        ax.set_xticks(range(len(shards)), [f"{n:,} shards" for n in shards])
        ax.legend()
    fig.suptitle(f"{report['records']:,} records of {report['record_bytes']} B: local[2] against clusters' executors")
    fig.tight_layout()
    fig.savefig(out / "cluster.png", dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=lambda v: [int(n) for n in v.split(",")], default=[16, 1024])
    parser.add_argument("--records", type=int, default=600_000)
    parser.add_argument("--runs", type=int, default=3, help="timed writes per stream and mode, after one untimed")
    return study_main("cluster", parser, measure, lambda report: table(report) + [""] + timeline_table(report), plot)


if __name__ == "__main__":
    sys.exit(main())
