"""Figures from a producer's runs: rates, CPU per record, what the endpoint stored, KPL settings compared."""

from __future__ import annotations

import json
import statistics
from typing import Any, Dict, List, Optional

from spark_kpl_bench.throughput.settings import PLACE_SETTINGS


def timed_runs(entry: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [r for r in entry["runs"] if not r.get("warmup") and r.get("seconds")]


def summarize(entry: Dict[str, Any], size: int) -> None:
    rates = [r["records"] / r["seconds"] for r in timed_runs(entry)]
    if not rates:
        return
    entry["records_per_s"] = {"min": min(rates), "median": statistics.median(rates), "max": max(rates)}
    entry["mb_per_s_median"] = statistics.median(rates) * size / 1e6
    first = entry["runs"][0]
    if first.get("warmup") and first.get("seconds"):
        entry["first_run_records_per_s"] = first["records"] / first["seconds"]
    kinesis = kinesis_figures(timed_runs(entry))
    if kinesis:
        entry["kinesis"] = kinesis


def cpu_per_record(entry: Dict[str, Any]) -> Dict[str, float]:
    """Median over the timed runs of each process kind's CPU µs per user record: unlike the rate, it
    holds on a machine that other work keeps busy."""
    runs = [r for r in timed_runs(entry) if r.get("cpu_seconds")]
    kinds = sorted({kind for r in runs for kind in r["cpu_seconds"]})
    return {kind: statistics.median(1e6 * r["cpu_seconds"].get(kind, 0.0) / r["records"] for r in runs)
            for kind in kinds}


def kinesis_figures(runs: List[Dict[str, Any]]) -> Dict[str, float]:
    """Medians over the runs of what the endpoint stored per timed run: aggregation shows as user
    records (the run's input) per Kinesis record, and in the bytes per Kinesis record."""
    counted = [(r, r["endpoint"]) for r in runs if r.get("endpoint", {}).get("records_received")]
    if not counted:
        return {}
    per_run = {
        "user_records_per_record": [r["records"] / e["records_received"] for r, e in counted],
        "bytes_per_record": [e["bytes_received"] / e["records_received"] for r, e in counted],
        "records_per_put_call": [(e["records_received"] + e["records_rejected"]) / e["put_calls"] for r, e in counted],
        "put_calls_per_s": [e["put_calls"] / r["seconds"] for r, e in counted],
        "rejected_share": [e["records_rejected"] / (e["records_received"] + e["records_rejected"])
                           for r, e in counted],
    }
    return {name: statistics.median(values) for name, values in per_run.items()}


def settings_difference(loop: Dict[str, str], sink: Dict[str, str]) -> Dict[str, List[Optional[str]]]:
    """KPL settings where the loop's producer and the sink's differ, as [loop, sink], places aside."""
    return {k: [v, sink.get(k)] for k, v in loop.items() if k not in PLACE_SETTINGS and sink.get(k) != v}


def check_kpl_loop_settings(report: Dict[str, Any], workload: str) -> None:
    """Record (and print) the KPL settings the loop ran with, and where they differ from sink_kpl's producer."""
    by_producer = {e["producer"]: e for e in report["results"] if e["workload"] == workload}
    loop = by_producer.get("kpl_loop", {})
    if "kpl_settings" not in loop:
        return
    check: Dict[str, Any] = {"set": loop["kpl_settings_set"]}
    if "kpl_settings" in by_producer.get("sink_kpl", {}):
        check["differs_from_sink_kpl"] = settings_difference(loop["kpl_settings"],
                                                             by_producer["sink_kpl"]["kpl_settings"])
    report["kpl_loop_settings"][workload] = check
    print(f"kpl_loop KPL settings ({workload}): {json.dumps(check)}", flush=True)
