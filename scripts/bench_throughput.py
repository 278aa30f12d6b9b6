"""Throughput benchmark (issue 7): the kpl sink against the alternatives, side by side in one run.

Run by scripts/bench.sh. The orchestrator (this process) hosts the project's KinesisEndpoint
(store=False, 127.0.0.1) and starts each producer as a child process, sampling the RSS of the child's
whole process tree (JVM, KPL daemon, Python workers) from /proc. Each child prints one JSON line per
timed run. Writes bench/throughput.json and bench/throughput.png.

Producers: sink (spark_kpl.write, local[2]); kpl_loop (scripts/bench/KplLoop.java, plain KPL);
boto3 (put_records x500 in foreachPartition); aiokpl (in foreachPartition); noop (Spark's own noop
sink: what reading the rows costs Spark, a floor for the others); awslabs connector (not run: see
NOT_RUN).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from spark_kpl._jar import JAR_NAME
from spark_kpl.testing._env import LOOPBACK_AWS_ENV, apply_loopback_env, loopback_env

apply_loopback_env()

ROOT = Path(__file__).resolve().parents[1]
JAR = ROOT / "build/libs" / JAR_NAME
STREAM = "bench"
SHARDS = 16
#: Kinesis's per-shard quotas are not what is measured: every KPL-like producer gets them lifted alike.
KPL_TUNING = {"RateLimit": "10000"}
#: ... except in the quota workload: a stream this small, the endpoint enforcing Kinesis's per-shard
#: limits (1,000 records/s, 1 MiB/s), every producer at its own defaults.
QUOTA_STREAM, QUOTA_SHARDS = "bench-quota", 4
#: The workloads every producer runs, in report order.
WORKLOADS = ("A_100B", "B_10KB", "A_100B_quota")

NOT_RUN = {
    "awslabs_connector": (
        "not run: awslabs spark-sql-kinesis-connector is not published on Maven Central (checked "
        "software.amazon.kinesis:{spark-sql-kinesis-connector,spark-streaming-sql-kinesis-connector}"
        "_{2.12,2.13}: HTTP 404); upstream distributes a jar from an S3 bucket, which this machine may "
        "not fetch. It is also streaming-only (no batch df.write), built for Spark 3.x/Scala 2.12 "
        "(this venv is Spark 4.1/Scala 2.13), and its endpoint option is not passed to the KPL "
        "(KinesisEndpoint/KinesisPort/VerifyCertificate not settable), so its KPL would dial the real "
        "AWS endpoint: it cannot be pointed at a loopback endpoint safely."),
}


# ------------------------------------------------------------------ children


def records_df(spark, n: int, size: int, partitions: int):
    from pyspark.sql import functions as F

    return spark.range(n, numPartitions=partitions).select(
        F.encode(F.rpad(F.concat(F.col("id").cast("string"), F.lit("-")), size, "x"), "UTF-8").alias("data"),
        F.concat(F.lit("k"), F.col("id").cast("string")).alias("partitionKey"))


def boto3_partition(endpoint_url: str, stream: str):
    def send_partition(rows):
        import boto3
        import urllib3
        from botocore.config import Config

        urllib3.disable_warnings()
        client = boto3.client("kinesis", endpoint_url=endpoint_url, verify=False, region_name="us-east-1",
                              config=Config(retries={"max_attempts": 10, "mode": "standard"}, proxies={}))

        def send(batch):
            while batch:
                answer = client.put_records(StreamName=stream, Records=batch)
                if not answer.get("FailedRecordCount"):
                    return
                batch = [e for e, r in zip(batch, answer["Records"]) if "ErrorCode" in r]
                time.sleep(0.05)  # throttled: back off a little before re-sending, as a careful user would

        batch = []
        for row in rows:
            batch.append({"Data": bytes(row.data), "PartitionKey": row.partitionKey})
            if len(batch) == 500:
                send(batch)
                batch = []
        if batch:
            send(batch)

    return send_partition


def aiokpl_partition(endpoint_url: str, stream: str, keys: Dict[str, str], lift_limits: bool):
    def send_partition(rows):
        import asyncio
        import warnings

        from aiokpl import Config, Producer

        warnings.filterwarnings("ignore")

        async def main():
            limits = dict(rate_limit_records_per_sec_per_shard=1e9,
                          rate_limit_bytes_per_sec_per_shard=1e12) if lift_limits else {}
            config = Config(region="us-east-1", endpoint_url=endpoint_url, verify_ssl=False, **limits,
                            aws_access_key_id=keys["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=keys["AWS_SECRET_ACCESS_KEY"])
            async with Producer(config) as producer:
                outcomes = []
                for row in rows:
                    outcomes.append(await producer.put_record(
                        stream=stream, partition_key=row.partitionKey, data=bytes(row.data)))
                await producer.flush()
                failed = 0
                for outcome in outcomes:
                    failed += not (await outcome.wait()).success
                if failed:
                    raise RuntimeError(f"aiokpl: {failed} records failed")

        asyncio.run(main())

    return send_partition


def child(args: argparse.Namespace) -> int:
    from pyspark.sql import SparkSession

    import spark_kpl

    options = json.loads(args.options)
    endpoint_url = options.pop("_endpoint_url", None)
    lift_limits = options.pop("_lift_limits", True)
    builder = spark_kpl.configure(SparkSession.builder.master("local[2]").appName(f"bench-{args.producer}"))
    spark = (builder.config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", args.heap).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        df = records_df(spark, args.records, args.size, args.partitions)
        if args.producer == "coldstart":
            small = records_df(spark, args.records, args.size, args.partitions)
            small.count()  # Spark itself warm; the sink's producer and daemon cold
            started = time.time()
            result = spark_kpl.write(small, args.stream, data="data", partition_key="partitionKey", **options)
            print(json.dumps({"save_start": started, "seconds": time.time() - started,
                              "records": result.records_written}), flush=True)
            return 0
        # Every Spark-based producer reads the same rows from memory, so building them (rpad of
        # 10 KB strings costs more than sending them) is not part of what is measured.
        df = df.persist()
        df.count()
        if args.producer == "sink":
            spark_kpl.write(records_df(spark, 1, 8, 1), args.stream, data="data", partition_key="partitionKey",
                            **options)  # warm-up: the producer starts and loads the shard map
        for run in range(args.runs):
            started = time.perf_counter()
            wall = time.time()
            extra: Dict[str, Any] = {}
            if args.producer == "sink":
                result = spark_kpl.write(df, args.stream, data="data", partition_key="partitionKey", **options)
                extra = {k: getattr(result, k) for k in ("records_written", "records_failed", "backpressure_cycles",
                                                          "blocked_ms", "peak_outstanding_records", "tasks")}
                records = result.records_written
            elif args.producer == "noop":  # Spark's own cost of the same job: a floor for the others
                df.write.format("noop").mode("overwrite").save()
                records = args.records
            elif args.producer == "boto3":
                df.foreachPartition(boto3_partition(endpoint_url, args.stream))
                records = args.records
            elif args.producer == "aiokpl":
                df.foreachPartition(aiokpl_partition(endpoint_url, args.stream, dict(LOOPBACK_AWS_ENV), lift_limits))
                records = args.records
            else:
                raise SystemExit(f"unknown producer {args.producer}")
            seconds = time.perf_counter() - started
            print(json.dumps({"run": run, "records": records, "seconds": seconds, "wall_start": wall, **extra}),
                  flush=True)
    finally:
        spark.stop()
    return 0


# ------------------------------------------------------------------ orchestrator


def _proc_table() -> Dict[int, tuple]:
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                raw = f.read()
            name = raw[raw.index("(") + 1:raw.rindex(")")]
            fields = raw[raw.rindex(")") + 2:].split()
            table[int(entry)] = (name, int(fields[1]), int(fields[21]) * os.sysconf("SC_PAGE_SIZE"))
        except (OSError, ValueError, IndexError):
            continue
    return table


class TreeSampler(threading.Thread):
    """Peak summed RSS of a process and all its descendants, by kind (java / kinesis_producer / python)."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_total = 0
        self.peak_by_kind: Dict[str, int] = {}
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            table = _proc_table()
            children: Dict[int, List[int]] = {}
            for pid, (_, ppid, _) in table.items():
                children.setdefault(ppid, []).append(pid)
            stack, kinds = [self.pid], {}
            while stack:
                pid = stack.pop()
                if pid in table:
                    name, _, rss = table[pid]
                    kind = "daemon" if name.startswith("kinesis_produc") else (
                        "jvm" if name == "java" else "python" if name.startswith("python") else None)
                    # Anything else is a fork between fork() and exec() (named after the forking
                    # thread), sharing its parent's pages: counting it would count the parent twice.
                    if kind:
                        kinds[kind] = kinds.get(kind, 0) + rss
                stack.extend(children.get(pid, []))
            total = sum(kinds.values())
            if total > self.peak_total:
                self.peak_total = total
            for kind, rss in kinds.items():
                self.peak_by_kind[kind] = max(self.peak_by_kind.get(kind, 0), rss)
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(5)


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def run_process(command: List[str], log: Path, timeout: float) -> Dict[str, Any]:
    """Start ``command`` in its own process group, sample its tree, collect its JSON lines; always stop it."""
    started = time.time()
    with open(log, "ab") as err:
        err.write(f"\n=== {' '.join(command)}\n".encode())
        err.flush()
        env = loopback_env()
        env["SPARK_LOCAL_IP"] = "127.0.0.1"  # Spark binds loopback only
        env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable  # workers: this venv
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL, cwd=ROOT, start_new_session=True)
        sampler = TreeSampler(proc.pid)
        sampler.start()
        cpu0 = _cpu_seconds()
        try:
            out, _ = proc.communicate(timeout=timeout)
        finally:
            sampler.stop()
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(10)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
    lines = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    return {"returncode": proc.returncode, "runs": lines, "process_seconds": time.time() - started,
            "endpoint_cpu_seconds": _cpu_seconds() - cpu0,
            "peak_rss_bytes": sampler.peak_total, "peak_rss_by_kind": sampler.peak_by_kind,
            "started": started}


