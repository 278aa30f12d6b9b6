"""The exceptions the sink's failures become in Python, in PySpark's hierarchy, wherever the write ran:
:func:`spark_kpl.write`, ``df.write.format("kpl").save()`` inside :func:`translated_errors` (or anywhere
after :func:`install`), and a streaming query's failure through :func:`sink_error` (or raised by the
query after :func:`install`); on a classic session and on Spark Connect.

Each is a ``pyspark.errors.PySparkException``. Raised in place of a Spark error, it is an instance of that
error's class as well (``Py4JJavaError``, a captured or a Spark Connect exception), so that an ``except``
clause written for Spark's error still catches it; Spark's error is its ``__cause__``.

The sink fails a task with its own JVM exception classes (``ERROR_CLASSES``), and ends their messages with a
tag, ``[spark-kpl <Kind> <JSON object>]`` (``sparkkpl.util.ErrorTag``) carrying the exception's fields. On a
classic session Python walks the JVM error's causes through Py4J and picks the sink's by class name. Through
Spark Connect only the job's own error class reaches the client (``SparkException`` for a failed task), with
the task's exception as text, so the tag decides there.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Type, cast

from pyspark.errors import AnalysisException, IllegalArgumentException, PySparkException

from spark_kpl._facts import (
    DATA_SOURCE,
    ERROR_CLASSES,
    ERROR_TAG_FIELDS,
    ERROR_TAG_OPENING,
    UNDELIVERED_BY_COLUMN,
    UNDELIVERED_BY_KINESIS,
)

__all__ = ["ProducerFailed", "RecordsNotDelivered", "SinkNotOnSession", "SparkKplError", "StreamRecreated",
           "WriteRefused", "install", "sink_error", "translated_errors", "uninstall"]

_TAG = re.compile(re.escape(ERROR_TAG_OPENING) + r"(\w+) ")
#: A ``{field}`` place in the JVM's sentence.
_PLACE = re.compile(r"\{(\w+)\}")
#: Where PySpark's message of a JVM error ends and the stack trace it may append begins.
_JVM_STACKTRACE = "\n\nJVM stacktrace:"
#: Where PySpark keeps an exception's message: ``_message`` from 4.0, ``message`` in 3.5. A joined error keeps ours.
_PYSPARK_MESSAGE = ("_message", "message")
#: More causes than any real chain has: a guard against a cause that is its own.
_MAX_CAUSES = 64


class SparkKplError(PySparkException):
    """Base of every exception the sink raises through :mod:`spark_kpl`; ``__cause__`` holds Spark's."""

    def __init__(self, message: str):
        super().__init__(message=message)
        # PySpark keeps the message as ``_message`` from 4.0 and as ``message`` in 3.5: ours has a name of its own.
        self._sink_message = message

    def __str__(self) -> str:
        # Ours, also when the instance is Spark's error's class as well (whose __str__ would speak for it).
        return self._sink_message


class WriteRefused(SparkKplError, IllegalArgumentException, ValueError):
    """The sink refused the write before any task started: an argument, an option, a ``spark.kpl.*``
    key, a column (one that does not resolve included), a session setting or the credentials are
    wrong. The message names it and says what it expects. A ``ValueError``, and PySpark's
    ``IllegalArgumentException``, which the JVM's refusal is."""


class SinkNotOnSession(SparkKplError, RuntimeError):
    """:func:`spark_kpl.configure` cannot give this session the sink's jar: the session is already running
    without it, or it is a Spark Connect client (the jar belongs on the server). The message says where
    to put the jar instead. A ``RuntimeError``."""


class RecordsNotDelivered(SparkKplError):
    """A record was not delivered and ``failOnError`` (true by default) failed the write.

    Either Kinesis finally failed it (``column`` is None; ``error_code`` is Kinesis's, e.g.
    ``Expired`` after ``RecordTtl``, with earlier attempts' errors in ``error_message``), or its row
    could not become a record (``column`` names the column at fault; ``error_code`` is the sink's,
    e.g. ``InvalidPartitionKey``). ``row`` is the row's 1-based position in Spark partition
    ``spark_partition``. Rows the task accepted before it were sent; with ``failOnError=False`` the
    write would have counted this record in ``records_failed`` and carried on.
    """

    def __init__(self, stream: Optional[str], partition_key: Optional[str], explicit_hash_key: Optional[str],
                 spark_partition: int, row: int, column: Optional[str], error_code: str, error_message: str):
        self.stream = stream
        self.partition_key = partition_key
        self.explicit_hash_key = explicit_hash_key
        self.spark_partition = spark_partition
        self.row = row
        self.column = column
        self.error_code = error_code
        self.error_message = error_message
        # The JVM's own sentence (sparkkpl.failures.FailedRecords.describe), filled as it fills it.
        super().__init__(_PLACE.sub(lambda place: _as_java_prints(getattr(self, _parameter(place.group(1)))),
                                    UNDELIVERED_BY_KINESIS if column is None else UNDELIVERED_BY_COLUMN))


