"""Turn bench/results/throughput/throughput.json into the results tables (markdown, stdout) and
bench/results/throughput/throughput.png.

python bench/report.py [bench/results/throughput/throughput.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]

from spark_kpl_bench.throughput.report import plot  # noqa: E402
from spark_kpl_bench.throughput.settings import PLACE_SETTINGS, WORKLOADS  # noqa: E402
from spark_kpl_bench.throughput.summary import timed_runs  # noqa: E402

#: The sink's largest aggregate by default: the KPL's AggregationMaxSize (51,200) less the one-byte key
#: Kinesis bills with it.
AGGREGATION_MAX_BYTES = 51_199
#: Around an aggregate's protobuf: 4 magic bytes before, its 16-byte MD5 after.
AGGREGATE_FRAME_BYTES = 4 + 16
#: Kinesis's write limit per shard, which the quota workload's endpoint enforces.
SHARD_BYTES_PER_S = 1 << 20
#: Targets: the sink (aggregation=executor) against the per-record sink and boto3, by workload.
SPEEDUP_TARGETS = [("A_100B", "sink_kpl", 10.0, None), ("A_100B", "boto3", 10.0, 20.0),
                   ("M_1KB", "sink_kpl", 3.0, None), ("B_10KB", "sink_kpl", 1.0, None)]
QUOTA_CEILING_SHARE = 0.9
AGGREGATION_SHARE = 0.9


def results(report: dict) -> List[dict]:
    return [e for e in report["results"] if e["workload"] in WORKLOADS]


def find(report: dict, workload: str, producer: str) -> Optional[dict]:
    """The producer's entry in the workload, if it ran and measured a rate."""
    return next((e for e in results(report) if e["workload"] == workload and e["producer"] == producer
                 and e.get("records_per_s")), None)


def row(*cells: object) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def median_rate(entry: Optional[dict]) -> Optional[float]:
    return entry["records_per_s"]["median"] if entry else None


def ratio(report: dict, entry: dict, producer: str) -> str:
    base = median_rate(find(report, entry["workload"], producer))
    return f"{entry['records_per_s']['median'] / base:.2f}" if base else ""


