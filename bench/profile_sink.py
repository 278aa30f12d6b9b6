"""Where the sink's time goes: one write through the real KPL to the project's endpoint, with the CPU
seconds of every process (the Spark JVM, the KPL daemon, this Python) and a JFR profile of the JVM
summarized by whose code was running (the sink's, the KPL's Java side, Spark's, the rest).

    .venv/bin/python bench/profile_sink.py --records 400000 --size 100

Prints the figures; keeps the recording at --jfr for a closer look (``jfr print``). ``--warm-writes``
full writes come first, so that compiling the write path is not counted; the JVM's CPU is also given
by thread kind. With ``--perf``, Linux perf samples the KPL daemon during the write and the daemon's
hottest functions are printed (perf must be installed; it is not a project dependency). Stops the
endpoint, perf and Spark it started.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Dict, Iterable

from spark_kpl_bench.processes import cpu_seconds  # noqa: E402
from spark_kpl_testing.env import apply_loopback_env  # noqa: E402
from spark_kpl_testing.processes import alive, descendants, jcmd, threads  # noqa: E402

apply_loopback_env()

#: Whose code a sampled frame is, by class name prefix (JFR writes them with slashes).
OWNERS = (("sparkkpl/shaded/software/amazon/kinesis/producer", "KPL (Java side)"),
          ("sparkkpl/shaded/com/google/protobuf", "KPL (Java side)"),
          ("sparkkpl/shaded", "libraries the sink bundles"), ("sparkkpl/", "the sink"),
          ("org/apache/spark", "Spark"), ("scala/", "Spark"))


#: JVM threads by kind, from the thread names the JVM, Spark and the KPL give them.
THREAD_KINDS = (("Executor task launch", "Spark tasks (the sink's row path)"), ("C2 Compiler", "JIT compiler"),
                ("C1 Compiler", "JIT compiler"), ("GC Thread", "garbage collector"), ("G1", "garbage collector"),
                ("kpl-", "KPL Java side"), ("spark-kpl-", "the sink's KPL-call threads"))


def thread_cpu_seconds(pid: int) -> Dict[str, float]:
    """CPU seconds of each thread of a process, by kind of thread (see THREAD_KINDS)."""
    spent: Dict[str, float] = collections.defaultdict(float)
    for thread in threads(pid).values():
        kind = next((k for prefix, k in THREAD_KINDS if thread.command.startswith(prefix[:15])), "other")
        spent[kind] += thread.cpu_seconds
    return spent


def perf_top(recording: Path, count: int = 12) -> str:
    """The daemon's hottest functions in a perf recording, with their share of its samples."""
    printed = subprocess.run(["perf", "report", "-i", str(recording), "--no-children", "--sort", "dso,symbol",
                              "--stdio", "-g", "none"], capture_output=True, text=True, check=True).stdout
    rows = [line for line in printed.splitlines() if re.match(r"\s+\d+\.\d+%", line)]
    # Each row ends with perf's empty columns ("-  -"), dropped here.
    return "\n".join("  " + re.sub(r"\s+", " ", re.sub(r"(\s+-)+\s*$", "", row.strip())) for row in rows[:count])


def tools_env() -> Dict[str, str]:
    """jfr is a JVM too: without this it would start a recording of its own."""
    return {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}


def owner(frames: Iterable[dict]) -> str:
    """The innermost frame that belongs to someone named in OWNERS; else the JDK's."""
    for frame in frames:
        name = frame["method"]["type"]["name"]
        for prefix, who in OWNERS:
            if name.startswith(prefix):
                return who
    return "JDK (I/O, locks, GC-visible work)"