class ProducerFailed(SparkKplError):
    """A task of the write failed for another reason than Kinesis refusing a record, so at least
    ``records_in_doubt`` of its ``records_added`` records may or may not have reached Kinesis: the KPL
    producer itself failed (its native daemon died, or it lost records; ``reason`` is None), or the
    sink failed in the task (the daemon could not be placed, no region or credentials on the executor,
    a timeout; ``reason`` is the JVM's message).

    Not :class:`RecordsNotDelivered`: nobody refused those records, and ``failOnError=False`` does not
    cover them. Spark retried the task and it failed each time; running the write again may
    duplicate records (with ``recordId="prefix"``, :mod:`spark_kpl.dedup` drops them).
    """

    def __init__(self, records_in_doubt: int, records_added: int, reason: Optional[str] = None):
        self.records_in_doubt = records_in_doubt
        self.records_added = records_added
        self.reason = reason
        doubt = (f"{records_in_doubt} of its {records_added} records added to the KPL had no answer from Kinesis: "
                 "they may or may not be in the stream. The JVM's error is this exception's __cause__")
        if reason is None:
            super().__init__(f"The KPL producer failed a task's records before Kinesis answered for them; {doubt}")
        else:
            super().__init__(f"A task of the write failed: {reason}. {doubt}")


class StreamRecreated(SparkKplError):
    """``stream`` was deleted and created again under its name while the write ran. Kinesis reported
    every record as written, but aggregates built for the old stream's shards may sit in the new
    stream's shards of the same id, where a KCL consumer drops the records outside the shard's range.
    Run the write again: under the same ``writeName`` its records keep their ids, so a consumer can
    drop the duplicates (:mod:`spark_kpl.dedup`); a streaming query runs the micro-batch again when
    restarted from its checkpoint.
    """

    def __init__(self, stream: str):
        self.stream = stream
        super().__init__(f"Stream '{stream}' was deleted and created again while the write ran: aggregated records "
                         f"may be invisible to KCL consumers; run the write again (see {type(self).__name__})")


#: The exceptions a JVM error tag stands for, by its kind: the exception's name. Each takes the tag's
#: fields (``ERROR_TAG_FIELDS``) in order, as parameters named by them in snake case.
_TAGGED: Dict[str, Type[SparkKplError]] = {
    exception.__name__: exception for exception in (RecordsNotDelivered, ProducerFailed, StreamRecreated)}
#: The kind of each JVM exception class the sink fails a task with.
_KIND_OF_CLASS: Dict[str, str] = {jvm_class: kind for kind, classes in ERROR_CLASSES.items() for jvm_class in classes}


def sink_error(error: BaseException) -> Optional[SparkKplError]:
    """The :mod:`spark_kpl` exception a Spark error from a write stands for, its ``__cause__`` that error;
    None for any other error.

    For a streaming query writing with ``format("kpl")``: ``query.exception()``, or the
    ``StreamingQueryException`` that ``query.awaitTermination()`` raises, on a classic session and on
    Spark Connect::

        try:
            query.awaitTermination()
        except StreamingQueryException as error:
            raise spark_kpl.errors.sink_error(error) or error

    Raised in place of Spark's error, the exception is an instance of Spark's error's class as well.
    Given one of :mod:`spark_kpl`'s exceptions, returns it.
    """
    if isinstance(error, SparkKplError):
        return error
    return _translated(error, refusals=True)


def _translated(error: BaseException, refusals: bool) -> Optional[SparkKplError]:
    """The sink's exception ``error`` stands for, a new one (None for an error already the sink's). With
    ``refusals``, a Spark ``IllegalArgumentException`` or ``AnalysisException`` counts as the write refused:
    only where the call was a write of the sink's."""
    if isinstance(error, SparkKplError):
        return None
    ours = _jvm_classes_say(error) or _first_tag(str(error)) or (_refusal(error) if refusals else None)
    if ours is None:
        return None
    ours = _also_sparks(ours, error)
    ours.__cause__ = error
    return ours


