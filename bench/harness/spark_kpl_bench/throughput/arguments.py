"""The benchmark's command line: the orchestrator's flags, and ``child``, which runs one producer."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import List, Optional

from spark_kpl_bench.throughput.settings import EXTRA_PRODUCERS, JAR, PRODUCERS, ROOT, STREAM


def producer_list(value: str) -> List[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in PRODUCERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown producer(s) {unknown}: choose from {','.join(PRODUCERS)}")
    return names


def add_child_command(sub) -> None:
    c = sub.add_parser("child")
    c.add_argument("--producer", required=True)
    c.add_argument("--records", type=int, required=True)
    c.add_argument("--cached-records", type=int, default=0, help="rows to cache, if more than --records")
    c.add_argument("--size", type=int, required=True)
    c.add_argument("--partitions", type=int, default=2)
    c.add_argument("--runs", type=int, default=3)
    c.add_argument("--options", default="{}")
    c.add_argument("--stream", default=STREAM)
    c.add_argument("--heap", default="4g")
    c.add_argument("--fixed-heap", action="store_true")
    c.add_argument("--master", default="local[2]")
    c.add_argument("--conf", default="{}", help="JSON object of Spark settings (a cluster's)")


def parse(description: str, argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    add_child_command(parser.add_subparsers(dest="cmd"))
    parser.add_argument("--runs", type=int, default=3, help="timed runs per producer and workload")
    parser.add_argument("--warmup-runs", type=int, default=1,
                        help="untimed runs of the same workload before them, in the same child")
    parser.add_argument("--small-records", type=int, default=1_000_000, help="workload A records (100 B)")
    parser.add_argument("--medium-records", type=int, default=300_000, help="workload M records (1 KB)")
    parser.add_argument("--large-records", type=int, default=100_000, help="workload B records (10 KB)")
    parser.add_argument("--boto3-scale", type=float, default=1.0,
                        help="boto3/aiokpl write this share of each workload (their rate is per record)")
    parser.add_argument("--aiokpl-scale", type=float, default=1.0, help="aiokpl writes this share")
    parser.add_argument("--per-record-scale", type=float, default=1.0,
                        help="sink_kpl and kpl_loop (the KPL's per-record path) write this share")
    parser.add_argument("--producers", type=producer_list, default=None,
                        help=f"comma-separated, of {','.join(PRODUCERS)} (default: all; "
                             f"{' and '.join(EXTRA_PRODUCERS)} not with --skip-extras)")
    parser.add_argument("--mock-records", type=int, default=20_000)
    parser.add_argument("--quota-records", type=int, default=200_000,
                        help="records of 100 B in the quota workload (0: not run)")
    parser.add_argument("--out", default=str(ROOT / "bench/results/throughput"))
    parser.add_argument("--jar", type=Path, default=JAR,
                        help="the spark-kpl jar measured (another build, e.g. on another KPL release)")
    parser.add_argument("--heap", default="4g", help="the JVMs' heap: spark.driver.memory, and -Xmx of the KPL loop")
    parser.add_argument("--fixed-heap", action="store_true",
                        help="every JVM's heap committed and touched at its maximum from the start (-Xms = -Xmx, "
                             "AlwaysPreTouch): peak RSS then compares what each producer holds beyond the heap")
    parser.add_argument("--sink-options", type=json.loads, default={},
                        help="JSON object of extra options for sink and sink_kpl (and kpl_loop's KPL properties)")
    parser.add_argument("--skip-extras", action="store_true",
                        help="no per-task, cold-start or kinesis-mock runs, and unless --producers names them, "
                             "no aiokpl or noop")
    return parser.parse_args(argv)
