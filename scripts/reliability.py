"""Reliability scenarios, run for real; writes docs/reliability.md.

``scripts/reliability.sh`` (or ``.venv/bin/python scripts/reliability.py [--records N] [--out PATH]``). With
``--only NAME`` (repeatable) it runs only the scenarios whose names contain one of them, and puts their rows into the
report already at ``--out``, saying when they were run (where there is none, it writes one of only them).

Each scenario writes N records (``row-<i>`` padded to 100 bytes, keys ``key-<i % 101>``) with
``recordId=prefix`` from PySpark (``local[2,4]``: two task threads, and Spark's task retry -- up to 4
attempts -- which plain ``local[2]`` turns off) through the real KPL to the project's own fault-injecting
endpoint (:class:`spark_kpl_testing.endpoint.KinesisEndpoint`) on 127.0.0.1, then reads the stream back:
records out (total and distinct payloads), duplicates, whether every duplicate is detectable by its
record id (the copies carry the same id), records missing, the task attempts that failed, and the
outcome. The executor kill runs on a real standalone cluster (two worker JVMs); the streaming driver
kill runs the query in a driver process of its own (spark_kpl_bench.reliability.streaming_driver). Each scenario
states the outcome its fault must lead to, and the script exits non-zero when a row breaks it or shows
a loss: a write reporting success with records missing other than exactly its dead letters,
undetectable duplicates, records reported written but absent, or unexpected records. Nothing in the
table is edited by hand.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path
from typing import List, Optional

REPO = Path(__file__).resolve().parents[1]

from spark_kpl_testing.env import apply_loopback_env  # noqa: E402

apply_loopback_env()

from spark_kpl._jar import jar_path  # noqa: E402
from spark_kpl_bench.host import bundled_kpl_version, summary  # noqa: E402
from spark_kpl_bench.reliability.catalogue import scenarios  # noqa: E402
from spark_kpl_bench.reliability.faults import ProcessFaults  # noqa: E402
from spark_kpl_bench.reliability.report import render, updated  # noqa: E402
from spark_kpl_bench.reliability.runner import run_catalogue  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--out", default=str(REPO / "docs" / "reliability.md"))
    parser.add_argument("--only", action="append",
                        help="run only scenarios whose name contains this, and put their rows into --out as it is")
    args = parser.parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = summary()
    wall_start = time.monotonic()
    processes = ProcessFaults()
    catalogue = scenarios(args.records, processes)
    chosen = [(number, scenario) for number, scenario in enumerate(catalogue)
              if not args.only or any(o in scenario.name for o in args.only)]
    results, version = run_catalogue(chosen, args.records, processes)
    out = Path(args.out)
    if args.only and out.exists():  # the chosen rows into the report of the last whole run
        out.write_text(updated(out.read_text(), results, [s.name for s in catalogue], started, host))
    else:
        out.write_text(render(results, args.records, started, host, version, bundled_kpl_version(jar_path()),
                              time.monotonic() - wall_start))
    print(f"wrote {args.out}")
    broken = [r["scenario"] for r in results if r["violations"]]
    if broken:
        print(f"rows that break their expectation: {', '.join(broken)}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
