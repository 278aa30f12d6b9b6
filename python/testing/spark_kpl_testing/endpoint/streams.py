"""The endpoint's streams: shards with their hash ranges and stored records, split and merged as Kinesis
splits and merges them. Not thread-safe on their own: :class:`~.api.KinesisApi` holds its lock."""

from __future__ import annotations

import bisect
import time
from typing import Any, Dict, List, Optional, Tuple

from spark_kpl_testing.endpoint.errors import ACCOUNT, ApiError
from spark_kpl_testing.endpoint.faults import TokenBuckets

__all__ = ["AUTO", "DEFAULT_MAX_RECORD_KIB", "HASH_SPACE", "USER_PARTITION_KEY", "Shard", "StoredRecord", "Stream",
           "checked_max_record_kib", "validate_stream"]

HASH_SPACE = 1 << 128

#: (sequence number, partition key, explicit hash key, base64 data, arrival epoch seconds)
StoredRecord = Tuple[str, str, Optional[str], str, float]


class Shard:
    __slots__ = ("shard_id", "start", "end", "seq_base", "count", "stored", "limits", "parents", "closed")

    def __init__(self, index: int, start: int, end: int, parents: Tuple[str, ...] = ()) -> None:
        self.shard_id = f"shardId-{index:012d}"
        self.start, self.end = start, end
        #: The shard(s) this one was split or merged from, as Kinesis names them.
        self.parents = parents
        #: A split or merge closed it: it keeps its records but takes no more.
        self.closed = False
        # 56 decimal digits, like Kinesis's; increasing within the shard.
        self.seq_base = 4960 * 10**52 + index * 10**36
        self.count = 0
        #: Arrival order.
        self.stored: List[StoredRecord] = []
        self.limits = TokenBuckets()

    def describe(self) -> Dict[str, Any]:
        sequence_range = {"StartingSequenceNumber": str(self.seq_base)}
        if self.closed:
            sequence_range["EndingSequenceNumber"] = str(self.seq_base + self.count)
        described: Dict[str, Any] = {
            "ShardId": self.shard_id,
            "HashKeyRange": {"StartingHashKey": str(self.start), "EndingHashKey": str(self.end)},
            "SequenceNumberRange": sequence_range,
        }
        for name, parent in zip(("ParentShardId", "AdjacentParentShardId"), self.parents):
            described[name] = parent
        return described

    def accept(self, key: str, ehk: Optional[str], data: str, arrived: float, store: bool) -> str:
        """Give the record its sequence number (and keep it, if ``store``); returns the number."""
        self.count += 1
        sequence_number = str(self.seq_base + self.count)
        if store:
            self.stored.append((sequence_number, key, ehk, data, arrived))
        return sequence_number


#: Kinesis's record distribution strategies (on-demand streams only): by the record's keys, or AUTO, where
#: Kinesis places each record itself and ignores its partition and explicit hash keys.
USER_PARTITION_KEY, AUTO = "USER_PARTITION_KEY", "AUTO"
#: A stream's maximum record size, data plus partition key: 1 MiB unless raised (UpdateMaxRecordSize).
DEFAULT_MAX_RECORD_KIB, LARGEST_MAX_RECORD_KIB = 1024, 10240


