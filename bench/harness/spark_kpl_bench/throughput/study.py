"""What the studies beside the throughput benchmark share (shards, latency, cluster, cold start): their
start, command line, the machine and jar measured, the sink in a fresh JVM."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from spark_kpl_bench import host
from spark_kpl_bench.throughput.child_process import run_process
from spark_kpl_bench.throughput.settings import CLI, JAR, ROOT
from spark_kpl_bench.throughput.summary import cpu_per_record, summarize


def machine(jar: Path) -> Dict[str, Any]:
    """The host, with the versions of everything measured."""
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    import pyspark
    return {**host.facts(), "java": java, "spark": pyspark.__version__,
            "kpl": f"{host.bundled_kpl_version(jar)} (amazon-kinesis-producer, shaded in {jar.name})",
            "aiokpl": distribution_version("aiokpl"), "boto3": distribution_version("boto3")}


def distribution_version(dist: str) -> str:
    """The installed version of ``dist``; a study that runs no such producer need not have it."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def sink_in_fresh_jvm(stream: str, records: int, size: int, runs: int, options: Dict[str, str], heap: str,
                      log: Path, counters: Callable[[], Dict[str, Any]],
                      before_run: Optional[Callable[[int], object]] = None,
                      spark: Tuple[str, Dict[str, str]] = ("local[2]", {}),
                      also: Callable[[], Sequence[int]] = tuple, fixed_heap: bool = False,
                      partitions: int = 2) -> Dict[str, Any]:
    """The sink writing ``records`` rows of ``size`` bytes to ``stream`` in a child of its own (a fresh
    JVM, its Spark master and settings ``spark``, its heap committed whole at start with ``fixed_heap``,
    the rows in ``partitions`` tasks):
    one untimed write, then ``runs`` timed ones (``before_run`` and ``also`` as run_process takes them);
    the entry summarized, with CPU per record."""
    command = [sys.executable, str(CLI), "child", "--heap", heap, *(["--fixed-heap"] if fixed_heap else []),
               "--producer", "sink",
               "--records", str(records), "--size", str(size), "--runs", str(runs + 1),
               "--partitions", str(partitions),
               "--options", json.dumps(options), "--stream", stream, "--master", spark[0],
               "--conf", json.dumps(spark[1])]
    entry = run_process(command, log, timeout=900, counters=counters, warmup=1, before_run=before_run, also=also)
    entry.update(producer="sink", record_bytes=size, records=records)
    summarize(entry, size)
    entry["cpu_us_per_record"] = cpu_per_record(entry)
    return entry


def study_start(name: str, args: argparse.Namespace, out: Path,
                **facts: Any) -> Tuple[Path, Dict[str, Any], Path, Path]:
    """A study's start: its scratch folder, its report (the command, the start time, ``facts``, the
    machine and the jar measured), the jar (a copy of this checkout's build unless --jar), which
    SPARK_KPL_JAR then names for the children, and its log, emptied."""
    work = Path(tempfile.mkdtemp(prefix=f"spark-kpl-{name}-"))
    report: Dict[str, Any] = {"command": " ".join([sys.executable] + sys.argv),
                              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **facts,
                              "results": []}
    jar = Path(args.jar) if args.jar else snapshot_jar(work, JAR)
    report["machine"] = machine(jar)
    report["jar_sha256"] = sha256_of(jar)
    os.environ["SPARK_KPL_JAR"] = str(jar)
    log = out / f"{name}.log"
    log.write_text("")
    return work, report, jar, log


def study_main(name: str, parser: argparse.ArgumentParser,
               measure: Callable[[argparse.Namespace, Path], Dict[str, Any]],
               table: Callable[[Dict[str, Any]], List[str]], plot: Callable[[Dict[str, Any], Path], None]) -> int:
    """The command line the studies beside this benchmark share (shards, latency, cluster): their own
    arguments in ``parser``, then the heap, the jar, the output folder and --report; measures (or reads
    OUT/<name>.json back), prints the table and draws the plot."""
    parser.add_argument("--heap", default="2g", help="the child JVMs' heap (spark.driver.memory)")
    parser.add_argument("--jar", help="the sink's jar to measure (default: this checkout's build, copied)")
    parser.add_argument("--out", default=str(ROOT / "bench/results" / name))
    parser.add_argument("--report", action="store_true",
                        help=f"print the table of OUT/{name}.json and redraw the plot, measuring nothing")
    args = parser.parse_args()
    exit_on_sigterm()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = json.loads((out / f"{name}.json").read_text()) if args.report else measure(args, out)
    print("\n".join(table(report)))
    plot(report, out)
    return 0


def exit_on_sigterm() -> None:
    """Make SIGTERM raise SystemExit, so that the orchestrator's finally blocks stop its children and the
    endpoint."""
    def terminated(signum, frame):
        raise SystemExit(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminated)


def sha256_of(path: Path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot_jar(work: Path, jar: Path) -> Path:
    """Copy the built jar once it is complete (a rebuild may be writing it)."""
    import zipfile
    target = work / jar.name
    for _ in range(120):
        try:
            shutil.copyfile(jar, target)
            with zipfile.ZipFile(target) as z:
                z.getinfo("sparkkpl/shaded/software/amazon/kinesis/producer/KinesisProducer.class")
            return target
        except (OSError, KeyError, zipfile.BadZipFile):
            time.sleep(5)
    raise SystemExit(f"{jar} did not become a complete jar")
