"""What a run of the benchmark makes: its workloads, the producers and the share each writes, and the
command of each producer's child process."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

from spark_kpl_bench.processes import fixed_heap_flags
from spark_kpl_bench.throughput.settings import (
    CLI,
    EXTRA_PRODUCERS,
    PRODUCERS,
    QUOTA_STREAM,
    ROOT,
    SINK_AGGREGATION,
    STREAM,
)


@dataclass(frozen=True)
class Workload:
    name: str
    size: int  # bytes per record
    records: int
    stream: str

    @property
    def quota(self) -> bool:
        """The stream whose endpoint enforces Kinesis's per-shard limits, every producer at its defaults."""
        return self.stream == QUOTA_STREAM


@dataclass(frozen=True)
class NativeDaemon:
    """The KPL daemon extracted by hand for kpl_loop, and the folder it runs in."""

    executable: str
    folder: Path


def workloads(args: argparse.Namespace) -> List[Workload]:
    """The workloads to run, in report order; one given 0 records is left out."""
    every = [Workload("A_100B", 100, args.small_records, STREAM), Workload("M_1KB", 1_000, args.medium_records, STREAM),
             Workload("B_10KB", 10_000, args.large_records, STREAM),
             Workload("A_100B_quota", 100, args.quota_records, QUOTA_STREAM)]
    return [workload for workload in every if workload.records]


def producers(args: argparse.Namespace) -> List[str]:
    return args.producers or [p for p in PRODUCERS if not (args.skip_extras and p in EXTRA_PRODUCERS)]


def records_of(producer: str, workload: Workload, args: argparse.Namespace) -> int:
    """How many of the workload's records ``producer`` writes (its --*-scale share, at least 500)."""
    scale = {"boto3": args.boto3_scale, "aiokpl": args.aiokpl_scale, "sink_kpl": args.per_record_scale,
             "kpl_loop": args.per_record_scale}.get(producer, 1.0)
    return max(500, int(workload.records * scale))


def child_command(args: argparse.Namespace) -> List[str]:
    """The start of every Spark-based producer's command: the CLI's ``child`` with the heap settings."""
    return [sys.executable, str(CLI), "child", "--heap", args.heap, *(["--fixed-heap"] if args.fixed_heap else [])]


def producer_command(producer: str, workload: Workload, records: int, args: argparse.Namespace,
                     kpl_options: Dict[str, str], native: NativeDaemon, jar: Path, endpoint_url: str) -> List[str]:
    """The command of ``producer``'s child for ``workload``: kpl_loop gets the options sink_kpl gets (its
    daemon placed by hand); the sink's producers their aggregation; boto3 and aiokpl the endpoint."""
    runs = args.warmup_runs + args.runs
    if producer == "kpl_loop":
        return kpl_loop_command(args, jar, workload, records, runs, {
            **kpl_options, "aggregation": SINK_AGGREGATION["sink_kpl"], "NativeExecutable": native.executable,
            "TempDirectory": str(native.folder)})
    options = {**kpl_options, "aggregation": SINK_AGGREGATION[producer]} if producer in SINK_AGGREGATION \
        else {"_endpoint_url": endpoint_url, "_lift_limits": not workload.quota}
    return child_command(args) + ["--producer", producer, "--records", str(records), "--cached-records",
                                  str(workload.records), "--size", str(workload.size), "--runs", str(runs),
                                  "--options", json.dumps(options), "--stream", workload.stream]


def kpl_loop_command(args: argparse.Namespace, jar: Path, workload: Workload, records: int, runs: int,
                     properties: Dict[str, str]) -> List[str]:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    # Spark's own jars supply what the sink gets from Spark at run time (slf4j, commons-logging)
    heap_flags = fixed_heap_flags(args.heap) if args.fixed_heap else []
    return ["java", f"-Xmx{args.heap}", *heap_flags, "-cp", f"{jar}:{jars}/*", str(ROOT / "bench/KplLoop.java"),
            workload.stream, str(records), str(workload.size), str(runs), *(f"{k}={v}" for k, v in properties.items())]
