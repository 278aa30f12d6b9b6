"""The daemon's allocator: the KPL daemon started through the sink's launcher (glibc's allocator set to
hand back what it frees, docs/native-daemon.md) against the same daemon started bare, alternated.

python bench/daemon_allocator.py [--rounds 3] [--steady-rounds 2] [--out bench/results/daemon-allocator]

Each round runs bench/shards.py twice, launcher then bare (--bare-daemon), at 8 and 1,024 shards (300,000
rows, 3 timed writes per stream, each stream in a fresh JVM); each steady round likewise at 8 shards with
1,500,000 rows, where the rate is the JVM's steady one. Every run's report stays in OUT/<mode>-<round>/;
OUT/daemon-allocator.{json,png} hold the daemon's peak RSS, the rate and the daemon's CPU per record by
mode. --report reads them back.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
MODES = {"launcher": [], "bare": ["--bare-daemon"]}
SHAPES = {"shards": ["--shards", "8,1024", "--runs", "3"],
          "steady": ["--shards", "8", "--records", "1500000", "--runs", "3"]}


def run_rounds(out: Path, shape: str, rounds: int) -> None:
    for round_ in range(1, rounds + 1):
        for mode, flags in MODES.items():
            folder = out / f"{shape}-{mode}-{round_}"
            folder.mkdir(parents=True, exist_ok=True)
            command = [sys.executable, str(ROOT / "bench/shards.py"), *SHAPES[shape], *flags, "--out", str(folder)]
            print(" ".join(command), flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def runs_of(out: Path) -> List[Dict[str, Any]]:
    """One row per stream of every run: shape, mode, round, shards, daemon peak MiB, records/s, daemon µs/record
    and user records per Kinesis record."""
    rows = []
    for report_file in sorted(out.glob("*-*-*/shards.json")):
        shape, mode, round_ = report_file.parent.name.split("-")
        for entry in json.loads(report_file.read_text())["results"]:
            if entry.get("records_per_s"):
                rows.append({"shape": shape, "mode": mode, "round": int(round_), "shards": entry["shards"],
                             "daemon_mib": entry["peak_rss_by_kind"]["daemon"] / 2**20,
                             "records_per_s": entry["records_per_s"]["median"],
                             "daemon_us_per_record": entry["cpu_us_per_record"]["daemon"],
                             "user_records_per_record": entry["kinesis"]["user_records_per_record"]})
    return rows


def summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """By shape, mode and shard count: each figure's median and range over the rounds."""
    groups: Dict[str, Dict[str, List[float]]] = {}
    for row in rows:
        key = f"{row['shape']} {row['mode']} {row['shards']}"
        for figure in ("daemon_mib", "records_per_s", "daemon_us_per_record", "user_records_per_record"):
            groups.setdefault(key, {}).setdefault(figure, []).append(row[figure])
    return {key: {figure: {"median": statistics.median(values), "min": min(values), "max": max(values),
                           "values": values} for figure, values in figures.items()}
            for key, figures in groups.items()}


def ratios(rows: List[Dict[str, Any]]) -> Dict[str, List[float]]:
    """The daemon's peak at 1,024 shards over its peak at 8, per run of each mode."""
    by_run: Dict[tuple, Dict[int, float]] = {}
    for row in rows:
        if row["shape"] == "shards":
            by_run.setdefault((row["mode"], row["round"]), {})[row["shards"]] = row["daemon_mib"]
    found: Dict[str, List[float]] = {}
    for (mode, _), peaks in sorted(by_run.items()):
        if {8, 1024} <= peaks.keys():
            found.setdefault(mode, []).append(round(peaks[1024] / peaks[8], 2))
    return found


def table(result: Dict[str, Any]) -> List[str]:
    lines = ["| shape | daemon started | shards | daemon peak RSS MiB, median (min–max) | records/s median | "
             "daemon CPU µs per record | user records per Kinesis record |", "|---|---|---:|---:|---:|---:|---:|"]
    for key, figures in result["summary"].items():
        shape, mode, shards = key.split()
        rss, rate, cpu = figures["daemon_mib"], figures["records_per_s"], figures["daemon_us_per_record"]
        packed = figures["user_records_per_record"]
        lines.append(f"| {shape} | {mode} | {int(shards):,} | {rss['median']:.0f} ({rss['min']:.0f}–{rss['max']:.0f}) "
                     f"| {rate['median']:,.0f} | {cpu['median']:.2f} | {packed['median']:.1f} |")
    lines += ["", "Daemon peak at 1,024 shards over its peak at 8, per run: "
              + "; ".join(f"{mode} {', '.join(map(str, values))}" for mode, values in result["ratios"].items())]
    return lines


def plot(result: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    keys = list(result["summary"])
    for i, key in enumerate(keys):
        values = result["summary"][key]["daemon_mib"]["values"]
        ax.scatter([i] * len(values), values, color="tab:blue" if " launcher " in key else "tab:orange")
    ax.set_xticks(range(len(keys)), [k.replace(" ", "\n") for k in keys], fontsize=8)
    ax.set_ylabel("daemon peak RSS (MiB)")
    ax.set_ylim(bottom=0)
    ax.set_title("KPL daemon: through the launcher against bare, each run")
    fig.tight_layout()
    fig.savefig(out / "daemon-allocator.png", dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steady-rounds", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench/results/daemon-allocator"))
    parser.add_argument("--report", action="store_true", help="summarise the runs in OUT, measuring nothing")
    args = parser.parse_args()
    out = Path(args.out)
    if not args.report:
        run_rounds(out, "shards", args.rounds)
        run_rounds(out, "steady", args.steady_rounds)
    command = (json.loads((out / "daemon-allocator.json").read_text())["command"] if args.report
               else " ".join([sys.executable] + sys.argv))
    rows = runs_of(out)
    result = {"command": command, "summary": summary(rows), "ratios": ratios(rows)}
    (out / "daemon-allocator.json").write_text(json.dumps(result, indent=1) + "\n")
    plot(result, out)
    print("\n".join(table(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
