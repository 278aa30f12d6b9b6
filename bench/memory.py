"""Peak memory (driver JVM RSS + KPL daemon RSS) against input size, bounded vs unbounded.

A benchmark, not a test: ``bench/memory.sh`` (or ``.venv/bin/python bench/memory.py``).

The parent process runs the project's throttling Kinesis endpoint (:class:`KinesisEndpoint`, per-shard
token buckets at Kinesis's limits times ``--shard-limit-share``) on 127.0.0.1. Each measurement runs in
a fresh child Python (``--child``) with a local-mode SparkSession (``local[2]``, the spark-kpl jar via
``spark_kpl.configure``) that writes N records of ``--record-bytes`` to a fresh stream. Meanwhile the
parent samples, every ``--interval`` seconds, the RSS (``/proc/<pid>/statm``) of the child's JVM and of
every ``kinesis_producer`` daemon under it, keeping the peak of the sum and of each part. After the
child exits, the records the endpoint stored are de-aggregated and counted (every id must be there).

Writes ``bench/results/throughput/memory.json`` (machine, load, command, per-run data) and
``bench/results/throughput/memory.png``.
Everything started here (the child, its JVM, daemons, the endpoint) is stopped by pid, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

from spark_kpl_bench import host
from spark_kpl_bench.processes import rss_bytes
from spark_kpl_testing.env import loopback_env, python_path
from spark_kpl_testing.processes import descendants, stop_process_tree

REPO = Path(__file__).resolve().parents[1]
MIB = 1 << 20
ID_DIGITS = 10
#: Same for every mode: records wait in the KPL far longer than its 30 s default TTL when unbounded.
COMMON_OPTIONS = {"RecordTtl": "3600000", "ackTimeoutMs": "3600000"}
MODES: Dict[str, Dict[str, str]] = {
    # The sink's defaults: queueLimit 100,000 records, queueLimitBytes 16 MiB.
    "bounded-default": {},
    "bounded-8MiB": {"queueLimitBytes": str(8 * MIB)},
    "unbounded": {"queueLimit": str(10**12), "queueLimitBytes": str(10**15)},
}


# -- the child: one write in a fresh Spark driver ------------------------------------------


def child(spec: Dict[str, Any]) -> int:
    from pyspark.sql import functions as F

    import spark_kpl
    from spark_kpl_testing.session import spark_session

    spark = spark_session("spark-kpl-bench-memory", log_level=None,
                          conf={"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # set once the session's SparkContext runs
    count, size = spec["records"], spec["record_bytes"]
    # Built in the JVM (no Python workers): a 10-digit id, then padding to `size` bytes.
    df = spark.range(count, numPartitions=2).select(
        F.concat(F.lpad(F.col("id").cast("string"), ID_DIGITS, "0"),
                 F.expr(f"repeat('x', {size - ID_DIGITS})")).cast("binary").alias("data"))
    print(json.dumps({"event": "started", "jvm_pid": int(jvm.java.lang.ProcessHandle.current().pid())}),
          flush=True)
    started = time.monotonic()
    result = spark_kpl.write(df, spec["stream"], **spec["options"])
    seconds = time.monotonic() - started
    print(json.dumps({
        "event": "done", "seconds": round(seconds, 2), "result": result.__dict__,
        "spark_version": spark.version,
        "java_version": str(jvm.java.lang.System.getProperty("java.version")),
        "java_vm": str(jvm.java.lang.System.getProperty("java.vm.name")),
        "max_heap_mib": int(jvm.java.lang.Runtime.getRuntime().maxMemory()) // MIB,
    }), flush=True)
    spark.stop()
    return 0


# -- the parent -------------------------------------------------------------------------------


def run_one(endpoint: Any, spec: Dict[str, Any], env: Dict[str, str], interval: float,
            timeout: float, log: Path) -> Dict[str, Any]:
    endpoint.create_stream(spec["stream"], spec["shards"], max_record_kib=spec.get("max_record_kib", 1024))
    load_before = host.facts()["loadavg"]
    with open(log, "ab") as err:
        proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)], env=env,
                                cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True)  # Ctrl-C is the parent's to handle
    stdout = proc.stdout
    assert stdout is not None  # a pipe
    lines: List[Dict[str, Any]] = []

    def read_events() -> None:
        for line in stdout:
            if line.startswith(b"{"):
                lines.append(json.loads(line))

    reader = threading.Thread(target=read_events, daemon=True)
    reader.start()
    peak = {"total": 0, "jvm": 0, "daemon": 0, "python": 0}
    daemons_seen: set = set()
    samples = 0
    started = time.monotonic()
    try:
        while proc.poll() is None:
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"run {spec['stream']} took over {timeout:.0f}s")
            tree = descendants(proc.pid)
            jvm = sum(rss_bytes(p) for p, found in tree.items() if found.command == "java")
            daemon_pids = [p for p, found in tree.items() if found.command.startswith("kinesis_produce")]
            daemons_seen.update(daemon_pids)
            daemon = sum(rss_bytes(p) for p in daemon_pids)
            peak["jvm"] = max(peak["jvm"], jvm)
            peak["daemon"] = max(peak["daemon"], daemon)
            peak["total"] = max(peak["total"], jvm + daemon)
            peak["python"] = max(peak["python"], rss_bytes(proc.pid))
            samples += 1
            time.sleep(interval)
    finally:
        stop_process_tree(proc, 10)  # TERM first: the child's spark.stop() and JVM exit
        reader.join(5)
    done = next((line for line in lines if line.get("event") == "done"), None)
    if proc.returncode != 0 or done is None:
        raise RuntimeError(f"run {spec['stream']} failed (exit {proc.returncode}); see {log}")
    # At least once: every id must have arrived (duplicates from retries are counted, not an error).
    records = endpoint.records(spec["stream"])
    ids = {r.data[:ID_DIGITS] for r in records}
    endpoint.delete_stream(spec["stream"])
    result = done["result"]
    return {
        "records": spec["records"], "record_bytes": spec["record_bytes"],
        "input_mib": round(spec["records"] * spec["record_bytes"] / MIB, 2),
        "mode": spec["mode"], "mode_options": spec["mode_options"],
        "peak_jvm_rss_mib": round(peak["jvm"] / MIB, 1),
        "peak_daemon_rss_mib": round(peak["daemon"] / MIB, 1),
        "peak_total_rss_mib": round(peak["total"] / MIB, 1),
        "peak_child_python_rss_mib": round(peak["python"] / MIB, 1),
        "records_delivered": len(records), "distinct_ids_delivered": len(ids),
        # what Kinesis stored: a sub-record of an aggregate shares its Kinesis record's sequence number
        "user_records_per_kinesis_record": round(
            len(records) / max(1, len({(r.shard_id, r.sequence_number) for r in records})), 1),
        "every_record_arrived": len(ids) == spec["records"],
        "seconds": done["seconds"], "samples": samples, "daemons": len(daemons_seen),
        "load_before": load_before, "load_after": host.facts()["loadavg"],
        "write_result": result,
        "_versions": {k: done[k] for k in ("spark_version", "java_version", "java_vm", "max_heap_mib")},
    }


def table(runs: List[Dict[str, Any]]) -> str:
    head = (f"{'records':>8} {'input MiB':>9} {'mode':<16} {'JVM MiB':>8} {'daemon MiB':>10} "
            f"{'total MiB':>9} {'delivered':>9} {'seconds':>7} {'bp_cycles':>9} {'peak out MiB':>12}")
    rows = [head, "-" * len(head)]
    for r in runs:
        rows.append(
            f"{r['records']:>8} {r['input_mib']:>9.1f} {r['mode']:<16} {r['peak_jvm_rss_mib']:>8.1f} "
            f"{r['peak_daemon_rss_mib']:>10.1f} {r['peak_total_rss_mib']:>9.1f} "
            f"{r['distinct_ids_delivered']:>9} {r['seconds']:>7.1f} "
            f"{r['write_result']['backpressure_cycles']:>9} "
            f"{r['write_result']['peak_outstanding_bytes'] / MIB:>12.1f}")
    return "\n".join(rows)


def ratios(runs: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out = []
    by = {(r["records"], r["mode"]): r for r in runs}
    for records in sorted({r["records"] for r in runs}):
        unbounded = by.get((records, "unbounded"))
        if unbounded is None:
            continue
        entry: Dict[str, Any] = {"records": records}
        for mode in MODES:
            if mode != "unbounded" and (records, mode) in by:
                entry[f"unbounded/{mode}"] = round(
                    unbounded["peak_total_rss_mib"] / by[(records, mode)]["peak_total_rss_mib"], 2)
        out.append(entry)
    return out


def plot(runs: List[Dict[str, Any]], meta: Dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), constrained_layout=True)
    colors = {"bounded-default": "tab:blue", "bounded-8MiB": "tab:green", "unbounded": "tab:red"}
    parts = [("peak_total_rss_mib", "Peak RSS: driver JVM + kinesis_producer daemon"),
             ("peak_jvm_rss_mib", "Peak RSS: driver JVM"),
             ("peak_daemon_rss_mib", "Peak RSS: kinesis_producer daemon")]
    for mode in sorted(MODES, key=lambda m: m == "bounded-default"):  # the hollow marker on top
        mine = sorted((r for r in runs if r["mode"] == mode), key=lambda r: r["records"])
        if not mine:
            continue
        x = [r["input_mib"] for r in mine]
        for ax, (key, _) in zip(axes, parts):
            hollow = {"marker": "D", "markersize": 10, "markerfacecolor": "none", "zorder": 3} \
                if mode == "bounded-default" else {"marker": "o"}
            ax.plot(x, [r[key] for r in mine], "-", color=colors[mode], label=f"{mode} {_mode_label(mode)}",
                    **hollow)
    for ax, (_, title) in zip(axes, parts):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(f"input (MiB of {meta['record_bytes']}-byte records)")
        ax.set_ylabel("MiB")
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"spark-kpl, local[2], endpoint throttled to {meta['shards']} shard(s) x "
                 f"{meta['shard_mib_per_second']:g} MiB/s; {meta['machine']['nproc']} cores, "
                 f"load {meta['load_start'][0]}", fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _mode_label(mode: str) -> str:
    return {"bounded-default": "(queueLimitBytes 16 MiB)", "bounded-8MiB": "(queueLimitBytes 8 MiB)",
            "unbounded": "(no cap)"}[mode]


def save(runs: List[Dict[str, Any]], meta: Dict[str, Any], out: Path, planned: int) -> None:
    meta["runs"], meta["ratios"] = runs, ratios(runs)
    meta["complete"] = len(runs) == planned
    (out / "memory.json").write_text(json.dumps(meta, indent=1) + "\n")
    plot(runs, meta, out / "memory.png")


def child_env(workdir: Path) -> Dict[str, str]:
    """The children's environment, with a private copy of the jar in ``workdir``: a rebuild during the
    benchmark must not change what it measures."""
    import spark_kpl

    jar = workdir / "spark-kpl.jar"
    shutil.copy2(spark_kpl.jar_path(), jar)
    env = loopback_env()
    env["SPARK_KPL_JAR"] = str(jar)
    env["PYTHONPATH"] = python_path()
    return env


def parent(args: argparse.Namespace) -> int:
    import spark_kpl
    from spark_kpl_testing.endpoint import KINESIS_SHARD_BYTES_PER_SECOND, Faults, KinesisEndpoint

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="spark-kpl-bench-"))
    env = child_env(workdir)
    log = workdir / "children.log"
    modes = args.modes.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    meta: Dict[str, Any] = {
        "command": shlex.join([Path(sys.argv[0]).as_posix()] + sys.argv[1:]),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                     text=True).stdout.strip(),
        "jar": str(spark_kpl.jar_path()), "machine": host.facts(), "load_start": host.facts()["loadavg"],
        "record_bytes": args.record_bytes, "shards": args.shards,
        "shard_mib_per_second": args.shard_limit_share * KINESIS_SHARD_BYTES_PER_SECOND / MIB,
        "shard_records_per_second": args.shard_limit_share * 1000,
        "sample_interval_s": args.interval, "spark_master": "local[2]",
        "common_options": COMMON_OPTIONS, "modes": MODES,
        "rss": "from /proc/<pid>/statm; JVM = the child's `java` process, daemon = every "
               "`kinesis_producer` under it; peaks over samples, total = peak of the per-sample sum",
    }
    runs: List[Dict[str, Any]] = []
    endpoint = KinesisEndpoint(faults=Faults.kinesis_limits(args.shard_limit_share), store=True)
    previous = signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        endpoint.start()
        kpl = endpoint.kpl_options()
        print(f"endpoint on 127.0.0.1:{endpoint.port}; {args.shards} shard(s) at "
              f"{meta['shard_mib_per_second']:g} MiB/s each; load {meta['load_start']}", flush=True)
        for n, records in enumerate(sizes):
            for mode in modes:
                spec = {"records": records, "record_bytes": args.record_bytes, "mode": mode,
                        "mode_options": MODES[mode], "shards": args.shards, "stream": f"bench-{mode}-{records}-{n}",
                        "options": {**kpl, **COMMON_OPTIONS, **MODES[mode]}}
                run = run_one(endpoint, spec, env, args.interval, args.run_timeout, log)
                versions = run.pop("_versions")
                meta.update(versions)
                runs.append(run)
                print(f"{records:>7} {mode:<16} total {run['peak_total_rss_mib']:7.1f} MiB "
                      f"(JVM {run['peak_jvm_rss_mib']:.1f}, daemon {run['peak_daemon_rss_mib']:.1f}) "
                      f"{run['seconds']:.1f}s, {run['distinct_ids_delivered']}/{records} ids, "
                      f"bp {run['write_result']['backpressure_cycles']}, load {run['load_after'][0]}",
                      flush=True)
                save(runs, meta, out, len(sizes) * len(modes))  # a cut-short run keeps what it measured
                if not run["every_record_arrived"]:
                    raise RuntimeError(f"{spec['stream']}: only {run['distinct_ids_delivered']} of "
                                       f"{records} records arrived")
    finally:
        signal.signal(signal.SIGTERM, previous)
        meta["endpoint_stats"] = endpoint.stats() if endpoint.running else None
        endpoint.stop()
        meta["load_end"] = host.facts()["loadavg"]
        meta["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if runs:
            save(runs, meta, out, len(sizes) * len(modes))
            print()
            print(table(runs))
            print()
            for entry in meta["ratios"]:
                print(f"{entry['records']:>8} records: " + ", ".join(
                    f"{k} {v:.2f}x" for k, v in entry.items() if k != "records"))
            print(f"\nwrote {out / 'memory.json'} and {out / 'memory.png'}")
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="10000,20000,40000,80000", help="record counts")
    parser.add_argument("--record-bytes", type=int, default=1024)
    parser.add_argument("--modes", default="bounded-8MiB,unbounded", help=f"of {','.join(MODES)}")
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument("--shard-limit-share", type=float, default=1.0,
                        help="endpoint per-shard limits as a share of Kinesis's 1 MiB/s, 1000 records/s")
    parser.add_argument("--interval", type=float, default=0.05, help="RSS sampling period (s)")
    parser.add_argument("--run-timeout", type=float, default=900.0)
    parser.add_argument("--replot", metavar="JSON", help="only redraw the PNG next to this JSON")
    parser.add_argument("--out", default=str(REPO / "bench/results/throughput"))
    args = parser.parse_args()
    if args.child:
        return child(json.loads(args.child))
    if args.replot:
        meta = json.loads(Path(args.replot).read_text())
        plot(meta["runs"], meta, Path(args.replot).with_suffix(".png"))
        return 0
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
