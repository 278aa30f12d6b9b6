"""The Python face of the ``kpl`` sink: column expressions in, a result with the write's figures out."""

from __future__ import annotations

import uuid
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from spark_kpl._facts import DATA_SOURCE, METRICS, OPTIONS, REPORT_OPTION, REPORTS, RESULT_KEY_OPTION, SINK_COLUMNS
from spark_kpl.errors import WriteRefused, translated_errors
from spark_kpl.progress import progress_line

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import Column, DataFrame, Row, SparkSession

ColumnLike = Union[str, "Column"]

#: The sink's column for each column argument of :func:`write`.
_SINK_COLUMNS = dict(data=SINK_COLUMNS["DATA"], partition_key=SINK_COLUMNS["PARTITION_KEY"],
                     explicit_hash_key=SINK_COLUMNS["EXPLICIT_HASH_KEY"], target_stream=SINK_COLUMNS["STREAM_NAME"],
                     target_stream_arn=SINK_COLUMNS["STREAM_ARN"])
_STREAM, _FORMAT = OPTIONS["STREAM_NAME"], OPTIONS["FORMAT"]
#: The format whose record is the data column; the others serialize every column of the row.
_RAW = _FORMAT.choices["RAW"]


@dataclass(frozen=True)
class WriteResult:
    """What one write did, added up over its tasks on the driver.

    ``records_added`` counts the records handed to the KPL (acknowledged, failed or, while the write runs,
    awaiting Kinesis's answer); ``records_failed`` counts records not delivered (only non-zero with
    ``failOnError=False``: otherwise the first one fails the write); ``records_skipped`` rows with null
    data skipped under ``nullData="skip"``; ``records_replayed`` rows of a streaming micro-batch already delivered
    before a restart, not sent again; ``records_resent`` records sent again because Kinesis
    stored their aggregate in a shard it was not built for (a reshard mid-write), where a consumer
    that checks hash ranges (the KCL) drops it, or refused them for their shard's throughput in every
    attempt until ``RecordTtl`` (never stored, so no copy); ``records_unaggregated`` rows sent one per Kinesis record
    because their stream places records itself (record distribution strategy ``AUTO``), where a consumer
    that checks hash ranges would drop an aggregate. ``kinesis_records_written`` counts the Kinesis
    records acknowledged (with the default aggregation, each an aggregate of many records), and
    ``kinesis_throttles`` the attempts Kinesis refused for its shard's throughput, which the KPL retried.

    ``peak_outstanding_*`` are the highest any executor's shared producer had outstanding
    (added, not yet acknowledged by Kinesis) while this write's tasks added records.
    """

    records_written: int
    records_added: int
    records_failed: int
    records_skipped: int
    records_replayed: int
    records_resent: int
    records_unaggregated: int
    bytes_written: int
    kinesis_records_written: int
    kinesis_throttles: int
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
            raise WriteRefused(f"{argument} must name a column or be a Column expression, got ''")
        return F.col(value)
    if isinstance(value, Column):
        return value
    raise TypeError(f"{argument} must be a column name (str) or a Column, got {type(value).__name__}")


def _own_column(df: "DataFrame", sink_column: str) -> Optional[str]:
    """df's column that the sink would take as ``sink_column`` (names match in any case), or None."""
    return next((name for name in df.columns if name.lower() == sink_column.lower()), None)