@contextlib.contextmanager
def translated_errors() -> Iterator[None]:
    """Raise the sink's failures in the block as :mod:`spark_kpl` exceptions (see :func:`sink_error`), for a
    ``df.write.format("kpl")...save()`` that does not go through :func:`spark_kpl.write`; any other error
    passes unchanged. Also a decorator (``@spark_kpl.errors.translated_errors()``).

    Inside the block, an ``IllegalArgumentException`` or ``AnalysisException`` counts as the write refused
    (:class:`WriteRefused`, which is still an instance of Spark's class): keep only the write in it.

    >>> with spark_kpl.errors.translated_errors():  # doctest: +SKIP
    ...     df.write.format("kpl").option("streamName", "clicks").mode("append").save()
    """
    try:
        yield
    except Exception as error:
        ours = _translated(error, refusals=True)
        if ours is None:
            raise
        raise ours from error


#: Where PySpark defines the classes :func:`install` wraps: a classic session's, then Spark Connect's
#: (which does not import without Connect's own dependencies).
_SESSION_PACKAGES = ("pyspark.sql", "pyspark.sql.connect")
#: The attribute :func:`install`'s ``format`` sets on a writer: whether it writes through the sink.
_WRITES_TO_SINK = "_spark_kpl_sink"
#: What :func:`install` replaced, to put back: each class's own method, by class and name.
_REPLACED: Dict[Tuple[type, str], Callable[..., Any]] = {}


def install() -> None:
    """From now on, in this process, raise the sink's failures as :mod:`spark_kpl` exceptions without
    :func:`translated_errors`: from ``df.write.format("kpl")``'s ``save()`` (and ``insertInto``,
    ``saveAsTable``), ``df.writeStream.format("kpl")``'s ``start()`` (and ``toTable``), and a streaming
    query's ``awaitTermination()`` and ``processAllAvailable()``; on classic sessions and on Spark Connect.
    Opt-in, as a program's first lines (``import spark_kpl.errors; spark_kpl.errors.install()``); calling it
    again does nothing.

    It wraps those methods of PySpark's writers and queries, not PySpark's error conversion: any other call
    raises what it did. A writer's ``IllegalArgumentException`` or ``AnalysisException`` counts as the write
    refused only when the writer's format is ``kpl``; any writer's or query's tagged failure of the sink
    (a table created ``USING kpl`` written with ``insertInto``) is the sink's exception.

    >>> spark_kpl.errors.install()  # doctest: +SKIP
    >>> df.write.format("kpl").option("streamName", "clicks").mode("append").save()  # doctest: +SKIP
    Traceback (most recent call last):
    spark_kpl.errors.RecordsNotDelivered: Row 3 of Spark partition 0: Kinesis finally failed the record ...
    """
    if _REPLACED:
        return
    for writer in _defined("readwriter", "DataFrameWriter") + _defined("streaming.readwriter", "DataStreamWriter"):
        # By the method itself: its name is also the sink option's, which only spark_kpl._facts spells.
        _replace(writer, cast(Any, writer).format.__name__, _noting_the_format)
        for method in ("save", "insertInto", "saveAsTable", "start", "toTable"):
            if method in writer.__dict__:
                _replace(writer, method, _translating(refusals_where_format_is_kpl=True))
    for query in _defined("streaming.query", "StreamingQuery"):
        for method in ("awaitTermination", "processAllAvailable"):
            _replace(query, method, _translating(refusals_where_format_is_kpl=False))


def uninstall() -> None:
    """Undo :func:`install`: PySpark's methods raise Spark's own errors again."""
    for (cls, name), original in _REPLACED.items():
        setattr(cls, name, original)
    _REPLACED.clear()


def _defined(module: str, name: str) -> List[type]:
    """The class ``name`` of PySpark's ``module`` for a classic session and, where it imports, for Spark Connect."""
    classes = []
    for package in _SESSION_PACKAGES:
        try:
            classes.append(getattr(importlib.import_module(f"{package}.{module}"), name))
        except ImportError:
            continue
    return classes


