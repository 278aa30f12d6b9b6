"""Hot keys' PUT payload units: the sink writing rows of which one key takes a share, into a stream held at
Kinesis's per-shard limits.

python bench/hot_keys.py [--shards 32] [--rows 20000] [--record-bytes 1000] [--hot-every 0,2,10,100]
    [--no-limits] [--sink-options JSON]

The shapes of tests/sink/backpressure/test_hot_keys.py, counted rather than timed. One process: a Spark session
(local[2], the sink's defaults) and the project's KinesisEndpoint on 127.0.0.1, which holds every shard at
Kinesis's limits (1,000 records/s and 1 MiB/s) unless --no-limits. After one write to warm the JVM, per shape
a fresh stream of --shards shards and one write of --rows rows: every --hot-every-th row has one partition
key (0: none does), every other row a key of its own. The Kinesis records the endpoint stored are counted
(spark_kpl_bench.payload_units): units used against the fewest the rows need. Writes
bench/results/payload-units/hot-keys.json and prints the table; --report prints a saved one again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import spark_kpl
from spark_kpl_bench.payload_units import PayloadUnits, payload_units, units_table
from spark_kpl_bench.throughput.report import save_report
from spark_kpl_bench.throughput.settings import ROOT
from spark_kpl_bench.throughput.study import exit_on_sigterm
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.env import apply_loopback_env
from spark_kpl_testing.net import LOOPBACK

apply_loopback_env()  # before any JVM or KPL daemon starts
os.environ["SPARK_LOCAL_IP"] = LOOPBACK  # Spark binds loopback only

HOT_KEY = "hot-key"


def keyed_rows(spark, count: int, row_bytes: int, hot_every: int):
    """``count`` rows of ``row_bytes``; every ``hot_every``-th keyed HOT_KEY, the others a key of their own."""
    from pyspark.sql import functions as F

    own_key = F.format_string("key-%d", "id")
    key = own_key if hot_every == 0 else F.when(F.col("id") % hot_every == 0, F.lit(HOT_KEY)).otherwise(own_key)
    return spark.range(count, numPartitions=2).select(
        F.rpad(F.format_string("row-%d-", "id"), row_bytes, "x").alias("data"), key.alias("partitionKey"))


def shape(hot_every: int) -> str:
    return "every key its own" if hot_every == 0 else f"one row in {hot_every} on one key"


def measure(args: argparse.Namespace, out: Path) -> Dict[str, Any]:
    from spark_kpl_testing.session import spark_session

    report: Dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv), "started_utc": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "shards": args.shards, "rows": args.rows,
        "record_bytes": args.record_bytes, "kinesis_limits": not args.no_limits, "sink_options": args.sink_options,
        "results": []}
    spark = spark_session("bench-hot-keys")
    try:
        with KinesisEndpoint(faults=Faults() if args.no_limits else Faults.kinesis_limits()) as endpoint:
            options = {**endpoint.kpl_options(), **args.sink_options}
            endpoint.create_stream("warm-up", shards=args.shards)
            spark_kpl.write(keyed_rows(spark, args.rows, args.record_bytes, 0), "warm-up",
                            partition_key="partitionKey", **options)
            endpoint.delete_stream("warm-up")
            for hot_every in args.hot_every:
                stream = f"hot-every-{hot_every}"
                endpoint.create_stream(stream, shards=args.shards)
                started = time.monotonic()
                spark_kpl.write(keyed_rows(spark, args.rows, args.record_bytes, hot_every), stream,
                                partition_key="partitionKey", **options)
                seconds = time.monotonic() - started
                units = payload_units(endpoint.kinesis_records(stream))
                endpoint.delete_stream(stream)
                report["results"].append({"hot_every": hot_every, "seconds": seconds,
                                          "payload_units": units.as_dict()})
                print(f"[{time.strftime('%H:%M:%S')}] {shape(hot_every)}: {seconds:.1f} s, "
                      f"efficiency {units.efficiency:.2f}", flush=True)
                save_report(report, out, "hot-keys")
    finally:
        spark.stop()
    save_report(report, out, "hot-keys", finished=True)
    return report


def table(report: Dict[str, Any]) -> List[str]:
    return ([f"{report['rows']:,} rows of {report['record_bytes']:,} B into {report['shards']} shards"
             f"{' held at Kinesis limits' if report['kinesis_limits'] else ''}:", ""]
            + units_table([(shape(e["hot_every"]), PayloadUnits.from_dict(e["payload_units"]))
                           for e in report["results"]], "shape"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=32)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--record-bytes", type=int, default=1000, help="bytes of data per row")
    parser.add_argument("--hot-every", type=lambda v: [int(n) for n in v.split(",")], default=[0, 2, 10, 100])
    parser.add_argument("--no-limits", action="store_true", help="the endpoint without Kinesis's per-shard limits")
    parser.add_argument("--sink-options", type=json.loads, default={}, help="JSON object of extra sink options")
    parser.add_argument("--out", default=str(ROOT / "bench/results/payload-units"))
    parser.add_argument("--report", action="store_true", help="print the table of OUT/hot-keys.json")
    args = parser.parse_args()
    exit_on_sigterm()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = json.loads((out / "hot-keys.json").read_text()) if args.report else measure(args, out)
    print("\n".join(table(report)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