def machine() -> Dict[str, Any]:
    mem = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            if key in ("MemTotal", "MemAvailable"):
                mem[key] = value.strip()
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    import pyspark
    return {"nproc": os.cpu_count(), "memory": mem, "kernel": platform.release(),
            "loadavg_start": os.getloadavg(), "python": platform.python_version(), "java": java,
            "spark": pyspark.__version__, "kpl": f"1.0.9 (amazon-kinesis-producer, shaded in {JAR_NAME})",
            "aiokpl": _version("aiokpl"), "boto3": _version("boto3")}


def _version(dist: str) -> str:
    from importlib.metadata import version
    return version(dist)


def summarize(entry: Dict[str, Any], size: int) -> None:
    rates = [r["records"] / r["seconds"] for r in entry["runs"] if r.get("seconds")]
    if not rates:
        return
    entry["records_per_s"] = {"min": min(rates), "median": statistics.median(rates), "max": max(rates)}
    entry["mb_per_s_median"] = statistics.median(rates) * size / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="cmd")
    c = sub.add_parser("child")
    c.add_argument("--producer", required=True)
    c.add_argument("--records", type=int, required=True)
    c.add_argument("--size", type=int, required=True)
    c.add_argument("--partitions", type=int, default=2)
    c.add_argument("--runs", type=int, default=3)
    c.add_argument("--options", default="{}")
    c.add_argument("--stream", default=STREAM)
    c.add_argument("--heap", default="4g")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--small-records", type=int, default=1_000_000, help="workload A records (100 B)")
    parser.add_argument("--large-records", type=int, default=100_000, help="workload B records (10 KB)")
    parser.add_argument("--boto3-scale", type=float, default=1.0,
                        help="boto3/aiokpl write this share of each workload (their rate is per record)")
    parser.add_argument("--aiokpl-scale", type=float, default=1.0, help="aiokpl writes this share")
    parser.add_argument("--producers", default="sink,kpl_loop,boto3,aiokpl,noop")
    parser.add_argument("--mock-records", type=int, default=20_000)
    parser.add_argument("--quota-records", type=int, default=200_000,
                        help="records of 100 B in the quota workload (0: not run)")
    parser.add_argument("--out", default=str(ROOT / "bench"))
    parser.add_argument("--heap", default="4g", help="the JVMs' heap: spark.driver.memory, and -Xmx of the KPL loop")
    parser.add_argument("--skip-extras", action="store_true", help="no per-task, cold-start or kinesis-mock runs")
    args = parser.parse_args()
    if args.cmd == "child":
        return child(args)

    from spark_kpl.testing.endpoint import Faults, KinesisEndpoint

    def terminated(signum, frame):  # run the finally blocks: stop children and the endpoint
        raise SystemExit(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminated)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "throughput.log"
    log.write_text("")
    work = Path(tempfile.mkdtemp(prefix="spark-kpl-bench-"))
    report: Dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv), "started_utc": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": machine(), "stream_shards": SHARDS,
        "kpl_tuning": KPL_TUNING, "results": [], "not_run": NOT_RUN}
    py = [sys.executable, str(Path(__file__).resolve()), "child", "--heap", args.heap]
    jar = snapshot_jar(work)  # others may rebuild build/libs meanwhile: every producer uses this copy
    os.environ["SPARK_KPL_JAR"] = str(jar)
    report["jar"] = {"path": str(JAR), "sha256": _sha256(jar)}
    first_put: Dict[str, Optional[float]] = {"t": None}
    endpoint = KinesisEndpoint({STREAM: SHARDS}, store=False).start()
    try:
        put_records = endpoint._ops["PutRecords"]

        def timed_put_records(payload):  # notes the first PutRecords arrival, for the cold start
            if first_put["t"] is None:
                first_put["t"] = time.time()
            return put_records(payload)

        endpoint._ops["PutRecords"] = timed_put_records
        native_dir = work / "native"
        native = subprocess.run([sys.executable, "-m", "spark_kpl", "extract-native", "--dir", str(native_dir),
                                 "--jar", str(jar)], env=loopback_env(), capture_output=True, text=True,
                                check=True).stdout.strip().splitlines()[-1]
        workloads = [("A_100B", 100, args.small_records, STREAM), ("B_10KB", 10_000, args.large_records, STREAM),
                     ("A_100B_quota", 100, args.quota_records, QUOTA_STREAM)]
        endpoint.create_stream(QUOTA_STREAM, QUOTA_SHARDS)
        for wname, size, n, stream in workloads:
            quota = stream == QUOTA_STREAM
            if quota and not n:
                continue
            endpoint.set_faults(Faults.kinesis_limits() if quota else Faults())
            kpl_opts = endpoint.kpl_options() if quota else {**endpoint.kpl_options(), **KPL_TUNING}
            for producer in args.producers.split(","):
                scale = {"boto3": args.boto3_scale, "aiokpl": args.aiokpl_scale}.get(producer, 1.0)
                records = max(500, int(n * scale))
                print(f"[{time.strftime('%H:%M:%S')}] {wname} {producer} {records} records x {args.runs}",
                      flush=True)
                endpoint.reset_counters()
                if producer == "kpl_loop":
                    props = [f"{k}={v}" for k, v in {**kpl_opts, "NativeExecutable": native,
                                                      "TempDirectory": str(native_dir)}.items()]
                    import pyspark
                    jars = Path(pyspark.__file__).parent / "jars"
                    # Spark's own jars supply what the sink gets from Spark at run time (slf4j, commons-logging)
                    command = ["java", f"-Xmx{args.heap}", "-cp", f"{jar}:{jars}/*", str(ROOT / "scripts/bench/KplLoop.java"), stream,
                               str(records), str(size), str(args.runs), *props]
                else:
                    options = dict(kpl_opts) if producer == "sink" else {
                        "_endpoint_url": endpoint.endpoint_url, "_lift_limits": not quota}
                    command = py + ["--producer", producer, "--records", str(records), "--size", str(size),
                                    "--runs", str(args.runs), "--options", json.dumps(options), "--stream", stream]
                entry = run_process(command, log, timeout=900)
                entry.update(workload=wname, producer=producer, record_bytes=size, records=records,
                             endpoint=endpoint.stats())
                summarize(entry, size)
                report["results"].append(entry)
                print(json.dumps({k: entry.get(k) for k in ("records_per_s", "peak_rss_bytes", "returncode")}),
                      flush=True)
                _save(report, out)
        endpoint.set_faults(Faults())
        kpl_opts = {**endpoint.kpl_options(), **KPL_TUNING}

        # Per-task overhead: the same 20,000 records in 2 or in 2,000 partitions, through the sink and
        # through Spark's noop sink (what Spark's own scheduling of those tasks costs).
        tasks = [(p, r, producer) for p, r in ((2, 10_000), (2000, 10)) for producer in ("sink", "noop")]
        for partitions, rows, producer in () if args.skip_extras else tasks:
            print(f"[{time.strftime('%H:%M:%S')}] tasks {partitions} x {rows} {producer}", flush=True)
            command = py + ["--producer", producer, "--records", str(partitions * rows), "--size", "100",
                            "--partitions", str(partitions), "--runs", str(args.runs), "--options",
                            json.dumps(kpl_opts)]
            entry = run_process(command, log, timeout=900)
            entry.update(workload=f"tasks_{partitions}x{rows}", producer=producer, record_bytes=100,
                         records=partitions * rows, partitions=partitions)
            summarize(entry, 100)
            report["results"].append(entry)
            _save(report, out)

        # Cold start: a fresh driver JVM, an empty nativeDir, save() to the first PutRecords arrival.
        for attempt in range(0 if args.skip_extras else 1):
            print(f"[{time.strftime('%H:%M:%S')}] cold start {attempt}", flush=True)
            cold_dir = work / f"cold-{attempt}"
            first_put["t"] = None
            command = py + ["--producer", "coldstart", "--records", "1000", "--size", "100", "--options",
                            json.dumps({**kpl_opts, "nativeDir": str(cold_dir)})]
            entry = run_process(command, log, timeout=600)
            entry.update(workload="cold_start", producer="sink", records=1000)
            if entry["runs"] and first_put["t"] is not None:
                entry["save_to_first_put_s"] = first_put["t"] - entry["runs"][0]["save_start"]
                entry["process_start_to_first_put_s"] = first_put["t"] - entry["started"]
            report["results"].append(entry)
            _save(report, out)

        # kinesis-mock, for contrast: the emulator is the bottleneck there.
        from spark_kpl.testing.kinesis import LocalKinesis

        print(f"[{time.strftime('%H:%M:%S')}] kinesis-mock sink {args.mock_records}", flush=True)
        if args.skip_extras:
            return 0
        with LocalKinesis(streams={STREAM: 4}) as kinesis:
            command = py + ["--producer", "sink", "--records", str(args.mock_records), "--size", "100",
                            "--runs", "1", "--options", json.dumps(kinesis.kpl_options())]
            entry = run_process(command, log, timeout=900)
        entry.update(workload="A_100B_kinesis_mock", producer="sink", record_bytes=100, records=args.mock_records)
        summarize(entry, 100)
        report["results"].append(entry)
    finally:
        endpoint.stop()
        shutil.rmtree(work, ignore_errors=True)
        report["machine"]["loadavg_end"] = os.getloadavg()
        report["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        _save(report, out)
    plot(report, out)
    return 0


def _sha256(path: Path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot_jar(work: Path) -> Path:
    """Copy the built jar once it is complete (a rebuild may be writing it)."""
    import zipfile
    target = work / JAR.name
    for _ in range(120):
        try:
            shutil.copyfile(JAR, target)
            with zipfile.ZipFile(target) as z:
                z.getinfo("sparkkpl/shaded/software/amazon/kinesis/producer/KinesisProducer.class")
            return target
        except (OSError, KeyError, zipfile.BadZipFile):
            time.sleep(5)
    raise SystemExit(f"{JAR} did not become a complete jar")


def _save(report: Dict[str, Any], out: Path) -> None:
    (out / "throughput.json").write_text(json.dumps(report, indent=1, default=str) + "\n")


def plot(report: Dict[str, Any], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = [e for e in report["results"] if e.get("records_per_s") and e["workload"] in WORKLOADS]
    fig, axes = plt.subplots(2, len(WORKLOADS), figsize=(6 * len(WORKLOADS), 8), squeeze=False)
    for col, workload in enumerate(WORKLOADS):
        rows = [e for e in entries if e["workload"] == workload]
        names = [e["producer"] for e in rows]
        med = [e["records_per_s"]["median"] for e in rows]
        lo = [m - e["records_per_s"]["min"] for m, e in zip(med, rows)]
        hi = [e["records_per_s"]["max"] - m for m, e in zip(med, rows)]
        ax = axes[0][col]
        ax.bar(names, med, yerr=[lo, hi], capsize=6, color="tab:blue")
        ax.set_yscale("log")
        ax.set_title(f"{workload}: records/s (median, min-max bars)")
        for i, m in enumerate(med):
            ax.text(i, m, f"{m:,.0f}", ha="center", va="bottom", fontsize=8)
        ax = axes[1][col]
        ax.bar(names, [e["peak_rss_bytes"] / 2**20 for e in rows], color="tab:orange")
        ax.set_title(f"{workload}: peak RSS of the producer's process tree (MiB)")
    fig.tight_layout()
    fig.savefig(out / "throughput.png", dpi=100)


if __name__ == "__main__":
    sys.exit(main())
