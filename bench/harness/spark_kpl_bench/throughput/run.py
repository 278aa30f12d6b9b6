"""The benchmark, run: each workload through each producer's child against the project's endpoint, then
the extras (per-task overhead, cold start, the sink into kinesis-mock); the report saved after every
entry."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict

from spark_kpl_bench import host
from spark_kpl_bench.throughput.child_process import run_process
from spark_kpl_bench.throughput.plan import (
    NativeDaemon,
    child_command,
    producer_command,
    producers,
    records_of,
    workloads,
)
from spark_kpl_bench.throughput.report import save_report
from spark_kpl_bench.throughput.settings import (
    KPL_TUNING,
    NOT_RUN,
    QUOTA_SHARDS,
    QUOTA_STREAM,
    SHARDS,
    SINK_AGGREGATION,
    STREAM,
)
from spark_kpl_bench.throughput.study import machine, sha256_of, snapshot_jar
from spark_kpl_bench.throughput.summary import check_kpl_loop_settings, summarize
from spark_kpl_bench.throughput.workload import mean_key_bytes, written_ids
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.env import loopback_env


@dataclass
class Bench:
    """One run of the benchmark: its arguments, where it writes, the jar it measures and its endpoint."""

    args: argparse.Namespace
    out: Path
    log: Path
    jar: Path
    endpoint: KinesisEndpoint
    report: Dict[str, Any]

    def add(self, entry: Dict[str, Any]) -> None:
        self.report["results"].append(entry)
        save_report(self.report, self.out)


def run_benchmark(args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    """Runs everything ``args`` asks for; returns the report, saved to OUT/throughput.json."""
    log = out / "throughput.log"
    log.write_text("")
    work = Path(tempfile.mkdtemp(prefix="spark-kpl-bench-"))
    report: Dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv), "started_utc": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "stream_shards": SHARDS,
        "kpl_tuning": KPL_TUNING, "sink_aggregation": SINK_AGGREGATION, "fixed_heap": args.fixed_heap, "results": [],
        "kpl_loop_settings": {}, "not_run": NOT_RUN}
    jar = snapshot_jar(work, args.jar)  # others may rebuild build/libs meanwhile: every producer uses this copy
    os.environ["SPARK_KPL_JAR"] = str(jar)
    report["jar"] = {"path": str(args.jar), "sha256": sha256_of(jar)}
    report["machine"] = machine(jar)
    endpoint = KinesisEndpoint({STREAM: SHARDS}, store=False).start()
    bench = Bench(args, out, log, jar, endpoint, report)
    try:
        run_workloads(bench, extract_daemon(jar, work / "native"))
        endpoint.set_faults(Faults())
        if not args.skip_extras:
            run_task_overhead(bench)
            run_cold_start(bench, work / "cold-0")
            report["results"].append(kinesis_mock_entry(bench))
    finally:
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
        report["machine"]["loadavg_end"] = host.facts()["loadavg"]
        save_report(report, out, finished=True)
    return report


def extract_daemon(jar: Path, folder: Path) -> NativeDaemon:
    executable = subprocess.run([sys.executable, "-m", "spark_kpl", "extract-native", "--dir", str(folder),
                                 "--jar", str(jar)], env=loopback_env(), capture_output=True, text=True,
                                check=True).stdout.strip().splitlines()[-1]
    return NativeDaemon(executable, folder)


def run_workloads(bench: Bench, native: NativeDaemon) -> None:
    args, endpoint = bench.args, bench.endpoint
    endpoint.create_stream(QUOTA_STREAM, QUOTA_SHARDS)
    for workload in workloads(args):
        endpoint.set_faults(Faults.kinesis_limits() if workload.quota else Faults())
        kpl_options = {**(endpoint.kpl_options() if workload.quota else {**endpoint.kpl_options(), **KPL_TUNING}),
                       **args.sink_options}
        for producer in producers(args):
            records = records_of(producer, workload, args)
            print(f"[{time.strftime('%H:%M:%S')}] {workload.name} {producer} {records} records x "
                  f"({args.warmup_runs} warm-up + {args.runs})", flush=True)
            endpoint.reset_counters()
            command = producer_command(producer, workload, records, args, kpl_options, native, bench.jar,
                                       endpoint.endpoint_url)
            entry = run_process(command, bench.log, timeout=900, counters=endpoint.stats, warmup=args.warmup_runs)
            entry.update(workload=workload.name, producer=producer, record_bytes=workload.size, records=records,
                         stream_shards=QUOTA_SHARDS if workload.quota else SHARDS, key_bytes_mean=mean_key_bytes(
                             [range(records)] if producer == "kpl_loop" else written_ids(workload.records, records, 2)),
                         endpoint=endpoint.stats())
            summarize(entry, workload.size)
            print(json.dumps({k: entry.get(k) for k in ("records_per_s", "kinesis", "peak_rss_bytes",
                                                        "returncode")}), flush=True)
            bench.add(entry)
        check_kpl_loop_settings(bench.report, workload.name)


def sink_options(bench: Bench) -> Dict[str, str]:
    return {**bench.endpoint.kpl_options(), **KPL_TUNING, "aggregation": SINK_AGGREGATION["sink"]}


def run_task_overhead(bench: Bench) -> None:
    """The same 20,000 records in 2 or in 2,000 partitions, through the sink and through Spark's noop sink
    (what Spark's own scheduling of those tasks costs)."""
    runs = bench.args.warmup_runs + bench.args.runs
    kpl_options = {**bench.endpoint.kpl_options(), **KPL_TUNING}
    for partitions, rows in ((2, 10_000), (2000, 10)):
        for producer in ("sink", "noop"):
            print(f"[{time.strftime('%H:%M:%S')}] tasks {partitions} x {rows} {producer}", flush=True)
            command = child_command(bench.args) + [
                "--producer", producer, "--records", str(partitions * rows), "--size", "100", "--partitions",
                str(partitions), "--runs", str(runs), "--options",
                json.dumps(sink_options(bench) if producer == "sink" else kpl_options)]
            entry = run_process(command, bench.log, timeout=900, warmup=bench.args.warmup_runs)
            entry.update(workload=f"tasks_{partitions}x{rows}", producer=producer, record_bytes=100,
                         records=partitions * rows, partitions=partitions)
            summarize(entry, 100)
            bench.add(entry)


def run_cold_start(bench: Bench, native_dir: Path) -> None:
    """A fresh driver JVM, an empty nativeDir: save() to the first PutRecords arrival."""
    print(f"[{time.strftime('%H:%M:%S')}] cold start 0", flush=True)
    bench.endpoint.reset_counters()  # its first_put_at: when the cold start's first PutRecords arrived
    command = child_command(bench.args) + ["--producer", "coldstart", "--records", "1000", "--size", "100",
                                           "--options", json.dumps({**sink_options(bench),
                                                                    "nativeDir": str(native_dir)})]
    entry = run_process(command, bench.log, timeout=600)
    entry.update(workload="cold_start", producer="sink", records=1000)
    first_put = bench.endpoint.first_put_at
    if entry["runs"] and first_put is not None:
        entry["save_to_first_put_s"] = first_put - entry["runs"][0]["save_start"]
        entry["process_start_to_first_put_s"] = first_put - entry["started"]
    bench.add(entry)


def kinesis_mock_entry(bench: Bench) -> Dict[str, Any]:
    """The sink into kinesis-mock, for contrast: the emulator is the bottleneck there."""
    from spark_kpl_testing.kinesis import LocalKinesis

    records = bench.args.mock_records
    print(f"[{time.strftime('%H:%M:%S')}] kinesis-mock sink {records}", flush=True)
    with LocalKinesis(streams={STREAM: 4}) as kinesis:
        command = child_command(bench.args) + [
            "--producer", "sink", "--records", str(records), "--size", "100", "--runs", "1",
            "--options", json.dumps({**kinesis.kpl_options(), "aggregation": SINK_AGGREGATION["sink"]})]
        entry = run_process(command, bench.log, timeout=900)
    entry.update(workload="A_100B_kinesis_mock", producer="sink", record_bytes=100, records=records)
    summarize(entry, 100)
    return entry
