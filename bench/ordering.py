"""What ``ordering=key`` costs: the rate Kinesis stores 1 KB rows at, with and without it, against the shards' ceiling.

A benchmark, not a test: ``.venv/bin/python bench/ordering.py`` (bench/results/ordering/README.md).

One driver (``local[2]``, the sink's defaults) writes --rows rows of 1 KB over 1,000 keys into a fresh stream of
--shards shards on the project's endpoint, held at Kinesis's per-shard limits (1 MiB/s, 1,000 records/s),
every PutRecords --latency-ms away (the endpoint's latency fault). The writes with ``ordering=none`` and
``ordering=key`` take turns, --runs of each, so both see the same machine. Per write: the rate Kinesis
stored the rows' bytes at (data and key, as Kinesis counts them) between the first and the last arrival, its
share of the shards' ceiling, and rows per Kinesis record.

Writes bench/results/ordering/ordering.json and prints the table. The endpoint runs in this process and the
driver JVM is this process's child; both stop with it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import spark_kpl
from spark_kpl_bench import host
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.endpoint.faults import KINESIS_SHARD_BYTES_PER_SECOND
from spark_kpl_testing.session import spark_session

ROW_BYTES = 1000
KEYS = 1000
OUT = Path(__file__).resolve().parent / "results" / "ordering" / "ordering.json"


def one_write(spark: Any, endpoint: KinesisEndpoint, stream: str, rows: int, ordering: str) -> Dict[str, Any]:
    from pyspark.sql import functions as F

    frame = spark.range(rows, numPartitions=2).select(
        (F.col("id") % KEYS).cast("string").alias("partitionKey"),
        F.concat(F.col("id").cast("string"), F.lit(","), F.repeat(F.lit("x"), ROW_BYTES)).substr(1, ROW_BYTES)
        .alias("data"),
    )
    started = time.monotonic()
    spark_kpl.write(frame, stream, partition_key="partitionKey", ordering=ordering, **endpoint.kpl_options())
    seconds = time.monotonic() - started
    stored = endpoint.records(stream)
    times = [at for _, at in endpoint.stored_arrivals(stream)]
    stored_bytes = sum(len(r.data) + len(r.partition_key.encode()) for r in stored)
    kinesis_records = len({(r.shard_id, r.sequence_number) for r in stored})
    return {"ordering": ordering, "rows": len(stored), "seconds": round(seconds, 2),
            "stored_bytes_per_second": stored_bytes / max(max(times) - min(times), 1e-9),
            "rows_per_kinesis_record": round(len(stored) / kinesis_records, 1)}


def table(runs: List[Dict[str, Any]], ceiling: float) -> str:
    head = (f"{'ordering':<9} {'rows':>8} {'seconds':>8} {'MB/s stored':>11} {'of ceiling':>10} "
            f"{'rows/Kinesis record':>19}")
    lines = [head, "-" * len(head)]
    for r in runs:
        rate = r["stored_bytes_per_second"]
        lines.append(f"{r['ordering']:<9} {r['rows']:>8,} {r['seconds']:>8.1f} {rate / 1e6:>11.2f} "
                     f"{rate / ceiling:>10.2f} {r['rows_per_kinesis_record']:>19}")
    rates = {o: [r["stored_bytes_per_second"] for r in runs if r["ordering"] == o] for o in ("none", "key")}
    if not all(rates.values()):
        return "\n".join(lines)
    medians = {o: statistics.median(rates[o]) for o in rates}
    lines.append(f"median share of ceiling: none {medians['none'] / ceiling:.2f}, key {medians['key'] / ceiling:.2f}; "
                 f"key / none {medians['key'] / medians['none']:.2f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    ceiling = args.shards * KINESIS_SHARD_BYTES_PER_SECOND
    runs: List[Dict[str, Any]] = []
    with KinesisEndpoint(faults=Faults.kinesis_limits(latency=args.latency_ms / 1000)) as endpoint:
        spark = spark_session("spark-kpl-bench-ordering")
        try:
            for run in range(args.runs):
                for ordering in ("none", "key"):
                    stream = f"ordering-{ordering}-{run}"
                    endpoint.create_stream(stream, shards=args.shards)
                    runs.append(one_write(spark, endpoint, stream, args.rows, ordering))
                    endpoint.delete_stream(stream)
                    print(table(runs, ceiling), flush=True)
        finally:
            spark.stop()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "command": shlex.join([sys.argv[0]] + sys.argv[1:]), "machine": host.facts(),
        "shards": args.shards, "latency_ms": args.latency_ms, "row_bytes": ROW_BYTES,
        "ceiling_bytes_per_second": ceiling, "runs": runs}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
