"""Runs scenarios for real: each on a stream of its own of the endpoint, its fault brought on at its
moment, then what the stream holds counted against what was written and checked against what the
scenario expects."""

from __future__ import annotations

import base64
import json
import math
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from spark_kpl import dedup
from spark_kpl_bench.reliability.faults import (
    EARLIER_WRITE,
    AttemptInterruption,
    ProcessFaults,
    StreamDeletion,
    StreamRecreation,
)
from spark_kpl_bench.reliability.scenario import CLUSTER_WORKERS, MASTER, Scenario
from spark_kpl_bench.reliability.writes import body, summarize_error, write
from spark_kpl_testing.cluster import StandaloneCluster
from spark_kpl_testing.delivery import kcl_view, repeated_kinesis_records, wait_until_settled
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.polling import poll_until
from spark_kpl_testing.records import Record
from spark_kpl_testing.session import spark_session


def failed_task_attempts(spark, groups: List[str]) -> int:
    tracker = spark.sparkContext.statusTracker()
    failed = 0
    for job_id in (job for group in groups for job in tracker.getJobIdsForGroup(group)):
        job = tracker.getJobInfo(job_id)
        for stage_id in (job.stageIds if job else []):
            stage = tracker.getStageInfo(stage_id)
            if stage:
                failed += stage.numFailedTasks
    return failed


def dead_lettered(folder: Path) -> Counter:
    """The rows of the records that committed task attempts kept under ``deadLetterPath`` ``folder``,
    with their counts (an attempt's hidden in-progress file is not yet, or no longer, one of them)."""
    files = [path for path in folder.rglob("*") if path.is_file() and not path.name.startswith(".")]
    return Counter(body(base64.b64decode(json.loads(line)["data"]))
                   for path in files for line in path.read_text().splitlines())


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def tally(stored: List[Tuple[List[Record], Dict[str, Any]]], count: int) -> Dict[str, Any]:
    """What the stream holds (each incarnation's records and shard ranges), against the ``count`` rows
    written; the records of a scenario's earlier write left out."""
    def counted(records: List[Record]) -> List[Record]:
        return [r for r in records if not r.data.startswith(EARLIER_WRITE)]

    records = [r for held, _ in stored for r in counted(held)]
    kcl_per_incarnation = [counted(kcl_view(held, ranges)) for held, ranges in stored]
    kcl = [r for read in kcl_per_incarnation for r in read]
    payloads: Counter = Counter()
    ids: Counter = Counter()
    id_of_payload: Dict[bytes, set] = {}
    for record in records:
        rid = dedup.record_id(record.data)
        payloads[body(record.data)] += 1
        ids[rid] += 1
        id_of_payload.setdefault(body(record.data), set()).add(rid)
    distinct = len(payloads)
    expected = {f"row-{i} ".ljust(100, ".").encode() for i in range(count)}
    read_by_kcl = Counter(body(r.data) for r in kcl)
    return {
        "total": sum(payloads.values()), "distinct": distinct, "duplicates": sum(payloads.values()) - distinct,
        # Detectable: every copy of a payload carries one and the same id, so dropping repeated ids leaves
        # exactly one copy of each payload.
        "detectable": all(len(v) == 1 for v in id_of_payload.values()) and len(ids) == distinct,
        "missing_rows": expected - set(payloads),
        "missing_for_kcl_rows": expected - set(read_by_kcl),
        # What a KCL consumer reads more than once, every copy counted; and the Kinesis records among what
        # it reads that are byte-for-byte copies of another (the KPL's "Wrong Shard" re-sends).
        "duplicated_for_kcl": sum(read_by_kcl.values()) - len(read_by_kcl),
        "resent_for_kcl": sum(repeated_kinesis_records(read) for read in kcl_per_incarnation),
        "unexpected": len(set(payloads) - expected),
    }


