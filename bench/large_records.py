"""Peak memory while 5 MiB records are in flight, against the same bytes in 100 B records, in one run.

A benchmark, not a test: ``.venv/bin/python bench/large_records.py`` (bench/results/large-records/README.md,
"Records up to 10 MiB").

The parent hosts the project's endpoint on 127.0.0.1 (no quotas, records stored) and, for each write,
starts a fresh child driver (bench/memory.py's: ``local[2]``, N records of a size built in the JVM, each
with its id) that writes to a fresh 4-shard stream whose maximum record size is 10 MiB, with
``maxRecordBytes`` = 10 MiB and otherwise the sink's defaults (queueLimitBytes 16 MiB). Meanwhile the
parent samples the RSS of the child's JVM and of its KPL daemon and keeps the peaks; afterwards it
checks that every id arrived. Each count of large records is written as 5 MiB records and as the
same bytes in 100 B records, and once more as 5 MiB records without the sink's queue limits: the queue limits are
what keeps the peaks flat as the large records grow in number.

Writes bench/results/large-records/large-records.json. Everything started (children, their JVMs and daemons, the
endpoint) is stopped by pid.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from memory import COMMON_OPTIONS, MIB, MODES, REPO, child_env, run_one

from spark_kpl_bench import host

LARGE, SMALL = 5 * MIB, 100
SHARDS = 4
#: The sink's largest record, and a stream raised to take it.
LARGE_RECORD_OPTIONS = {"maxRecordBytes": str(10 * MIB)}
MAX_RECORD_KIB = 10240


def workloads(large_counts: List[int]) -> List[Dict[str, Any]]:
    """(record bytes, records, mode) of each write, in the order they run."""
    out = []
    for count in large_counts:
        out.append({"record_bytes": LARGE, "records": count, "mode": "bounded-default"})
        out.append({"record_bytes": SMALL, "records": count * LARGE // SMALL, "mode": "bounded-default"})
        out.append({"record_bytes": LARGE, "records": count, "mode": "unbounded"})
    return out


def table(runs: List[Dict[str, Any]]) -> str:
    head = (f"{'record':>7} {'records':>9} {'input MiB':>9} {'mode':<16} {'JVM MiB':>8} {'daemon MiB':>10} "
            f"{'peak outstanding MiB':>20} {'seconds':>7} {'all arrived':>11} {'user rec/Kinesis rec':>20}")
    rows = [head, "-" * len(head)]
    for r in runs:
        size = "5 MiB" if r["record_bytes"] == LARGE else f"{r['record_bytes']} B"
        rows.append(f"{size:>7} {r['records']:>9,} {r['input_mib']:>9.0f} {r['mode']:<16} "
                    f"{r['peak_jvm_rss_mib']:>8.0f} {r['peak_daemon_rss_mib']:>10.0f} "
                    f"{r['write_result']['peak_outstanding_bytes'] / MIB:>20.1f} {r['seconds']:>7.1f} "
                    f"{str(r['every_record_arrived']):>11} {r.get('user_records_per_kinesis_record', '–'):>20}")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--large-counts", default="8,32", help="numbers of 5 MiB records, one write each")
    parser.add_argument("--interval", type=float, default=0.05, help="RSS sampling period (s)")
    parser.add_argument("--run-timeout", type=float, default=900.0)
    parser.add_argument("--out", default=str(REPO / "bench/results/large-records/large-records.json"))
    args = parser.parse_args()
    from spark_kpl_testing.endpoint import KinesisEndpoint

    workdir = Path(tempfile.mkdtemp(prefix="spark-kpl-bench-large-"))
    env, log = child_env(workdir), workdir / "children.log"
    meta: Dict[str, Any] = {
        "command": shlex.join([Path(sys.argv[0]).as_posix()] + sys.argv[1:]),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                     text=True).stdout.strip(),
        "machine": host.facts(), "load_start": host.facts()["loadavg"], "shards": SHARDS,
        "stream_max_record_kib": MAX_RECORD_KIB, "spark_master": "local[2]", "endpoint": "no quotas, store=True",
        "options": {**COMMON_OPTIONS, **LARGE_RECORD_OPTIONS}, "modes": MODES,
        "rss": "from /proc/<pid>/statm every sample_interval_s; JVM = the child's `java`, daemon = every "
               "`kinesis_producer` under it; peaks over the samples",
        "sample_interval_s": args.interval, "runs": [],
    }
    out = Path(args.out)
    endpoint = KinesisEndpoint(store=True)
    try:
        endpoint.start()
        for n, work in enumerate(workloads([int(c) for c in args.large_counts.split(",")])):
            spec = {**work, "shards": SHARDS, "max_record_kib": MAX_RECORD_KIB, "mode_options": MODES[work["mode"]],
                    "stream": f"large-{n}", "options": {**endpoint.kpl_options(), **meta["options"],
                                                        **MODES[work["mode"]]}}
            run = run_one(endpoint, spec, env, args.interval, args.run_timeout, log)
            meta.update(run.pop("_versions"))
            meta["runs"].append(run)
            out.write_text(json.dumps(meta, indent=1) + "\n")  # a cut-short run keeps what it measured
            print(table(meta["runs"][-1:]).splitlines()[-1], flush=True)
            if not run["every_record_arrived"]:
                raise RuntimeError(f"{spec['stream']}: {run['distinct_ids_delivered']} of {run['records']} arrived")
    finally:
        endpoint.stop()
        meta["load_end"] = host.facts()["loadavg"]
        meta["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if meta["runs"]:
            out.write_text(json.dumps(meta, indent=1) + "\n")
            print("\n" + table(meta["runs"]) + f"\n\nwrote {out}")
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
