"""What a stream holds, as its producer wrote it: Kinesis records split into the user records that KPL
aggregates carry, with their partition and explicit hash keys."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional

__all__ = ["KinesisRecord", "Record", "user_records"]


@dataclass(frozen=True)
class Record:
    """One user record as its producer wrote it, after KPL de-aggregation.

    ``sub_sequence_number`` is the record's index inside a KPL aggregated record, or ``None`` when
    the record was stored on its own (so a test can tell whether the KPL aggregated).
    ``explicit_hash_key`` is only known for records that travelled inside an aggregated record:
    Kinesis does not return the hash key of a plain record.
    """

    partition_key: str
    data: bytes
    explicit_hash_key: Optional[str]
    shard_id: str
    sequence_number: str
    sub_sequence_number: Optional[int]


@dataclass(frozen=True)
class KinesisRecord:
    """One Kinesis record as a stream stored it: a KPL aggregate kept whole, or one user record alone."""

    shard_id: str
    sequence_number: str
    partition_key: str
    data: bytes

    @property
    def size(self) -> int:
        """What Kinesis counts of it against its limits and bills: data plus partition key."""
        return len(self.data) + len(self.partition_key.encode())

    def user_records(self) -> List["Record"]:
        return user_records({"Data": self.data, "SequenceNumber": self.sequence_number,
                             "PartitionKey": self.partition_key}, self.shard_id)


@functools.cache
def _aggregated_record_type() -> Any:
    """aws-kinesis-agg's protobuf class for the KPL's ``AggregatedRecord``.

    Its generated ``messages_pb2`` imports ``config_pb2`` as a top-level module; importing the
    package's ``deaggregator`` first puts the package folder on ``sys.path`` so that works. Loaded
    lazily, so importing this module does not change ``sys.path``.
    """
    import aws_kinesis_agg.deaggregator  # noqa: F401  (sys.path set-up for messages_pb2)
    from aws_kinesis_agg import messages_pb2

    return messages_pb2.AggregatedRecord


def user_records(raw: Mapping[str, Any], shard_id: str) -> List[Record]:
    """The user records in one stored Kinesis record (several if the KPL aggregated them).

    The KPL format is ``F3 89 9A C2`` + protobuf ``AggregatedRecord`` + MD5 of the protobuf; a
    record whose digest does not match is user data that happens to start with the magic, as the
    KCL treats it. This parses with aws-kinesis-agg's protobuf class rather than its
    ``deaggregate_records``: that function gives a record without an explicit hash key the
    table's first one when others in the same aggregate have one, and prints and drops records it
    cannot parse, where a test wants the exact keys or a loud failure.
    """
    import aws_kinesis_agg

    data: bytes = raw["Data"]
    sequence_number: str = raw["SequenceNumber"]
    magic, digest_size = aws_kinesis_agg.MAGIC, aws_kinesis_agg.DIGEST_SIZE
    body = data[len(magic) : len(data) - digest_size]
    aggregated = (
        data.startswith(magic)
        and len(data) > len(magic) + digest_size
        and hashlib.md5(body, usedforsecurity=False).digest() == data[len(data) - digest_size :]
    )
    if not aggregated:
        return [Record(raw["PartitionKey"], data, None, shard_id, sequence_number, None)]
    try:
        aggregate = _aggregated_record_type()()
        aggregate.ParseFromString(body)
        keys, hash_keys = aggregate.partition_key_table, aggregate.explicit_hash_key_table
        return [
            Record(
                partition_key=keys[user.partition_key_index],
                data=user.data,
                explicit_hash_key=(
                    hash_keys[user.explicit_hash_key_index]
                    if user.HasField("explicit_hash_key_index")
                    else None
                ),
                shard_id=shard_id,
                sequence_number=sequence_number,
                sub_sequence_number=index,
            )
            for index, user in enumerate(aggregate.records)
        ]
    except Exception as e:  # a valid digest over a bad protobuf or key index: corrupt, not user data
        raise ValueError(f"corrupt KPL aggregated record {sequence_number} in {shard_id}: {e}") from e