class Stream:
    def __init__(self, name: str, shard_count: int, region: str, on_demand: bool = False) -> None:
        self.name = name
        self.arn = f"arn:aws:kinesis:{region}:{ACCOUNT}:stream/{name}"
        #: Epoch seconds to the millisecond, as Kinesis reports it: tells apart two streams of one name.
        self.created = round(time.time(), 3)
        self.on_demand = on_demand
        #: Only on-demand streams have a strategy, and may switch it (UpdateStreamRecordDistributionStrategy).
        self.distribution: Optional[str] = USER_PARTITION_KEY if on_demand else None
        self.max_record_kib = DEFAULT_MAX_RECORD_KIB
        self._auto_placements = 0
        width = HASH_SPACE // shard_count
        #: Every shard ever, in shard-id order; closed ones keep their records.
        self.all_shards = [
            Shard(i, i * width, HASH_SPACE - 1 if i == shard_count - 1 else (i + 1) * width - 1)
            for i in range(shard_count)
        ]
        #: The shards as ListShards showed them before the latest split or merge, and when that came:
        #: what a listing that lags behind it shows (see KinesisApi.list_late).
        self.listing_before_reshard: Tuple[List[Dict[str, Any]], List[bool]] = ([], [])
        self.resharded_at = float("-inf")
        self._index_open_shards()

    def _index_open_shards(self) -> None:
        self.shards = sorted((s for s in self.all_shards if not s.closed), key=lambda s: s.start)
        self.starts = [s.start for s in self.shards]

    @property
    def records_accepted(self) -> int:
        return sum(s.count for s in self.all_shards)

    def shard_for(self, hash_key: int) -> Shard:
        """The open shard whose hash range holds ``hash_key``."""
        return self.shards[bisect.bisect_right(self.starts, hash_key) - 1]

    def shard_for_put(self, hash_key: int) -> Shard:
        """Where a put record goes: by its hash key, or under AUTO wherever Kinesis likes (here: in turn)."""
        if self.distribution != AUTO:
            return self.shard_for(hash_key)
        self._auto_placements += 1
        return self.shards[self._auto_placements % len(self.shards)]

    def set_distribution(self, strategy: Any) -> None:
        if not self.on_demand:
            raise ApiError(400, "InvalidArgumentException",
                           f"Stream {self.name} is not on-demand: only on-demand streams have a record "
                           "distribution strategy")
        if strategy not in (USER_PARTITION_KEY, AUTO):
            raise ApiError(400, "ValidationException",
                           f"RecordDistributionStrategy must be {USER_PARTITION_KEY} or {AUTO}, got {strategy!r}")
        self.distribution = strategy

    def set_max_record_kib(self, kib: Any) -> None:
        self.max_record_kib = checked_max_record_kib(kib)

    def any_shard(self, shard_id: Any) -> Shard:
        """A shard of the stream, open or closed."""
        for shard in self.all_shards:
            if shard.shard_id == shard_id:
                return shard
        raise ApiError(400, "ResourceNotFoundException", f"Shard {shard_id} of stream {self.name} not found")

    def open_shard(self, shard_id: Any) -> Shard:
        for shard in self.shards:
            if shard.shard_id == shard_id:
                return shard
        raise ApiError(400, "ResourceNotFoundException" if all(s.shard_id != shard_id for s in self.all_shards)
                       else "InvalidArgumentException", f"Shard {shard_id} is not an open shard of stream {self.name}")

    def split(self, shard_id: Any, new_starting_hash_key: int) -> None:
        """Close ``shard_id`` and open two children, the second starting at ``new_starting_hash_key``."""
        parent = self.open_shard(shard_id)
        if not parent.start < new_starting_hash_key <= parent.end:
            raise ApiError(400, "InvalidArgumentException",
                           f"NewStartingHashKey {new_starting_hash_key} is not inside {shard_id}'s hash range")
        self._replace([parent], [(parent.start, new_starting_hash_key - 1), (new_starting_hash_key, parent.end)])

    def merge(self, shard_id: Any, adjacent_shard_id: Any) -> None:
        """Close two adjacent shards and open one child covering both ranges."""
        first, second = sorted((self.open_shard(shard_id), self.open_shard(adjacent_shard_id)), key=lambda s: s.start)
        if first is second or first.end + 1 != second.start:
            raise ApiError(400, "InvalidArgumentException",
                           f"Shards {shard_id} and {adjacent_shard_id} are not adjacent")
        self._replace([first, second], [(first.start, second.end)])

    def _replace(self, closing: List[Shard], ranges: List[Tuple[int, int]]) -> None:
        self.listing_before_reshard = ([s.describe() for s in self.all_shards], [s.closed for s in self.all_shards])
        self.resharded_at = time.monotonic()
        parents = tuple(s.shard_id for s in closing)
        for shard in closing:
            shard.closed = True
        for start, end in ranges:
            self.all_shards.append(Shard(len(self.all_shards), start, end, parents))
        self._index_open_shards()

    def summary(self) -> Dict[str, Any]:
        summary = {
            "StreamName": self.name,
            "StreamARN": self.arn,
            "StreamStatus": "ACTIVE",
            "StreamModeDetails": {"StreamMode": "ON_DEMAND" if self.on_demand else "PROVISIONED"},
            "RetentionPeriodHours": 24,
            "StreamCreationTimestamp": self.created,
            "EnhancedMonitoring": [{"ShardLevelMetrics": []}],
            "EncryptionType": "NONE",
            "OpenShardCount": len(self.shards),  # open ones only, as Kinesis counts
            "ConsumerCount": 0,
            "MaxRecordSizeInKiB": self.max_record_kib,
        }
        if self.distribution is not None:
            summary["RecordDistributionStrategy"] = self.distribution
        return summary


def checked_max_record_kib(kib: Any) -> int:
    """``kib`` if it is a maximum record size Kinesis takes (CreateStream, UpdateMaxRecordSize)."""
    valid = isinstance(kib, int) and not isinstance(kib, bool)
    if not valid or not DEFAULT_MAX_RECORD_KIB <= kib <= LARGEST_MAX_RECORD_KIB:
        raise ApiError(400, "ValidationException", f"MaxRecordSizeInKiB must be {DEFAULT_MAX_RECORD_KIB} to "
                                                   f"{LARGEST_MAX_RECORD_KIB}, got {kib!r}")
    return kib


def validate_stream(name: Any, shards: Any) -> int:
    """``shards`` if ``name`` and ``shards`` make a stream Kinesis would create; ValueError otherwise."""
    if not isinstance(name, str) or not name or len(name) > 128:
        raise ValueError(f"bad stream name {name!r}")
    if not isinstance(shards, int) or isinstance(shards, bool) or not 1 <= shards <= 10000:
        raise ValueError(f"stream {name!r}: shard count must be 1 to 10000, got {shards!r}")
    return shards