def jfr_shares(recording: Path, start: float, end: float) -> collections.Counter:
    """Samples of the JVM's threads between two wall-clock times, by owner of the running code."""
    printed = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", str(recording)],
                             capture_output=True, text=True, check=True, env=tools_env()).stdout
    shares: collections.Counter = collections.Counter()
    for event in json.loads(printed)["recording"]["events"]:
        values = event["values"]
        if start <= datetime.fromisoformat(values["startTime"]).timestamp() <= end:
            shares[owner(values["stackTrace"]["frames"])] += 1
    return shares


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--jfr", default=str(Path(tempfile.gettempdir()) / "spark-kpl-sink.jfr"))
    parser.add_argument("--warm-writes", type=int, default=2)
    parser.add_argument("--perf", action="store_true", help="sample the KPL daemon with Linux perf")
    parser.add_argument("--shards", type=int, default=16, help="of the stream written")
    parser.add_argument("--options", type=json.loads, help="the sink's options besides the endpoint's, as JSON "
                                                           "(default: the throughput benchmark's KPL settings)")
    args = parser.parse_args()
    perf_data = Path(tempfile.gettempdir()) / "spark-kpl-daemon.perf"
    # The driver JVM is started by pyspark below and inherits this.
    os.environ["JAVA_TOOL_OPTIONS"] = (f"-XX:FlightRecorderOptions=stackdepth=256 "
                                       f"-XX:StartFlightRecording=filename={args.jfr},settings=profile")

    import spark_kpl
    from spark_kpl_bench.throughput.child_process import counters_between
    from spark_kpl_bench.throughput.settings import KPL_TUNING
    from spark_kpl_bench.throughput.workload import records_df
    from spark_kpl_testing.endpoint import KinesisEndpoint
    from spark_kpl_testing.session import spark_session

    with KinesisEndpoint({"profile": args.shards}, store=False) as endpoint:
        spark = spark_session("spark-kpl-profile", log_level=None)
        try:
            options = {**endpoint.kpl_options(), **(KPL_TUNING if args.options is None else args.options)}
            spark_kpl.write(records_df(spark, 1, 8, 1), "profile", partition_key="partitionKey", **options)
            rows = records_df(spark, args.records, args.size, 2).persist()
            rows.count()
            for _ in range(args.warm_writes):
                spark_kpl.write(rows, "profile", partition_key="partitionKey", **options)
            processes = {pid: found.command for pid, found in descendants(os.getpid()).items()}
            jvm = next(pid for pid, name in processes.items() if name == "java")
            perf = None
            if args.perf:
                daemon = next(pid for pid, name in processes.items() if name.startswith("kinesis_produc"))
                perf = subprocess.Popen(["perf", "record", "-F", "999", "-p", str(daemon), "-o", str(perf_data)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)  # perf attaches
            before = {pid: cpu_seconds(pid) for pid in processes}
            threads_before = thread_cpu_seconds(jvm)
            own_before, counters_before, started = cpu_seconds(os.getpid()), endpoint.stats(), time.time()
            try:
                result = spark_kpl.write(rows, "profile", partition_key="partitionKey", **options)
            finally:
                if perf is not None:
                    perf.send_signal(signal.SIGINT)  # perf writes its recording on SIGINT
                    perf.wait()
            ended = time.time()
            kinesis = counters_between(counters_before, endpoint.stats())
            seconds = ended - started
            spent = {pid: cpu_seconds(pid) - before[pid] for pid in before if alive(pid)}
            by_thread = {kind: cpu - threads_before.get(kind, 0.0) for kind, cpu in thread_cpu_seconds(jvm).items()}
            own = cpu_seconds(os.getpid()) - own_before
            # The JVM outlives spark.stop() (it goes with this process): take the recording now.
            jcmd(jvm, "JFR.dump", f"filename={args.jfr}", timeout=120)
        finally:
            spark.stop()
    print(f"{result.records_written:,} records of {args.size} B into {args.shards:,} shards in {seconds:.2f} s: "
          f"{result.records_written / seconds:,.0f} records/s")
    for pid, cpu in sorted(spent.items(), key=lambda item: -item[1]):
        if cpu > 0.05:
            print(f"  {processes[pid]:<16} {cpu:6.2f} CPU s = {cpu * 1e6 / result.records_written:5.1f} µs/record")
    print(f"  {'this Python':<16} {own:6.2f} CPU s (the endpoint included)")
    accepted = kinesis["records_received"]
    print(f"Kinesis records the endpoint accepted: {accepted:,}, refused: {kinesis['records_rejected']:,}; "
          f"user records per Kinesis record: {result.records_written / accepted if accepted else 0:.1f}")
    print("JVM CPU by thread kind:")
    for kind, cpu in sorted(by_thread.items(), key=lambda item: -item[1]):
        if cpu > 0.005:
            print(f"  {kind:<36} {cpu:6.2f} CPU s = {cpu * 1e6 / result.records_written:5.2f} µs/record")
    if args.perf:
        print("KPL daemon, hottest functions (share of its samples):")
        print(perf_top(perf_data))
    shares = jfr_shares(Path(args.jfr), started, ended)
    total = sum(shares.values())
    print(f"JVM CPU samples during the write ({total}), by whose code was running:")
    for who, count in shares.most_common():
        print(f"  {who:<36} {100 * count / total:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
