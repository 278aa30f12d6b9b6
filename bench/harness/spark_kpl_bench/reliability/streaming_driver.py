"""A Structured Streaming query to Kinesis whose driver runs in a process of its own, so that it can be
killed (SIGKILL: no shutdown hook, no cleanup) between the sink's commit of a micro-batch and Spark's
commit log entry for it, the moment a restarted query must neither send the batch again nor skip it.

The child (``python -m spark_kpl_bench.reliability.streaming_driver SOURCE CHECKPOINT STREAM OPTIONS_JSON``) runs
the query in local mode over the parquet files in SOURCE, one file per micro-batch, and prints its
driver JVM's pid. :func:`kill_between_sink_and_spark_commit` watches the sink's committed-batch markers
under the checkpoint with inotify, stops the JVM the instant one appears, and kills it if Spark has not
logged that batch yet (otherwise it lets it run on to the next batch).
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from spark_kpl_testing.env import apply_loopback_env, loopback_env, python_path
from spark_kpl_testing.processes import live_children, log_tail

__all__ = ["kill_between_sink_and_spark_commit", "start_query"]

#: Where the sink keeps its committed-batch markers under a query's checkpoint (KplWrite.java).
_SINK_MARKERS = "kpl-sink"
_IN_MOVED_TO = 0x80  # a file renamed into the watched folder: how both commit logs make an entry visible
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name


def _spark_logged(checkpoint: Path, batch: int) -> bool:
    return (checkpoint / "commits" / str(batch)).exists()


class _RenamesInto:
    """Names renamed into ``folder``, as the kernel reports them (inotify): no polling interval to miss
    a window of milliseconds."""

    def __init__(self, folder: Path) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_CLOEXEC)
        if self._fd < 0 or self._libc.inotify_add_watch(self._fd, str(folder).encode(), _IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), f"inotify on {folder}")

    def next_names(self, timeout: float) -> List[str]:
        if not select.select([self._fd], [], [], timeout)[0]:
            return []
        buffer, names, offset = os.read(self._fd, 65536), [], 0
        while offset < len(buffer):
            _, _, _, length = _EVENT.unpack_from(buffer, offset)
            start = offset + _EVENT.size
            names.append(buffer[start:start + length].rstrip(b"\0").decode())
            offset = start + length
        return names

    def close(self) -> None:
        os.close(self._fd)


def _kill(pids: List[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_between_sink_and_spark_commit(source: Path, checkpoint: Path, stream: str, options: Dict[str, str],
                                       log: Path, first_batch: int = 1, timeout: float = 180.0) -> int:
    """Runs the query in a child driver and kills it (JVM, its KPL daemons, then the Python process,
    each by pid) once the sink has committed a batch from ``first_batch`` on that Spark has not logged
    yet. Returns that batch's id. The child's output goes to ``log``."""
    markers = checkpoint / _SINK_MARKERS
    markers.mkdir(parents=True)  # watched before the query starts, so no commit goes unseen
    renames = _RenamesInto(markers)
    with open(log, "wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", __name__, str(source), str(checkpoint), stream, json.dumps(options)],
            env={**loopback_env(), "PYTHONPATH": python_path()},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=out, start_new_session=True)
    try:
        assert child.stdout is not None
        started = child.stdout.readline().split()
        if not started:
            raise AssertionError(f"the query's driver did not start:\n{log_tail(log)}")
        jvm = int(started[-1])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and child.poll() is None:
            for name in renames.next_names(0.5):
                if not name.isdigit() or int(name) < first_batch:
                    continue
                os.kill(jvm, signal.SIGSTOP)  # frozen while we look: Spark cannot log the batch meanwhile
                if _spark_logged(checkpoint, int(name)):
                    os.kill(jvm, signal.SIGCONT)
                    continue
                _kill([jvm, *live_children(jvm, "kinesis_producer")])
                return int(name)
        raise AssertionError(f"the query ended, or {timeout:.0f} s passed, before the driver could be killed "
                             f"between the sink's and Spark's commit of a batch:\n{log_tail(log)}")
    finally:
        renames.close()
        if child.poll() is None:
            child.kill()
        child.wait(30)


def start_query(spark: Any, source: Path, checkpoint: Path, stream: str, options: Dict[str, str]) -> Any:
    """The query: the parquet files in ``source``, one per micro-batch, to ``stream`` until caught up."""
    schema = spark.read.parquet(str(source)).schema
    return (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(source))
            .writeStream.format("kpl").option("checkpointLocation", str(checkpoint)).option("streamName", stream)
            .options(**options).trigger(availableNow=True).start())


def _run_in_this_driver(source: Path, checkpoint: Path, stream: str, options: Dict[str, str]) -> None:
    from spark_kpl_testing.session import spark_session

    spark = spark_session("spark-kpl-streaming-driver")
    jvm: Any = spark.sparkContext._jvm
    print(f"jvm {jvm.java.lang.ProcessHandle.current().pid()}", flush=True)
    start_query(spark, source, checkpoint, stream, options).awaitTermination()


if __name__ == "__main__":
    apply_loopback_env()
    _run_in_this_driver(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]))
