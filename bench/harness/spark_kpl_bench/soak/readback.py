"""The end of a soak: the stream read back against the committed rows, and what the stopped JVM left."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Set

from spark_kpl import dedup
from spark_kpl_bench.processes import running_from
from spark_kpl_bench.soak.settings import JVM_EXIT_SECONDS, STREAM
from spark_kpl_bench.soak.timeline import first_line
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.processes import stop_process_tree


@dataclass
class Delivery:
    batches: int
    rows: int
    read: int = 0
    lost: int = 0
    duplicates: int = 0
    undetectable: int = 0  # rows whose copies carry different record ids
    interrupted_batch: int = 0  # distinct rows past the last committed batch
    foreign: int = 0  # records that are no row of the query


def read_back(endpoint: KinesisEndpoint, batches: int, rows: int) -> Delivery:
    delivery = Delivery(batches, rows)
    copies: Counter = Counter()
    ids: Dict[int, Set[dedup.RecordId]] = {}
    for record in endpoint.records(STREAM):
        delivery.read += 1
        try:
            row = int(dedup.strip(record.data).split(b" ", 1)[0].removeprefix(b"soak-"))
        except ValueError:
            delivery.foreign += 1
            continue
        copies[row] += 1
        ids.setdefault(row, set()).add(dedup.record_id(record.data))
    delivery.lost = sum(1 for row in range(rows) if row not in copies)
    delivery.duplicates = sum(copies.values()) - len(copies)
    delivery.undetectable = sum(1 for found in ids.values() if len(found) > 1)
    delivery.interrupted_batch = sum(1 for row in copies if row >= rows)
    return delivery


@dataclass
class Leftovers:
    daemons: List[int]
    pipe_folders: List[str]


def stop_spark(spark, native_dir: Path) -> Leftovers:
    """Stops the Spark JVM as a cluster manager stops an executor (SIGTERM: its shutdown hooks close the
    KPL producers), counts the daemons and producer pipe folders it left in ``native_dir``, then stops
    whatever is still running."""
    jvm = spark.sparkContext._gateway.proc
    try:
        spark.stop()
    except Exception as error:  # a py4j call that Ctrl-C interrupted leaves the gateway unusable
        print(f"spark.stop() failed ({first_line(error)}); stopping the JVM by its pid", flush=True)
    jvm.send_signal(signal.SIGTERM)
    try:
        jvm.wait(JVM_EXIT_SECONDS)
    except subprocess.TimeoutExpired:
        print(f"the JVM outlived SIGTERM by {JVM_EXIT_SECONDS} s", flush=True)
    # Counted before stop_process_tree, which would stop a left daemon and hide it.
    daemons = running_from(native_dir)
    folders = sorted(p.name for p in native_dir.glob("producer-*")) if native_dir.exists() else []
    stop_process_tree(jvm, 10)
    for daemon in daemons:
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon, signal.SIGKILL)
    return Leftovers(daemons, folders)
