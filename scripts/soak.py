"""A soak: a Structured Streaming query writes through the sink at Kinesis's quota for
``--minutes`` while faults come and go; writes docs/soak.md.

``scripts/soak.sh [--minutes 20] [--fault-every 60]`` (or ``.venv/bin/python scripts/soak.py ...``).

The query (``rate-micro-batch`` source, ``recordId=prefix``, ``failOnError=true``, ``local[2,4]``) writes
numbered records ``soak-<n>`` through the real KPL into the project's own endpoint on 127.0.0.1, whose
one shard takes what a Kinesis shard takes and throttles the rest. After a one-minute warm-up, one fault
every ``--fault-every`` seconds, in turn: a 5xx burst, connection resets, a short outage, a SIGKILL to the
KPL daemon. Every second the resident memory of the Spark JVM and of its KPL daemon(s) is read; at the end
the stream is read back, the JVM is stopped, and what it left behind is counted.

Memory is judged on the plateau, by a rule fixed before the run: the baseline is the peak of the first
whole minute that starts a minute after the first cycle of faults has ended (so the daemon then running is
one that replaced a killed one and has been through a retry burst, and the JVM has run every fault's
code path), and a process is *flat* when the median of the per-minute peaks of the run's last quarter is
within 10 % of that baseline. The JVM runs with its heap fixed and resident from the start (``-Xms`` =
``-Xmx``, ``-XX:+AlwaysPreTouch``), so its RSS moves only with native memory. A class histogram of the JVM
(``jcmd GC.class_histogram``, after a full GC) is taken at the end of the baseline minute and again just
before the query stops; the report lists the classes whose live bytes grew most between the two.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import List, Optional

REPO = Path(__file__).resolve().parents[1]

from spark_kpl_testing.env import apply_loopback_env  # noqa: E402

apply_loopback_env()

from spark_kpl_bench.host import summary  # noqa: E402
from spark_kpl_bench.soak.memory import baseline_minute, late_minutes  # noqa: E402
from spark_kpl_bench.soak.report import render  # noqa: E402
from spark_kpl_bench.soak.runner import run_soak  # noqa: E402
from spark_kpl_bench.soak.settings import ROWS_PER_BATCH  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=20)
    parser.add_argument("--fault-every", type=float, default=60.0, help="seconds between two faults")
    parser.add_argument("--rows-per-batch", type=int, default=ROWS_PER_BATCH)
    parser.add_argument("--out", default=str(REPO / "docs" / "soak.md"))
    args = parser.parse_args(argv)
    baseline = baseline_minute(args.fault_every)
    if late_minutes(args.minutes).start <= baseline:
        shortest = next(m for m in range(baseline, 10 * baseline + 10) if late_minutes(m).start > baseline)
        parser.error(f"--minutes must be at least {shortest} with --fault-every {args.fault_every:g}: the baseline "
                     f"is minute {baseline} (a minute after the first cycle of faults), and the last quarter "
                     "of the run must come after it")
    command = " ".join(["scripts/soak.sh", *(argv if argv is not None else sys.argv[1:])])
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = summary()
    measured = run_soak(args.minutes, args.fault_every, args.rows_per_batch, baseline)
    report = render(command, started, host, measured.spark_version, measured.minutes, measured.events,
                    measured.restarts, measured.delivery, measured.failed_attempts, measured.leftovers, baseline,
                    args.fault_every, measured.flags, measured.histograms)
    Path(args.out).write_text(report)
    print(report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
