"""Read the record id that ``recordId="prefix"`` puts before each record's data, to drop duplicates.

At-least-once delivery means a retried Spark task sends its records again. With the option
``recordId="prefix"`` every record's data starts with a 40-byte header naming the record by where
it came from (the write, the micro-batch, the Spark partition, the row), and a retry sends the same
row under the same id. A consumer keeps the ids it has seen and drops a record whose id it knows.

Header layout (big-endian): ``b"SKR\\x01"`` magic, 16-byte write id (a UUID: the streaming query's
id, or a fresh one per batch write), 8-byte batch id (the micro-batch id; 0 for batch writes),
4-byte Spark partition id, 8-byte row number within the partition (from 1).

Examples
--------
>>> from spark_kpl import dedup
>>> seen = set()
>>> for record in records:  # doctest: +SKIP
...     rid = dedup.record_id(record.data)
...     if rid not in seen:
...         seen.add(rid)
...         handle(dedup.strip(record.data))
"""

from __future__ import annotations

import struct
import uuid
from typing import NamedTuple

MAGIC = b"SKR\x01"
HEADER_SIZE = 40
_LAYOUT = struct.Struct(">4s16sqiq")


class RecordId(NamedTuple):
    """Where a record came from; equal for every copy a retry sends. Hashable: keep them in a set."""

    write_id: uuid.UUID
    batch_id: int
    partition: int
    row: int


def has_record_id(data: bytes) -> bool:
    """Whether ``data`` starts with a record-id header."""
    return len(data) >= HEADER_SIZE and data[:4] == MAGIC


def record_id(data: bytes) -> RecordId:
    """The id in the header of a record written with ``recordId="prefix"``.

    Raises ``ValueError`` when ``data`` has no header (written without the option, or not by spark-kpl).
    """
    if not has_record_id(data):
        raise ValueError(f"data does not start with a spark-kpl record id (magic {MAGIC!r}, {HEADER_SIZE} bytes): "
                         f"was it written with recordId='prefix'? It starts with {bytes(data[:8])!r}")
    _, write_id, batch_id, partition, row = _LAYOUT.unpack_from(data)
    return RecordId(uuid.UUID(bytes=write_id), batch_id, partition, row)


def strip(data: bytes) -> bytes:
    """The record's own data, without the header. Raises ``ValueError`` as :func:`record_id` does."""
    record_id(data)
    return bytes(data[HEADER_SIZE:])
