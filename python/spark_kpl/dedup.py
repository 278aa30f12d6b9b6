"""Read the record id that ``recordId="prefix"`` puts before each record's data, to drop duplicates.

At-least-once delivery means a retried Spark task sends its records again. With the option
``recordId="prefix"`` every record's data starts with a 48-byte header naming the record, and a
retry sends the same record under the same id. A consumer keeps the ids it has seen and drops a
record whose id it knows.

The id names a record by the write, the micro-batch, the Spark partition and the record's own
content, never by its position: after a shuffle a retried task may see its rows in another order.

Header layout (big-endian): ``b"SKR\\x02"`` magic, 16-byte write id (a UUID: the streaming query's
id, Spark's run id of a batch write, or :func:`write_id` of the ``writeName`` the write was given),
8-byte batch id (the micro-batch id; 0 for batch writes), 4-byte Spark partition id, 12-byte
content digest (MD5 of the record's stream, partition key unless drawn at random, explicit hash key
and data), 4-byte occurrence (how many identical records of the same task came before it). Headers
of version 1 (``b"SKR\\x01"``, 40 bytes, a row number where the digest and occurrence are) are read
too; a header of a later version is an error naming it, never taken for data (docs/versioning.md).

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

import hashlib
import struct
import uuid
from types import SimpleNamespace
from typing import NamedTuple

from spark_kpl._facts import OPTIONS, RECORD_ID_FIELDS, RECORD_ID_MAGIC, RECORD_ID_SIZE, RecordIdField
from spark_kpl._jar import __version__

MAGIC = RECORD_ID_MAGIC
HEADER_SIZE = RECORD_ID_SIZE
#: The option value that puts the header before each record's data, for the error naming it.
_WITH_RECORD_IDS = f"{OPTIONS['RECORD_ID'].name}='{OPTIONS['RECORD_ID'].choices['PREFIX']}'"


def _struct_code(field: RecordIdField) -> str:
    """The JVM writes numbers as signed big-endian ints and longs, everything else as raw bytes."""
    if field.number:
        return {4: "i", 8: "q"}[field.bytes]
    return f"{field.bytes}s"


_FIELD_NAMES = [field.name for field in RECORD_ID_FIELDS]
_LAYOUT = struct.Struct(">" + "".join(_struct_code(field) for field in RECORD_ID_FIELDS))
#: Version 1 (spark-kpl before content ids): a row number in the partition.
_MAGIC_V1, _HEADER_SIZE_V1, _LAYOUT_V1 = b"SKR\x01", 40, struct.Struct(">4s16sqiq")
#: The header versions (the magic's last byte) this module reads.
_VERSIONS_READ = sorted({_MAGIC_V1[3], MAGIC[3]})


class RecordId(NamedTuple):
    """What names a record; equal for every copy a retry sends. Hashable: keep them in a set.

    ``content`` is the record's 12-byte digest and ``occurrence`` its number among identical records
    of its task (version 1 headers: the row number's 8 bytes and 0)."""

    write_id: uuid.UUID
    batch_id: int
    partition: int
    content: bytes
    occurrence: int


def _header_size(data: bytes) -> int:
    """The size of the header ``data`` starts with, or 0."""
    for magic, size in ((MAGIC, HEADER_SIZE), (_MAGIC_V1, _HEADER_SIZE_V1)):
        if len(data) >= size and data[:4] == magic:
            return size
    return 0


def has_record_id(data: bytes) -> bool:
    """Whether ``data`` starts with a record-id header."""
    return _header_size(data) > 0


def record_id(data: bytes) -> RecordId:
    """The id in the header of a record written with ``recordId="prefix"``.

    Raises ``ValueError`` when ``data`` has no header (written without the option, or not by spark-kpl).
    """
    size = _header_size(data)
    if size == HEADER_SIZE:
        # By the JVM's field names, as attributes: a field renamed there fails here, not silently.
        header = SimpleNamespace(**dict(zip(_FIELD_NAMES, _LAYOUT.unpack_from(data))))
        return RecordId(uuid.UUID(bytes=header.write_id), header.batch_id, header.partition, header.digest,
                        header.occurrence)
    if size == _HEADER_SIZE_V1:
        _, write_id, batch_id, partition, row = _LAYOUT_V1.unpack_from(data)
        return RecordId(uuid.UUID(bytes=write_id), batch_id, partition, row.to_bytes(8, "big"), 0)
    version = data[3] if len(data) > 3 and bytes(data[:3]) == MAGIC[:3] else None
    if version is not None and version not in _VERSIONS_READ:
        # Its size and layout come with its version (docs/versioning.md): stripping a guess would corrupt data.
        raise ValueError(f"data starts with a spark-kpl record-id header of version {version}, which this spark_kpl "
                         f"({__version__}) cannot read (it reads versions {', '.join(map(str, _VERSIONS_READ))}): "
                         "upgrade spark_kpl")
    raise ValueError(f"data does not start with a spark-kpl record id (magic {MAGIC!r}, {HEADER_SIZE} bytes): "
                     f"was it written with {_WITH_RECORD_IDS}? It starts with {bytes(data[:8])!r}")


def write_id(write_name: str) -> uuid.UUID:
    """The write id of the records of a write named ``write_name`` (the ``writeName`` option): the
    name-based UUID (version 3) of its UTF-8 bytes, the same on every run of that write."""
    return uuid.UUID(bytes=hashlib.md5(write_name.encode("utf-8")).digest(), version=3)


def strip(data: bytes) -> bytes:
    """The record's own data, without the header. Raises ``ValueError`` as :func:`record_id` does."""
    record_id(data)
    return bytes(data[_header_size(data):])