def table(report: dict) -> str:
    out = ["| workload | producer | records/run | records/s median (min–max) | first run (cold) records/s | "
           "MB/s median | vs sink | vs boto3 | peak RSS MiB (by process) | endpoint CPU s / wall s |",
           "|---|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for workload in WORKLOADS:
        for e in (e for e in results(report) if e["workload"] == workload):
            rate = e.get("records_per_s")
            kinds = ", ".join(f"{k} {v / 2**20:.0f}" for k, v in sorted(e.get("peak_rss_by_kind", {}).items())
                              if v > 20 * 2**20)
            if not rate:
                out.append(row(workload, e["producer"], f"{e['records']:,}", f"failed (rc {e['returncode']})",
                               *[""] * 6))
                continue
            cpu = e.get("endpoint_cpu_seconds", 0) / max(e.get("process_seconds", 1), 1e-9)
            out.append(row(workload, e["producer"], f"{e['records']:,}",
                           f"{rate['median']:,.0f} ({rate['min']:,.0f}–{rate['max']:,.0f})",
                           f"{e['first_run_records_per_s']:,.0f}" if "first_run_records_per_s" in e else "",
                           f"{e['mb_per_s_median']:.2f}", ratio(report, e, "sink"), ratio(report, e, "boto3"),
                           f"{e['peak_rss_bytes'] / 2**20:,.0f} ({kinds})", f"{cpu:.2f}"))
    return "\n".join(out)


def kinesis_table(report: dict) -> str:
    out = ["| workload | producer | user records per Kinesis record | bytes per Kinesis record | "
           "Kinesis records per PutRecords | PutRecords calls/s | throttled share |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for workload in WORKLOADS:
        for e in (e for e in results(report) if e["workload"] == workload and e.get("kinesis")):
            k = e["kinesis"]
            out.append(row(workload, e["producer"], f"{k['user_records_per_record']:,.1f}",
                           f"{k['bytes_per_record']:,.0f}", f"{k['records_per_put_call']:,.1f}",
                           f"{k['put_calls_per_s']:,.1f}", f"{k['rejected_share']:.1%}"))
    return "\n".join(out)


def varint_bytes(value: int) -> int:
    n = 1
    while value >= 0x80:
        value >>= 7
        n += 1
    return n


def sub_record_bytes(index: int, data_bytes: int, key_bytes: int) -> int:
    """What the index-th user record, with a partition key of its own, adds to an aggregate as the
    sink's AggregateBuilder (and the KPL) count it: its key-table entry (tag, length, key) and its
    Record message (tag, length; key index; data with tag and length)."""
    key_entry = 1 + varint_bytes(key_bytes) + key_bytes
    body = 1 + varint_bytes(index) + 1 + varint_bytes(data_bytes) + data_bytes
    return key_entry + 1 + varint_bytes(body) + body


def sub_records_allowed(data_bytes: int, key_bytes: int) -> int:
    """How many such user records one aggregate of AGGREGATION_MAX_BYTES holds (at least one)."""
    size, count = AGGREGATE_FRAME_BYTES, 0
    while size + sub_record_bytes(count, data_bytes, key_bytes) <= AGGREGATION_MAX_BYTES:
        size += sub_record_bytes(count, data_bytes, key_bytes)
        count += 1
    return max(count, 1)


def quota_ceiling(entry: dict) -> float:
    """User records/s the quota stream takes if every byte of every shard carries data and key."""
    return entry["stream_shards"] * SHARD_BYTES_PER_S / (entry["record_bytes"] + entry["key_bytes_mean"])


def verdict(measured: Optional[float], goal: float, stretch: Optional[float] = None) -> str:
    if measured is None:
        return "not measured"
    if stretch is not None and measured >= stretch:
        return "met (stretch too)"
    return "met" if measured >= goal else "**missed**"


def targets(report: dict) -> str:
    out = ["| workload | target | measured | |", "|---|---|---|---|"]
    for workload, other, goal, stretch in SPEEDUP_TARGETS:
        sink_rate, base_rate = median_rate(find(report, workload, "sink")), median_rate(find(report, workload, other))
        measured = sink_rate / base_rate if sink_rate and base_rate else None
        shown = f"{sink_rate:,.0f} / {base_rate:,.0f} = **{measured:.2f}**" if measured else ""
        goal_text = f"sink ≥ {goal:g} × {other}" + (f" (stretch {stretch:g} ×)" if stretch else "")
        out.append(row(workload, goal_text, shown, verdict(measured, goal, stretch)))
    sink = find(report, "A_100B_quota", "sink")
    rate = median_rate(sink)
    if sink and rate is not None and "key_bytes_mean" in sink:  # recorded since the 1 KB workload came in
        ceiling = quota_ceiling(sink)
        share = rate / ceiling
        out.append(row("A_100B_quota",
                       f"sink ≥ {QUOTA_CEILING_SHARE:g} of the 1 MiB/s-per-shard ceiling ({sink['stream_shards']} "
                       f"shards × 1 MiB/s ÷ ({sink['record_bytes']} + {sink['key_bytes_mean']:.1f} key) B = "
                       f"{ceiling:,.0f} records/s)", f"{rate:,.0f} = **{share:.2f}** of it",
                       verdict(share, QUOTA_CEILING_SHARE)))
    for workload in WORKLOADS:
        sink, boto3 = find(report, workload, "sink"), find(report, workload, "boto3")
        if sink and boto3:
            kinds = sink["peak_rss_by_kind"]
            held = kinds.get("jvm", 0) + kinds.get("daemon", 0)
            measured = boto3["peak_rss_bytes"] / held
            out.append(row(workload, "peak RSS of the sink's JVM + daemon ≤ boto3's whole tree",
                           f"{held / 2**20:,.0f} MiB vs {boto3['peak_rss_bytes'] / 2**20:,.0f} MiB",
                           verdict(measured, 1.0)))
    for workload in WORKLOADS:
        sink = find(report, workload, "sink")
        if sink and sink.get("kinesis"):
            key_bytes = round(sink["key_bytes_mean"])
            allowed = sub_records_allowed(sink["record_bytes"], key_bytes)
            got = sink["kinesis"]["user_records_per_record"]
            out.append(row(workload, f"sink's user records per Kinesis record ≥ {AGGREGATION_SHARE:g} × the "
                                     f"{allowed} that fit in {AGGREGATION_MAX_BYTES:,} B ({sink['record_bytes']:,} B "
                                     f"+ {key_bytes} B key each)", f"{got:,.1f} = **{got / allowed:.2f}** ×",
                           verdict(got / allowed, AGGREGATION_SHARE)))
    return "\n".join(out)


def kpl_loop_settings(report: dict) -> str:
    out = []
    for workload, check in report.get("kpl_loop_settings", {}).items():
        differs = check.get("differs_from_sink_kpl")
        same = ("no sink_kpl run to compare with" if differs is None else
                "the same as sink_kpl's producer" if not differs else
                "differs from sink_kpl's producer in " + ", ".join(f"{k} (loop {v[0]}, sink {v[1]})"
                                                                   for k, v in differs.items()))
        shown = ", ".join(f"{k}={v}" for k, v in check["set"].items() if k not in PLACE_SETTINGS)
        out.append(f"- {workload}: kpl_loop's KPL settings other than the KPL's defaults: {shown}; "
                   f"{same} (file places aside)")
    return "\n".join(out)


def extras(report: dict) -> str:
    out = []
    medians = {}
    for e in report["results"]:
        if e["workload"].startswith("tasks_") and e.get("records_per_s"):
            secs = sorted(r["seconds"] for r in timed_runs(e))
            medians[(e["workload"], e["producer"])] = secs[len(secs) // 2]
            out.append(f"- {e['workload']} ({e['records']:,} records of 100 B, {e['producer']}): "
                       f"{' / '.join(f'{s:.2f}' for s in secs)} s per write (the timed runs, fastest first)")
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
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "bench/results/throughput/throughput.json"
    report = json.loads(path.read_text())
    sections: Dict[str, str] = {
        "Throughput and memory": table(report),
        "What the endpoint stored (medians over the timed runs)": kinesis_table(report),
        "Targets": targets(report),
        "KPL settings of the plain loop": kpl_loop_settings(report),
        "Per-task overhead, cold start, kinesis-mock": extras(report),
    }
    print("\n\n".join(f"### {title}\n\n{body}" for title, body in sections.items() if body))
    plot(report, path.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
