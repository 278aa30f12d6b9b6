"""The exceptions :func:`spark_kpl.write` raises when the sink fails, classic session or Spark Connect.

Through Spark Connect only a JVM exception's class name and message text reach Python, so the sink
ends the messages of its task failures with a tag, ``[spark-kpl <Kind> <JSON object>]``
(``sparkkpl.util.ErrorTag``), which :func:`translated` reads from the error's text.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Optional, Type

from spark_kpl._facts import ERROR_TAG_FIELDS, ERROR_TAG_OPENING, UNDELIVERED_BY_COLUMN, UNDELIVERED_BY_KINESIS

__all__ = ["ProducerFailed", "RecordsNotDelivered", "SparkKplError", "StreamRecreated", "WriteRefused"]

_TAG = re.compile(re.escape(ERROR_TAG_OPENING) + r"(\w+) ")
#: A ``{field}`` place in the JVM's sentence.
_PLACE = re.compile(r"\{(\w+)\}")
#: Where PySpark's message of a JVM error ends and the stack trace it may append begins.
_JVM_STACKTRACE = "\n\nJVM stacktrace:"


class SparkKplError(Exception):
    """Base of every exception the sink raises through :mod:`spark_kpl`; ``__cause__`` holds Spark's."""


class WriteRefused(SparkKplError, ValueError):
    """The sink refused the write before any task started: an argument, an option, a ``spark.kpl.*``
    key, a column (one that does not resolve included), a session setting or the credentials are
    wrong. The message names it and says what it expects."""


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


def _parameter(field: str) -> str:
    """The Python name of a tag's field: ``partitionKey`` is ``partition_key``."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", field).lower()


def _as_java_prints(value: Any) -> str:
    return "null" if value is None else str(value)


def _from_tag(kind: str, fields: Dict[str, Any]) -> SparkKplError:
    return _TAGGED[kind](**{_parameter(field): fields[field] for field in ERROR_TAG_FIELDS[kind]})


def _first_tag(text: str) -> Optional[SparkKplError]:
    for match in _TAG.finditer(text):
        kind = match.group(1)
        if kind not in _TAGGED:
            continue
        try:
            fields, _ = json.JSONDecoder().raw_decode(text, match.end())
            return _from_tag(kind, fields)
        except (ValueError, KeyError, TypeError):
            continue  # cut short (a message abbreviated on its way): look on
    return None


def translated(error: BaseException) -> Optional[SparkKplError]:
    """The :mod:`spark_kpl` exception a Spark error from a write stands for, or None for any other."""
    # Classic: the Py4J error's text holds the JVM stack trace, causes included; Connect: the job's
    # failure message quotes the task's exception.
    found = _first_tag(str(error))
    if found is not None:
        return found
    from pyspark.errors import AnalysisException, IllegalArgumentException

    # Raised on the driver before the job (a task's error reaches Python as the job's failure): the
    # sink's refusals, and a column argument that does not resolve.
    if isinstance(error, (IllegalArgumentException, AnalysisException)):
        return WriteRefused(str(error).split(_JVM_STACKTRACE)[0])
    # Any other error is not the sink's: every task failure of the sink is tagged, so this one is the
    # DataFrame's own computation failing (a UDF, a source), and stays Spark's.
    return None
