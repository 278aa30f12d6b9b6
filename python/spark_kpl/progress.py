"""One updating line on stderr while :func:`spark_kpl.write` runs: records acknowledged of those handed to the
KPL, rate, tasks done and backpressure, read from the figures the Spark UI's SQL tab shows for the write (Spark's
status store). Spark updates them from running tasks with each executor heartbeat
(``spark.executor.heartbeatInterval``, 10 s by default) and from each task as it ends."""

from __future__ import annotations

import sys
import threading
import time
import warnings
from typing import TYPE_CHECKING, Any, Dict, Optional, TextIO, Tuple

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_kpl.writer import WriteResult

#: Seconds between two readings of the figures: the line moves, at no cost the write could notice.
POLL_SECONDS = 1.5


def interactive(stream: TextIO) -> bool:
    """A person is watching: ``stream`` is a terminal, or the session is IPython or Jupyter."""
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):
        pass
    ipython = sys.modules.get("IPython")
    return ipython is not None and getattr(ipython, "get_ipython", lambda: None)() is not None


def _classic(spark: "SparkSession") -> bool:
    """Spark Connect sessions cannot reach the driver JVM, where the figures are."""
    return getattr(spark, "_jsparkSession", None) is not None


class LiveFigures:
    """The write node's figures of one write's SQL execution, as the SQL tab shows them while it runs."""

    def __init__(self, spark: "SparkSession", result_key: str) -> None:
        self._spark = spark
        self._result_key = result_key
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        self._jvm = jvm
        self._keys = dict(jvm.sparkkpl.metrics.SparkUiMetrics.keysBySparkType())
        self._keys_by_accumulator: Dict[int, str] = {}

    def read(self) -> Optional[Tuple["WriteResult", int, int]]:
        """The figures so far (0 until Spark has any), tasks done and tasks in all; None until the write is planned."""
        from spark_kpl.writer import WriteResult  # which imports this module

        execution_id = self._jvm.sparkkpl.metrics.RunningWrites.executionOf(self._result_key)
        if execution_id < 0:
            return None
        store = self._spark._jsparkSession.sharedState().statusStore()  # type: ignore[attr-defined]
        execution = store.execution(execution_id)
        if execution.isEmpty():
            return None
        execution = execution.get()
        if not self._keys_by_accumulator:
            metrics = execution.metrics().iterator()
            while metrics.hasNext():
                metric = metrics.next()
                key = self._keys.get(metric.metricType())
                if key is not None:
                    self._keys_by_accumulator[metric.accumulatorId()] = key
        figures = dict.fromkeys(self._keys.values(), 0)
        values = store.executionMetrics(execution_id).iterator()
        while values.hasNext():
            value = values.next()
            key = self._keys_by_accumulator.get(value._1())
            if key is not None:
                figures[key] = int(value._2())
        done = total = 0
        tracker = self._spark.sparkContext.statusTracker()
        stages = execution.stages().iterator()
        while stages.hasNext():
            stage = tracker.getStageInfo(stages.next())
            if stage is not None:
                done += stage.numCompletedTasks
                total += stage.numTasks
        return WriteResult(**figures), done, total

    def forget(self) -> None:
        self._jvm.sparkkpl.metrics.RunningWrites.forget(self._result_key)


class ProgressLine:
    """Polls a write's :class:`LiveFigures` on a daemon thread and keeps one line on ``stream`` up to date
    (redrawn in place on a terminal or notebook, one line per change otherwise); a last line once it ends."""

    def __init__(self, figures: LiveFigures, stream: TextIO, in_place: bool) -> None:
        self._figures = figures
        self._stream = stream
        self._in_place = in_place
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._acknowledged = 0
        self._shown = ""
        self._thread = threading.Thread(target=self._poll, name="spark-kpl-progress", daemon=True)

    def __enter__(self) -> "ProgressLine":
        self._thread.start()
        return self

    def __exit__(self, failure: Optional[type], *rest: Any) -> None:
        self._stop.set()
        self._thread.join()
        self._figures.forget()
        if failure is not None:
            self._failed()

    def _poll(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                reading = self._figures.read()
            except Exception:  # noqa: BLE001 - a display must never fail the write; the next tick tries again
                continue
            if reading is not None:
                self._show(*reading)

    def _show(self, figures: "WriteResult", done: int, total: int) -> None:
        elapsed = time.monotonic() - self._started
        self._acknowledged = figures.records_written
        line = (f"kpl write: {figures.records_written:,} of {figures.records_added:,} records acknowledged, "
                f"{figures.records_written / elapsed:,.0f}/s, tasks {done}/{total}, "
                f"{figures.blocked_ms / 1000:,.1f} s of task time waiting on Kinesis ({elapsed:,.0f} s)")
        if line != self._shown:
            self._shown = line
            self._write(line)

    def _write(self, line: str, last: bool = False) -> None:
        if self._in_place:
            self._stream.write("\r\033[K" + line + ("\n" if last else ""))
        else:
            self._stream.write(line + "\n")
        self._stream.flush()

    def finished(self, result: "WriteResult") -> None:
        elapsed = time.monotonic() - self._started
        self._write(f"kpl write: done, {result.records_written:,} records acknowledged in {elapsed:,.1f} s "
                    f"({result.records_written / elapsed:,.0f}/s), {result.blocked_ms / 1000:,.1f} s of task time "
                    f"waiting on Kinesis", last=True)

    def _failed(self) -> None:
        elapsed = time.monotonic() - self._started
        self._write(f"kpl write: failed after {elapsed:,.1f} s, {self._acknowledged:,} records acknowledged by "
                    f"then", last=True)


def progress_line(spark: "SparkSession", result_key: str, wanted: Optional[bool]) -> Optional[ProgressLine]:
    """The write's progress line, or None: ``wanted`` None shows it when a person is watching stderr."""
    stream = sys.stderr
    shown = interactive(stream)
    if wanted is False or (wanted is None and not shown):
        return None
    if not _classic(spark):
        if wanted:
            warnings.warn("spark_kpl.write: progress=True shows nothing on Spark Connect, where the write's "
                          "figures stay in the server's Spark UI", stacklevel=3)
        return None
    return ProgressLine(LiveFigures(spark, result_key), stream, in_place=shown)