def run(spark, endpoint: KinesisEndpoint, scenario: Scenario, number: int, count: int) -> Dict[str, Any]:
    stream = f"rel{number}"
    endpoint.create_stream(stream, shards=scenario.shards, on_demand=scenario.on_demand)
    endpoint.set_faults(scenario.faults)
    endpoint.end_outage()
    group = f"reliability-{number}"
    stop = threading.Event()

    def trigger() -> None:
        reached = poll_until(lambda: stop.is_set() or len(endpoint.records(stream)) >= scenario.trigger_after,
                             math.inf)  # user records, de-aggregated
        if reached and not stop.is_set():
            scenario.during(endpoint)  # type: ignore[misc]

    endpoint.reset_counters()
    watcher = threading.Thread(target=trigger, daemon=True) if scenario.during else None
    written: Optional[int] = None
    spark.sparkContext.setJobGroup(group, scenario.name)
    started = time.monotonic()
    if watcher:
        watcher.start()
    options = {**endpoint.kpl_options(), **scenario.options}
    # With failOnError=false a failed record is counted, not raised, and a streaming query reports no
    # count: such a scenario keeps its failed records as dead letters, and the outcome counts those.
    dead_letters: Optional[Path] = None
    if options.get("failOnError") == "false":
        if "deadLetterPath" not in options:
            options["deadLetterPath"] = tempfile.mkdtemp(prefix="spark-kpl-reliability-dead-")
        dead_letters = Path(options["deadLetterPath"])
    groups = [group]
    if scenario.before:
        scenario.before(spark, endpoint, stream, options)
    try:
        outcome, written = write(spark, endpoint, scenario, scenario.stream or stream, options, count, groups)
    except Exception as error:  # the outcome being measured
        outcome = f"error: {summarize_error(error)}"
        wait_until_settled(endpoint, quiet=2)  # what the failed tasks had in flight lands first
    duration = time.monotonic() - started
    stop.set()
    if watcher:
        watcher.join(5)
    if isinstance(scenario.during, AttemptInterruption):
        outcome += f"; {scenario.during.summary()}"
    endpoint.end_outage()
    endpoint.set_faults(Faults())
    hit = {**endpoint.record_errors, **{f"call {k}": v for k, v in endpoint.call_errors.items()}}
    # Each incarnation of the stream with its shards' ranges: a stream created again under the name starts
    # its shard ids over, so a KCL consumer reads each apart.
    stored: List[Tuple[List[Record], Dict[str, Any]]] = []
    deletion = scenario.during.deletion if isinstance(scenario.during, StreamRecreation) else scenario.during
    if isinstance(deletion, StreamDeletion):
        stored.append((deletion.held, deletion.ranges))
    if stream in endpoint.streams:
        stored.append((endpoint.records(stream), endpoint.hash_ranges(stream)))
        endpoint.delete_stream(stream)
    assert stored, f"stream {stream} vanished"
    counts = tally(stored, count)
    dead: Counter = Counter()
    if dead_letters:
        if dead_letters.is_dir():
            dead = dead_lettered(dead_letters)
            same = "the same rows" if set(dead) == counts["missing_rows"] else "NOT the same rows"
            outcome += (f"; dead letters: {sum(dead.values())} records ({len(dead)} distinct rows), missing: "
                        f"{len(counts['missing_rows'])}, {same}")
        else:
            outcome += "; deadLetterPath is no folder: no dead letters to read"
        remove(dead_letters)
    return {
        "scenario": scenario.name, "note": scenario.note, "in": count, **counts,
        "missing": len(counts["missing_rows"]), "missing_for_kcl": len(counts["missing_for_kcl_rows"]),
        "dead_lettered": set(dead), "failed_attempts": failed_task_attempts(spark, groups), "outcome": outcome,
        "reported_but_absent": written is not None and written > counts["distinct"],
        "hit": ", ".join(f"{k} {v}" for k, v in sorted(hit.items()) if v) or "none", "seconds": duration,
    }


def violations(scenario: Scenario, result: Dict[str, Any]) -> List[str]:
    """How a row breaks what its fault must lead to, or shows a loss; empty when it does not."""
    found = []
    if not re.match(scenario.expect, result["outcome"]):
        found.append(f"outcome is not /{scenario.expect}/")
    if not result["detectable"]:
        found.append("duplicates not detectable by record id")
    if result["reported_but_absent"]:
        found.append("records reported written but absent")
    if result["unexpected"]:
        found.append(f"{result['unexpected']} unexpected records")
    if result["outcome"].startswith("success"):
        # A write that succeeds may miss only the records it dead-lettered, and dead-letters only missing ones.
        lost = (result["missing_rows"] | result["missing_for_kcl_rows"]) - result["dead_lettered"]
        if lost:
            found.append(f"{len(lost)} records missing and not dead-lettered")
        if result["dead_lettered"] - result["missing_rows"]:
            found.append("records dead-lettered that are in the stream")
    return found



def run_all(spark, endpoint: KinesisEndpoint, numbered: List[Tuple[int, Scenario]], count: int,
            results: Dict[int, Dict[str, Any]]) -> None:
    for number, scenario in numbered:
        result = run(spark, endpoint, scenario, number, count)
        result["violations"] = violations(scenario, result)
        print(f"{result['scenario']}: in {result['in']}, out {result['total']} "
              f"({result['distinct']} distinct), dup {result['duplicates']} "
              f"missing for KCL {result['missing_for_kcl']} (detectable {result['detectable']}), "
              f"for KCL dup {result['duplicated_for_kcl']} re-sent {result['resent_for_kcl']}, "
              f"missing {result['missing']}, failed attempts {result['failed_attempts']}, "
              f"hit [{result['hit']}], {result['outcome'][:300]} [{result['seconds']:.1f} s]"
              + (f" BROKEN: {'; '.join(result['violations'])}" if result["violations"] else ""), flush=True)
        results[number] = result


def run_catalogue(chosen: List[Tuple[int, Scenario]], count: int,
                  processes: ProcessFaults) -> Tuple[List[Dict[str, Any]], str]:
    """Runs the ``chosen`` (numbered) scenarios, local mode first (a session per master), then those on a
    standalone cluster: one SparkContext per JVM, so each needs a session of its own. Returns their results in catalogue
    order and the Spark version they ran on."""
    results: Dict[int, Dict[str, Any]] = {}
    version = ""
    with KinesisEndpoint() as endpoint:
        local = [(n, s) for n, s in chosen if not s.cluster]
        for master in dict.fromkeys(s.master or MASTER for _, s in local):  # a session per master, in order
            processes.spark = session(master, {})
            try:
                run_all(processes.spark, endpoint, [(n, s) for n, s in local if (s.master or MASTER) == master],
                        count, results)
                version = processes.spark.version
            finally:
                processes.spark.stop()
        clustered = [(n, s) for n, s in chosen if s.cluster]
        if clustered:
            with StandaloneCluster(workers=CLUSTER_WORKERS) as processes.cluster:
                processes.spark = session(processes.cluster.master_url, processes.cluster.spark_conf())
                try:
                    run_all(processes.spark, endpoint, clustered, count, results)
                    version = processes.spark.version
                finally:
                    processes.spark.stop()
    shutil.rmtree(processes.native_dir, ignore_errors=True)
    return [results[number] for number in sorted(results)], version


def session(master: str, conf: Dict[str, str]) -> Any:
    return spark_session("spark-kpl-reliability", master, conf={"spark.kpl.producerIdleTimeoutMs": "2000", **conf})
