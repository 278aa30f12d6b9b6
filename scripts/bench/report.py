"""Turn bench/throughput.json into the results table (markdown, stdout) and bench/throughput.png.

python scripts/bench/report.py [bench/throughput.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_throughput import WORKLOADS, plot  # noqa: E402


def table(report: dict) -> str:
    rows = [e for e in report["results"] if e["workload"] in WORKLOADS]
    out = ["| workload | producer | records/run | records/s median (min–max) | MB/s median | vs sink | "
           "peak RSS MiB (by process) | endpoint CPU s / wall s |", "|---|---|---:|---:|---:|---:|---|---:|"]
    for workload in WORKLOADS:
        base = next((e for e in rows if e["workload"] == workload and e["producer"] == "sink"
                     and e.get("records_per_s")), None)
        for e in (e for e in rows if e["workload"] == workload):
            rate = e.get("records_per_s")
            kinds = ", ".join(f"{k} {v / 2**20:.0f}" for k, v in sorted(e.get("peak_rss_by_kind", {}).items())
                              if v > 20 * 2**20)
            if not rate:
                out.append(f"| {workload} | {e['producer']} | {e['records']:,} | failed (rc {e['returncode']}) "
                           f"| | | | |")
                continue
            ratio = f"{rate['median'] / base['records_per_s']['median']:.2f}" if base else ""
            busy = sum(r["seconds"] for r in e["runs"])
            cpu = e.get("endpoint_cpu_seconds", 0) / max(e.get("process_seconds", 1), 1e-9)
            out.append(f"| {workload} | {e['producer']} | {e['records']:,} | {rate['median']:,.0f} "
                       f"({rate['min']:,.0f}–{rate['max']:,.0f}) | {e['mb_per_s_median']:.2f} | {ratio} | "
                       f"{e['peak_rss_bytes'] / 2**20:,.0f} ({kinds}) | {cpu:.2f} |")
    return "\n".join(out)


def extras(report: dict) -> str:
    out = []
    medians = {}
    for e in report["results"]:
        if e["workload"].startswith("tasks_") and e.get("records_per_s"):
            secs = sorted(r["seconds"] for r in e["runs"])
            medians[(e["workload"], e["producer"])] = secs[len(secs) // 2]
            out.append(f"- {e['workload']} ({e['records']:,} records of 100 B, {e['producer']}): "
                       f"{' / '.join(f'{s:.2f}' for s in secs)} s per write (min/median/max)")
        if e["workload"] == "cold_start":
            out.append(f"- cold start (fresh driver JVM, empty nativeDir, 1,000 records): save() → first PutRecords "
                       f"at the endpoint {e.get('save_to_first_put_s', float('nan')):.2f} s; whole write "
                       f"{e['runs'][0]['seconds'] if e['runs'] else float('nan'):.2f} s; process start → first "
                       f"PutRecords {e.get('process_start_to_first_put_s', float('nan')):.1f} s")
        if e["workload"] == "A_100B_kinesis_mock" and e.get("records_per_s"):
            out.append(f"- kinesis-mock, sink, {e['records']:,} × 100 B, 1 run: "
                       f"{e['records_per_s']['median']:,.0f} records/s")
    per_task = {producer: (medians[("tasks_2000x10", producer)] - medians[("tasks_2x10000", producer)]) / 1998
                for producer in ("sink", "noop")
                if ("tasks_2000x10", producer) in medians and ("tasks_2x10000", producer) in medians}
    if len(per_task) == 2:
        out.append(f"- per task (median of 2,000 tasks less that of 2, over 1,998): sink {per_task['sink'] * 1000:.1f} "
                   f"ms, Spark's noop sink {per_task['noop'] * 1000:.1f} ms; the sink's own share "
                   f"{(per_task['sink'] - per_task['noop']) * 1000:.1f} ms")
    return "\n".join(out)


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "bench/throughput.json"
    report = json.loads(path.read_text())
    print(table(report))
    print()
    print(extras(report))
    plot(report, path.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