def _replace(cls: type, name: str, wrapper: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    original = cls.__dict__[name]
    _REPLACED[(cls, name)] = original
    setattr(cls, name, functools.wraps(original)(wrapper(original)))


def _noting_the_format(original: Callable[..., Any]) -> Callable[..., Any]:
    """A writer's ``format`` that also notes whether the writer writes through the sink (``save(format=...)``
    calls it as well)."""
    def noted_format(self: Any, source: str) -> Any:
        setattr(self, _WRITES_TO_SINK, isinstance(source, str) and source.lower() == DATA_SOURCE)
        return original(self, source)
    return noted_format


def _translating(refusals_where_format_is_kpl: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrapper(original: Callable[..., Any]) -> Callable[..., Any]:
        def translated(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return original(self, *args, **kwargs)
            except Exception as error:
                refusals = refusals_where_format_is_kpl and getattr(self, _WRITES_TO_SINK, False)
                ours = _translated(error, refusals)
                if ours is None:
                    raise
                raise ours from error
        return translated
    return wrapper


def _jvm_classes_say(error: BaseException) -> Optional[SparkKplError]:
    """On a classic session: the first of the JVM error's causes whose class is one the sink fails a task
    with, read from its own message's tag."""
    throwable = _jvm_throwable(error)
    for _ in range(_MAX_CAUSES):
        if throwable is None:
            return None
        kind = _KIND_OF_CLASS.get(throwable.getClass().getName())
        if kind is not None:
            return _first_tag(throwable.getMessage() or "", kind)
        throwable = throwable.getCause()
    return None


def _jvm_throwable(error: BaseException) -> Any:
    """The JVM's exception behind a classic session's error: a ``Py4JJavaError``'s, or the one PySpark
    captured (``CapturedException``: ``IllegalArgumentException``, ``StreamingQueryException`` ...);
    None through Spark Connect, whose errors hold text."""
    return getattr(error, "java_exception", None) or getattr(error, "_origin", None)


def _refusal(error: BaseException) -> Optional[SparkKplError]:
    """Raised on the driver before the job (a task's error reaches Python as the job's failure): the
    sink's refusals, and a column argument that does not resolve."""
    if isinstance(error, (IllegalArgumentException, AnalysisException)):
        return WriteRefused(str(error).split(_JVM_STACKTRACE)[0])
    # Any other error is not the sink's: every task failure of the sink is tagged, so this one is the
    # DataFrame's own computation failing (a UDF, a source), and stays Spark's.
    return None


def _parameter(field: str) -> str:
    """The Python name of a tag's field: ``partitionKey`` is ``partition_key``."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", field).lower()


def _as_java_prints(value: Any) -> str:
    return "null" if value is None else str(value)


def _from_tag(kind: str, fields: Dict[str, Any]) -> SparkKplError:
    return _TAGGED[kind](**{_parameter(field): fields[field] for field in ERROR_TAG_FIELDS[kind]})


def _first_tag(text: str, only: Optional[str] = None) -> Optional[SparkKplError]:
    """The exception the first whole tag in ``text`` stands for (of kind ``only``, if given)."""
    for match in _TAG.finditer(text):
        kind = match.group(1)
        if kind not in _TAGGED or only not in (None, kind):
            continue
        try:
            fields, _ = json.JSONDecoder().raw_decode(text, match.end())
            return _from_tag(kind, fields)
        except (ValueError, KeyError, TypeError):
            continue  # cut short (a message abbreviated on its way): look on
    return None


#: The classes made by :func:`_also_sparks`, by the pair they join.
_JOINED: Dict[Tuple[Type[SparkKplError], Type[BaseException]], Type[SparkKplError]] = {}


def _also_sparks(ours: SparkKplError, spark: BaseException) -> SparkKplError:
    """``ours`` as an instance of Spark's error's class as well (a class made once per pair, named as
    ours), holding Spark's error's attributes but its message, so that that class's methods
    (``java_exception``, ``getCondition()``...) answer as for Spark's error. ``ours`` itself when
    Spark's class adds nothing, or cannot be joined (a built-in class laid out otherwise)."""
    pair = (type(ours), type(spark))
    if pair not in _JOINED:
        try:
            _JOINED[pair] = pair[0] if issubclass(*pair) else type(
                pair[0].__name__, pair, {"__module__": pair[0].__module__, "__doc__": pair[0].__doc__})
        except TypeError:
            _JOINED[pair] = pair[0]
    joined_class = _JOINED[pair]
    if joined_class is pair[0]:
        return ours
    joined = joined_class.__new__(joined_class)
    joined.__dict__.update(ours.__dict__)
    joined.__dict__.update({name: value for name, value in spark.__dict__.items() if name not in _PYSPARK_MESSAGE})
    joined.args = ours.args
    return joined