def _option_value(name: str, value: Any) -> str:
    """Stringify as Spark's own DataFrameWriter does: booleans lower-cased."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise TypeError(f"option {name} must be a str, int, float or bool, got {type(value).__name__}")


def _java_options(options: Mapping[str, Any]) -> Dict[str, str]:
    return {name: _option_value(name, value) for name, value in options.items() if value is not None}


#: The sink's internal option giving a write the result key its writeResult report is read by.
_RESULT_KEY_OPTION = OPTIONS["RESULT_KEY"].name


def _report(spark: "SparkSession", report: str, options: Mapping[str, str]) -> List["Row"]:
    """One of the sink's reports (by its key in ``REPORTS``), read through the data source itself: the
    same call on a classic session and on Spark Connect, where Python cannot reach the JVM."""
    return (spark.read.format(DATA_SOURCE).option(REPORT_OPTION, REPORTS[report].name).options(**options).load()
            .collect())


def write(
    df: "DataFrame",
    stream: Optional[str],
    *,
    data: Optional[ColumnLike] = None,
    partition_key: Optional[ColumnLike] = None,
    explicit_hash_key: Optional[ColumnLike] = None,
    target_stream: Optional[ColumnLike] = None,
    target_stream_arn: Optional[ColumnLike] = None,
    **options: Any,
) -> WriteResult:
    """Write ``df`` to the Kinesis stream ``stream`` through the KPL, and wait for every record.

    ``stream`` may be None when ``target_stream`` (by name) or ``target_stream_arn`` (by ARN) names each
    row's stream, the ``streamArn`` option names the stream, or the session sets the
    ``spark.kpl.streamName`` config key.

    Each column argument takes a column name or a ``Column`` expression; ``data`` defaults to the
    column ``data``, and ``partition_key`` to ``df``'s ``partitionKey`` column if it has one (in any
    case, as the sink matches its columns), else keys follow the ``partitioner`` option. With
    ``format="json"`` or ``"avro"`` there is no ``data`` argument: every column of ``df`` is serialized
    into the record (a key given by column name stays in it too). Options are the sink's
    (``failOnError``, ``partitioner``, ``recordId``, ...; see docs/api.md) and the KPL's own properties
    (``Region``, ``RecordMaxBufferedTime``, ...), in any case; they win over
    ``spark.kpl.*`` config keys. With ``recordId="prefix"``, ``writeName="<your name for this
    logical write>"`` gives the rows the same record ids on every run of the write, so that
    :mod:`spark_kpl.dedup` drops what a run sends again (see docs/api.md for when ids are stable).

    ``progress`` keeps one line on stderr up to date while the write runs: records acknowledged, the rate,
    tasks done and the task time spent waiting on Kinesis (backpressure), as the Spark UI's SQL tab shows
    them, which Spark refreshes with each executor heartbeat and task end. By default it shows when stderr is
    a terminal or the session is IPython or Jupyter; ``True`` or ``False`` forces it (not on Spark Connect).

    Returns once every task has committed, that is once Kinesis acknowledged every record. Raises
    :class:`spark_kpl.RecordsNotDelivered` when a record finally failed (with ``failOnError``, the
    default), :class:`spark_kpl.WriteRefused` (a ``ValueError``) when the sink refuses an argument,
    option, key, column or the credentials before any task starts, and :class:`spark_kpl.ProducerFailed`
    when a task failed otherwise (the KPL producer or the sink in it). Spark's error is the
    ``__cause__``. A failure of ``df``'s own computation (a UDF, a source) stays Spark's exception.
    Works the same on a classic session and on Spark Connect.

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
        raise WriteRefused(f"stream must be a non-empty stream name or None, got {stream!r}")
    # A keyword of options' own, so that callers passing a dict of string options keep type-checking.
    progress = options.pop("progress", None)
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None (shown when a person watches), got {progress!r}")
    java_options = _java_options(options)
    if stream is not None:
        java_options[_STREAM.name] = stream
    spark = df.sparkSession
    java_options[_RESULT_KEY_OPTION] = str(uuid.uuid4())
    # The write's own resolution, spark.kpl.* keys included, kept by the JVM for the write under its
    # result key; a bad option fails here already.
    settings = _resolve(spark, java_options)
    if target_stream is None and target_stream_arn is None and _STREAM.config_key not in settings:
        raise WriteRefused("give a stream, or target_stream (or target_stream_arn) naming each row's stream, or "
                           f"set the {_STREAM.config_key} config key")
    serializes_row = settings[_FORMAT.config_key] != _RAW
    if serializes_row and data is not None:
        raise WriteRefused(f"data is for {_FORMAT.name}='{_RAW}': with {_FORMAT.name} "
                           f"{settings[_FORMAT.config_key]} every column of df is the record")
    arguments = dict(partition_key=partition_key, explicit_hash_key=explicit_hash_key, target_stream=target_stream,
                     target_stream_arn=target_stream_arn)
    if not serializes_row:
        arguments.update(data=SINK_COLUMNS["DATA"] if data is None else data)
        # Only the arguments' columns are selected: df's own key column would be dropped without a word.
        if partition_key is None:
            arguments.update(partition_key=_own_column(df, SINK_COLUMNS["PARTITION_KEY"]))
    columns = [
        _to_column(value, argument).alias(_SINK_COLUMNS[argument])
        for argument, value in arguments.items()
        if value is not None
    ]
    if serializes_row:
        taken = {_SINK_COLUMNS[a].lower() for a, v in arguments.items() if v is not None}
        clashes = [name for name in df.columns if name.lower() in taken]
        if clashes:
            raise WriteRefused(f"df already has the column(s) {clashes}, which the key arguments would add again: "
                             "rename them, or drop the argument and let the column be the key")
        columns = [df[name] for name in df.columns] + columns
    line = progress_line(spark, java_options[_RESULT_KEY_OPTION], progress)
    with translated_errors(), line or nullcontext():
        df.select(*columns).write.format(DATA_SOURCE).options(**java_options).mode("append").save()
    (figures,) = _report(spark, "WRITE_RESULT", {RESULT_KEY_OPTION: java_options[_RESULT_KEY_OPTION]})
    # Every metric the JVM reports, so that one WriteResult lacks fails here instead of vanishing.
    result = WriteResult(**{name: int(figures[name]) for name in METRICS})
    if line is not None:
        line.finished(result)
    return result


Serializer = Callable[[Any], Union[bytes, bytearray, str]]


