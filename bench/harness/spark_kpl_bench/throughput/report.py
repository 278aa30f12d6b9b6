"""The benchmark's report: bench/results/<name>.json, saved as it grows, and the throughput plot."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Dict

from spark_kpl_bench.throughput.settings import WORKLOADS


def save_report(report: Dict[str, Any], out: Path, name: str = "throughput", finished: bool = False) -> None:
    """Writes OUT/<name>.json: after every entry, so that a run stopped midway keeps what it measured;
    ``finished`` stamps its end first."""
    if finished:
        report["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (out / f"{name}.json").write_text(json.dumps(report, indent=1, default=str) + "\n")


def plot(report: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = [e for e in report["results"] if e.get("records_per_s") and e["workload"] in WORKLOADS]
    workloads = [w for w in WORKLOADS if any(e["workload"] == w for e in entries)]
    fig, axes = plt.subplots(3, len(workloads), figsize=(6 * len(workloads), 12), squeeze=False)
    for col, workload in enumerate(workloads):
        rows = [e for e in entries if e["workload"] == workload]
        names = [e["producer"] for e in rows]
        med = [e["records_per_s"]["median"] for e in rows]
        lo = [m - e["records_per_s"]["min"] for m, e in zip(med, rows)]
        hi = [e["records_per_s"]["max"] - m for m, e in zip(med, rows)]
        ax = axes[0][col]
        ax.bar(names, med, yerr=[lo, hi], capsize=6, color="tab:blue")
        ax.set_yscale("log")
        ax.set_title(f"{workload}: records/s (median, min-max bars)")
        for i, m in enumerate(med):
            ax.text(i, m, f"{m:,.0f}", ha="center", va="bottom", fontsize=8)
        ax = axes[1][col]
        ax.bar(names, [e["peak_rss_bytes"] / 2**20 for e in rows], color="tab:orange")
        ax.set_title(f"{workload}: peak RSS of the producer's process tree (MiB)")
        ax = axes[2][col]
        per_record = [e.get("kinesis", {}).get("user_records_per_record", 0) for e in rows]
        ax.bar(names, per_record, color="tab:green")
        if any(per_record):
            ax.set_yscale("log")
        ax.set_title(f"{workload}: user records per Kinesis record (endpoint)")
        for i, ratio in enumerate(per_record):
            if ratio:
                ax.text(i, ratio, f"{ratio:,.1f}", ha="center", va="bottom", fontsize=8)
    for ax in axes.flat:
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(out / "throughput.png", dpi=100)
