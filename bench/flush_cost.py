"""What a KPL flush costs its daemon, by the shards it has met (bench/FlushCost.java, one JVM per count).

python bench/flush_cost.py [--shards 16,1024,4096] [--period-us 1000]

Hosts the project's KinesisEndpoint (store=False, 127.0.0.1) with a stream per shard count and runs
bench/FlushCost.java against each with the benchmarks' KPL options. Prints its RESULT lines and, per
count, the daemon's CPU per flush over what it spent idle: the figure sparkkpl.producer.FlushPacing
spaces the flushes of waiting tasks by.
"""

import argparse
import json
import subprocess
from pathlib import Path

import pyspark

from spark_kpl_testing.env import apply_loopback_env

apply_loopback_env()

from spark_kpl_bench.throughput.settings import JAR, KPL_TUNING, ROOT  # noqa: E402
from spark_kpl_testing.endpoint import KinesisEndpoint  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", default="16,1024,4096")
    parser.add_argument("--period-us", type=int, default=1000)
    args = parser.parse_args()
    counts = [int(n) for n in args.shards.split(",")]
    jars = Path(pyspark.__file__).parent / "jars"
    endpoint = KinesisEndpoint({f"s{n}": n for n in counts}, store=False).start()
    try:
        for shards in counts:
            options = {**endpoint.kpl_options(), **KPL_TUNING}
            out = subprocess.run(
                ["java", "-cp", f"{JAR}:{jars}/*", str(ROOT / "bench/FlushCost.java"), f"s{shards}", str(shards),
                 str(args.period_us), *(f"{k}={v}" for k, v in options.items())],
                check=True, capture_output=True, text=True).stdout
            results = [line[len("RESULT "):] for line in out.splitlines() if line.startswith("RESULT ")]
            idle, flushing = (json.loads(result) for result in results)
            extra_us = (flushing["daemon_cpu_ms"] - idle["daemon_cpu_ms"]) * 1000 / flushing["flushes"]
            print(json.dumps({"idle": idle, "flushing": flushing, "daemon_cpu_us_per_flush": round(extra_us, 1)}))
    finally:
        endpoint.stop()


if __name__ == "__main__":
    main()
