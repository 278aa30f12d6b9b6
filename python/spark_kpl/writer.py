"""The Python face of the ``kpl`` sink: column expressions in, a result with the write's figures out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Union

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

ColumnLike = Union[str, "Column"]

#: The sink's column for each column argument of :func:`write`.
_SINK_COLUMNS = {
    "data": "data",
    "partition_key": "partitionKey",
    "explicit_hash_key": "explicitHashKey",
    "target_stream": "streamName",
}


@dataclass(frozen=True)
class WriteResult:
    """What one write did, added up over its tasks on the driver.

    ``records_failed`` counts records not delivered (only non-zero with ``failOnError=False``:
    otherwise the first one fails the write); ``records_skipped`` rows with null data skipped under
    ``nullData="skip"``.

    ``peak_outstanding_*`` are the highest any executor's shared producer had outstanding
    (added, not yet acknowledged by Kinesis) while this write's tasks added records.
    """

    records_written: int
    records_failed: int
    records_skipped: int
    bytes_written: int
    backpressure_cycles: int
    blocked_ms: int
    peak_outstanding_records: int
    peak_outstanding_bytes: int
    tasks: int


def _to_column(value: ColumnLike, argument: str) -> "Column":
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(value, str):
        if not value:
            raise ValueError(f"{argument} must name a column or be a Column expression, got ''")
        return F.col(value)
    if isinstance(value, Column):
        return value
    raise TypeError(f"{argument} must be a column name (str) or a Column, got {type(value).__name__}")


def _option_value(name: str, value: Any) -> str:
    """Stringify as Spark's own DataFrameWriter does: booleans lower-cased."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise TypeError(f"option {name} must be a str, int, float or bool, got {type(value).__name__}")


def write(
    df: "DataFrame",
    stream: Optional[str],
    *,
    data: ColumnLike = "data",
    partition_key: Optional[ColumnLike] = None,
    explicit_hash_key: Optional[ColumnLike] = None,
    target_stream: Optional[ColumnLike] = None,
    **options: Any,
) -> WriteResult:
    """Write ``df`` to the Kinesis stream ``stream`` through the KPL, and wait for every record.

    Each column argument takes a column name or a ``Column`` expression. Options are the sink's
    (``queueLimit``, ``queueLimitBytes``, ...) and the KPL's own properties (``Region``,
    ``RecordMaxBufferedTime``, ...), in any case; they win over ``spark.kpl.*`` config keys.

    Returns once every task has committed, that is once Kinesis acknowledged every record; raises if
    any record finally failed.

    Examples
    --------
    >>> from pyspark.sql import functions as F
    >>> result = spark_kpl.write(  # doctest: +SKIP
    ...     events, "clicks", data=F.to_json(F.struct("*")), partition_key="user_id",
    ...     Region="eu-west-1")
    >>> result.records_written  # doctest: +SKIP
    100000
    """
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        raise TypeError(f"df must be a pyspark.sql.DataFrame, got {type(df).__name__}")
    if stream is not None and (not isinstance(stream, str) or not stream):
        raise ValueError(f"stream must be a non-empty stream name or None, got {stream!r}")
    if stream is None and target_stream is None:
        raise ValueError("give a stream, or target_stream naming each row's stream (or both)")
    arguments = {"data": data, "partition_key": partition_key,
                 "explicit_hash_key": explicit_hash_key, "target_stream": target_stream}
    columns = [
        _to_column(value, argument).alias(_SINK_COLUMNS[argument])
        for argument, value in arguments.items()
        if value is not None
    ]
    java_options: Dict[str, str] = {
        name: _option_value(name, value) for name, value in options.items() if value is not None
    }
    if stream is not None:
        java_options["streamName"] = stream
    shaped = df.select(*columns)
    jvm = df.sparkSession.sparkContext._jvm
    summary: Mapping[str, Any] = jvm.sparkkpl.spark.PythonApi.write(shaped._jdf, java_options)
    return WriteResult(**{name: int(summary[name]) for name in WriteResult.__dataclass_fields__})


def producer_stats(spark: "SparkSession") -> list:
    """Live figures of the driver JVM's producers (in local mode, those the tasks use)."""
    stats = spark.sparkContext._jvm.sparkkpl.spark.PythonApi.producerStats()
    return [{key: int(value) for key, value in entry.items()} for entry in stats]
