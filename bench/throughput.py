"""Throughput benchmark: the kpl sink against the alternatives, side by side in one run.

Run by bench/throughput.sh. The orchestrator (this process) hosts the project's KinesisEndpoint
(store=False, 127.0.0.1) and starts each producer as a child process, sampling the RSS of the child's
whole process tree (JVM, KPL daemon, Python workers) from /proc. Each child prints one JSON line per
timed run. Writes bench/results/throughput/throughput.json and bench/results/throughput/throughput.png.

Producers: sink (spark_kpl.write, local[2], aggregation=executor: the task aggregates per shard);
sink_kpl (the same with aggregation=kpl: one KPL user record per row, the KPL aggregates); kpl_loop
(bench/KplLoop.java, plain KPL with sink_kpl's KPL settings); boto3 (put_records x500 in
foreachPartition); extras: aiokpl (in foreachPartition); noop (Spark's own noop sink: what reading the
rows costs Spark, a floor for the others); awslabs connector (not run: see NOT_RUN).

Every child first makes --warmup-runs untimed runs of the same workload (the JIT compiles the write
path, Python workers start, clients connect): the timed runs measure the steady state every producer
reaches in a long job, and the first run, cold, is kept and reported apart.

Each timed run also gets what the endpoint received during it (Kinesis records, their bytes, PutRecords
calls): a child announces a run and waits until the endpoint's counters are read, so nothing else (a
warm-up, another run) is counted with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from spark_kpl_bench.throughput.arguments import parse
from spark_kpl_bench.throughput.child import child
from spark_kpl_bench.throughput.study import exit_on_sigterm
from spark_kpl_testing.env import apply_loopback_env

apply_loopback_env()


def main() -> int:
    args = parse(__doc__)
    if args.cmd == "child":
        return child(args)
    # Not imported by a child: its cold start counts from the process's start.
    from spark_kpl_bench.throughput.report import plot
    from spark_kpl_bench.throughput.run import run_benchmark

    exit_on_sigterm()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plot(run_benchmark(args, out), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
