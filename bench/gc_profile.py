"""The sink's heap by shard count: what G1 does with it, and what is live mid-write.

python bench/gc_profile.py [--shards 8,1024] [--records 300000] [--runs 8] [--jar OTHER.jar] [--histograms]

Per shard count, one fresh child JVM (bench/throughput.py's, as bench/shards.py runs it) makes an
untimed write, then --runs timed ones under a JFR recording (settings=profile) that covers all but
the last. From the recording: young-GC count and pauses, the bytes evacuations copied, and the
largest committed and used heap. Pauses and copies per write are what grows G1's heap, and with it
the JVM's RSS, when more data lives longer at more shards. With --histograms, also three
`jcmd GC.class_histogram` (each collects first: the live heap) from 1 s into the first timed write
(make it last several seconds: --records 1000000), written to --out. Prints one JSON line per shard count.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

from spark_kpl_bench.throughput.settings import JAR, KPL_TUNING
from spark_kpl_bench.throughput.study import sink_in_fresh_jvm
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.env import apply_loopback_env
from spark_kpl_testing.processes import descendants

apply_loopback_env()  # before any JVM or KPL daemon starts


def jcmd(pid: int, *args: str) -> str:
    return subprocess.run(["jcmd", str(pid), *args], capture_output=True, text=True, check=False).stdout


def jfr_events(recording: Path, name: str) -> List[Dict[str, Any]]:
    out = subprocess.run(["jfr", "print", "--json", "--events", name, str(recording)], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)["recording"]["events"]


def seconds(duration: str) -> float:
    """A JFR duration as printed in JSON, e.g. "PT0.012S"."""
    return float(duration[2:-1]) if duration.startswith("PT") and duration.endswith("S") else 0.0


def gc_figures(recording: Path, writes: int) -> Dict[str, float]:
    collections = jfr_events(recording, "jdk.GarbageCollection")
    young = [c for c in collections if c["values"]["name"] == "G1New"]
    summaries = [s["values"] for s in jfr_events(recording, "jdk.GCHeapSummary")]
    copied = sum(e["values"]["bytesCopied"] for e in jfr_events(recording, "jdk.EvacuationInformation"))
    return {"writes": writes, "young_gcs": len(young),
            "pause_ms_per_write": sum(seconds(c["values"]["sumOfPauses"]) for c in collections) * 1000 / writes,
            "copied_mib_per_write": copied / 2**20 / writes,
            "committed_mib_max": max(s["heapSpace"]["committedSize"] for s in summaries) / 2**20,
            "used_mib_max": max(s["heapUsed"] for s in summaries) / 2**20}


def profile(shards: int, args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    recording = out / f"gc-{shards}.jfr"

    def before_run(run: int) -> None:  # run 0 is the untimed write
        pid = next(p.pid for p in descendants(os.getpid()).values() if p.command == "java")
        if run == 1:
            jcmd(pid, "JFR.start", "name=gc", "settings=profile")
            if args.histograms:
                threading.Thread(target=histograms, args=(pid, shards, out), daemon=True).start()
        elif run == args.runs:
            jcmd(pid, "JFR.stop", "name=gc", f"filename={recording}")

    stream = f"gc-{shards}"
    endpoint = KinesisEndpoint({stream: shards}, store=False).start()
    try:
        options = {**endpoint.kpl_options(), **KPL_TUNING, "aggregation": "executor"}
        entry = sink_in_fresh_jvm(stream, args.records, 100, args.runs, options, args.heap, out / "gc-profile.log",
                                  endpoint.stats, before_run=before_run)
    finally:
        endpoint.stop()
    return {"shards": shards, "records_per_s": entry.get("records_per_s", {}).get("median"),
            "peak_rss_mib": {kind: rss >> 20 for kind, rss in entry.get("peak_rss_by_kind", {}).items()},
            **gc_figures(recording, args.runs - 1)}


def histograms(pid: int, shards: int, out: Path) -> None:
    """From 1 s into the write (once a 1,000,000-row write's aggregates have filled), 0.7 s apart."""
    time.sleep(1.0)
    for k in range(3):
        (out / f"histogram-{shards}-{k}.txt").write_text(jcmd(pid, "GC.class_histogram"))
        time.sleep(0.7)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=lambda v: [int(n) for n in v.split(",")], default=[8, 1024])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=8, help="timed writes; the recording covers all but the last")
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--jar", help="the sink's jar (default: this checkout's build)")
    parser.add_argument("--histograms", action="store_true")
    parser.add_argument("--out", help="where the recordings and histograms go (default: a new temporary folder)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="spark-kpl-gc-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"recordings in {out}", flush=True)
    os.environ["SPARK_KPL_JAR"] = str(Path(args.jar).resolve() if args.jar else JAR)
    for shards in args.shards:
        print(json.dumps(profile(shards, args, out)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