def _to_record_rows(serializer: Optional[Serializer], partition_key: Optional[Callable[[Any], str]]):
    """The RDD partition function making (data,) or (data, partitionKey) rows; errors name the record.

    Everything it uses is nested here, so that it pickles by value: executors need no spark_kpl.
    """

    def pass_through(item: Any) -> Union[bytes, bytearray, str]:
        if isinstance(item, (bytes, bytearray, str)):
            return item
        raise TypeError(f"is a {type(item).__name__}; without a serializer only bytes and str pass through: "
                        "give serializer=, e.g. lambda o: json.dumps(o).encode()")

    serialize = serializer or pass_through

    def rows(partition: int, items: Iterable[Any]) -> Iterator[Tuple[Any, ...]]:
        for position, item in enumerate(items):
            where = f"record {position} of RDD partition {partition}"
            try:
                data = serialize(item)
                key = partition_key(item) if partition_key is not None else None
            except Exception as error:
                raise ValueError(f"{where}: {error}") from error
            if isinstance(data, str):
                data = data.encode("utf-8")
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"{where}: the serializer returned {type(data).__name__}, not bytes or str")
            if partition_key is not None and not isinstance(key, str):
                raise TypeError(f"{where}: partition_key returned {type(key).__name__}, not str")
            yield (bytes(data), key) if partition_key is not None else (bytes(data),)

    return rows


def write_rdd(
    rdd: "RDD",
    stream: str,
    *,
    serializer: Optional[Serializer] = None,
    partition_key: Optional[Callable[[Any], str]] = None,
    **options: Any,
) -> WriteResult:
    """Write an RDD of Python objects to ``stream``: each object becomes one record.

    ``serializer`` turns an object into bytes (or str, sent as UTF-8); without it, bytes and str pass
    through and anything else is an error naming the record (its position in its RDD partition).
    ``partition_key`` turns an object into its partition key; without it, keys follow the
    ``partitioner`` option (random by default). Options as for :func:`write`.

    Examples
    --------
    >>> import json
    >>> events = spark.sparkContext.parallelize([{"user": "ann", "n": 1}, {"user": "bob", "n": 2}])  # doctest: +SKIP
    >>> spark_kpl.write_rdd(events, "clicks", serializer=lambda e: json.dumps(e).encode(),  # doctest: +SKIP
    ...                     partition_key=lambda e: e["user"], Region="eu-west-1").records_written
    2
    """
    from pyspark import RDD

    if not isinstance(rdd, RDD):
        raise TypeError(f"rdd must be a pyspark RDD, got {type(rdd).__name__}")
    for name, function in (("serializer", serializer), ("partition_key", partition_key)):
        if function is not None and not callable(function):
            raise TypeError(f"{name} must be a callable taking one object, got {type(function).__name__}")
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    rows = rdd.mapPartitionsWithIndex(_to_record_rows(serializer, partition_key))
    data_column, key_column = SINK_COLUMNS["DATA"], SINK_COLUMNS["PARTITION_KEY"]
    if partition_key is None:
        return write(spark.createDataFrame(rows, f"{data_column} binary"), stream, **options)
    frame = spark.createDataFrame(rows, f"{data_column} binary, {key_column} string")
    return write(frame, stream, partition_key=key_column, **options)


def _per_producer(spark: "SparkSession", report: str) -> List[Dict[str, Any]]:
    """A per-producer report's (producer, setting, value) rows as one dict of settings per producer."""
    producer, setting, value = REPORTS[report].columns
    producers: Dict[int, Dict[str, Any]] = {}
    for row in _report(spark, report, {}):
        producers.setdefault(row[producer], {})[row[setting]] = row[value]
    return [producers[number] for number in sorted(producers)]


def producer_stats(spark: "SparkSession") -> List[Dict[str, int]]:
    """Live figures of the driver JVM's producers (in local mode, those the tasks use)."""
    return _per_producer(spark, "PRODUCER_STATS")


def write_settings(spark: "SparkSession", **options: Any) -> Dict[str, str]:
    """What a write with these options would run with, by ``spark.kpl.*`` key: every sink option
    (given or default) and every KPL property given, resolved against the session's ``spark.kpl.*``
    keys exactly as a write resolves them. Secrets show as ``***``. A bad option or key raises the
    :class:`spark_kpl.WriteRefused` the write would, naming it; nothing is contacted."""
    return _resolve(spark, _java_options(options))


def _resolve(spark: "SparkSession", java_options: Dict[str, str]) -> Dict[str, str]:
    setting, value = REPORTS["WRITE_SETTINGS"].columns
    with translated_errors():
        return {row[setting]: row[value] for row in _report(spark, "WRITE_SETTINGS", java_options)}


def producer_settings(spark: "SparkSession") -> List[Dict[str, str]]:
    """What each live producer of the driver JVM (in local mode, those the tasks use) runs with,
    by ``spark.kpl.*`` key: the sink options that shape it and every KPL property as handed to the
    KPL, defaults and the sink's own settings included. Secrets show as ``***``."""
    return _per_producer(spark, "PRODUCER_SETTINGS")
