"""The Kinesis JSON 1.1 operations the endpoint serves, over its streams: what each call answers.

``ListShards`` and ``PutRecords`` for the KPL daemon; ``DescribeStreamSummary`` and ``ListShards`` for
the sink; ``PutRecord``, ``CreateStream``, ``DeleteStream``, ``DescribeStream``, ``ListStreams``,
``SplitShard``, ``MergeShards``, ``UpdateStreamRecordDistributionStrategy``, ``UpdateMaxRecordSize`` for
tests; ``GetShardIterator`` and ``GetRecords`` for consumers that read the stored records as they are.
Records are routed to shards as Kinesis routes them: MD5 of the partition key, or the explicit hash key,
over the open shards' hash ranges, except on a stream whose record distribution strategy is ``AUTO``,
where Kinesis ignores both keys and places each record itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import orjson

from spark_kpl_testing.endpoint.counters import PUT_OPERATIONS, Counters
from spark_kpl_testing.endpoint.errors import ACCOUNT, ApiError, rate_exceeded, stream_not_found
from spark_kpl_testing.endpoint.faults import ControlPlaneLimits, FaultInjector
from spark_kpl_testing.endpoint.streams import (
    DEFAULT_MAX_RECORD_KIB,
    HASH_SPACE,
    Stream,
    checked_max_record_kib,
    validate_stream,
)
from spark_kpl_testing.records import KinesisRecord, Record, user_records

__all__ = ["KinesisApi"]

_MAX_RECORDS_PER_CALL = 500
#: A PutRecords call's records, data plus partition keys: 10 MiB since Kinesis took 10 MiB records (was 5 MiB).
_MAX_CALL_BYTES = 10 << 20
#: The API model's pattern for ExplicitHashKey: a decimal without sign or leading zeros.
_HASH_KEY = re.compile(r"0|([1-9]\d{0,38})", re.ASCII)  # \d: ASCII digits only

Answer = Union[Dict[str, Any], bytes]  # bytes: JSON already encoded


def _records_member(i: int) -> str:
    """The path AWS's errors give a PutRecords entry's members (counted from 1)."""
    return f"records.{i + 1}.member."


class KinesisApi:
    """The streams and the operations on them; thread-safe (one lock over every stream's state)."""

    def __init__(self, streams: Mapping[str, int], region: str, store: bool, faults: FaultInjector,
                 counters: Counters) -> None:
        self.region = region
        #: False: records are counted, not kept (benchmarks); their base64 data is then never decoded.
        self.store = store
        self._faults = faults
        self._counters = counters
        self._limits = ControlPlaneLimits()
        self._lock = threading.Lock()
        self._streams: Dict[str, Stream] = {name: Stream(name, validate_stream(name, shards), region)
                                            for name, shards in streams.items()}
        #: stream name -> the last stream deleted under it, kept to be read back (see deleted_stream)
        self._deleted: Dict[str, Stream] = {}
        #: stream name -> stored records after which the stream is deleted (see delete_stream_after)
        self._delete_after: Dict[str, int] = {}
        #: stream name -> (seconds, User-Agent part): whose ListShards lags how long behind a reshard
        self._late_listers: Dict[str, Tuple[float, str]] = {}
        self._operations: Dict[str, Callable[[Dict[str, Any]], Answer]] = {
            "PutRecords": self._put_records,
            "PutRecord": self._put_record,
            "ListShards": self._list_shards,
            "DescribeStreamSummary": self._describe_stream_summary,
            "DescribeStream": self._describe_stream,
            "CreateStream": self._create_stream_call,
            "DeleteStream": self._delete_stream_call,
            "ListStreams": self._list_streams,
            "SplitShard": self._split_shard_call,
            "MergeShards": self._merge_shards_call,
            "GetShardIterator": self._get_shard_iterator,
            "GetRecords": self._get_records,
            "UpdateStreamRecordDistributionStrategy": self._update_distribution_call,
            "UpdateMaxRecordSize": self._update_max_record_size_call,
        }

    def call(self, operation: str, body: bytes, user_agent: str = "") -> Answer:
        """Answer one call from a caller that names itself ``user_agent``; raises :class:`ApiError` for an
        error answer."""
        try:
            # orjson: json.loads took 40 % of the endpoint's CPU in benchmarks, orjson half that
            payload = orjson.loads(body) if body else {}
        except ValueError as e:
            raise ApiError(400, "SerializationException", f"bad JSON: {e}") from None
        if not isinstance(payload, dict):
            raise ApiError(400, "SerializationException", "the body is not a JSON object")
        serve = self._operations.get(operation)
        if serve is None:
            raise ApiError(400, "UnknownOperationException", f"unsupported operation {operation}")
        if self._faults.faults.control_plane_limits:
            stream = _stream_named(payload)
            if self._limits.refuses(operation, stream, time.monotonic()):
                raise rate_exceeded(stream)
        if operation not in PUT_OPERATIONS:
            self._counters.request(operation, payload)
        if operation == "ListShards":  # the one answer that depends on who asks (see list_late)
            return self._list_shards(payload, user_agent)
        return serve(payload)

    # -- streams, for the endpoint's owner ----------------------------------------------------

    def create_stream(self, name: str, shards: int, on_demand: bool = False,
                      max_record_kib: int = DEFAULT_MAX_RECORD_KIB) -> None:
        stream = Stream(name, validate_stream(name, shards), self.region, on_demand)
        stream.set_max_record_kib(max_record_kib)
        with self._lock:
            if name in self._streams:
                raise ValueError(f"stream {name!r} already exists")
            self._streams[name] = stream

    def delete_stream(self, name: str) -> None:
        with self._lock:
            self._delete_after.pop(name, None)
            deleted = self._streams.pop(name, None)
            if deleted is None:
                raise KeyError(f"no stream {name!r}")
            self._deleted[name] = deleted

    def deleted_stream(self, name: str) -> Tuple[List[Record], Dict[str, Tuple[int, int]]]:
        """The records and shard ranges of the last stream deleted under ``name``."""
        with self._lock:
            stream = self._deleted[name]
            snapshot = [(s.shard_id, list(s.stored)) for s in stream.all_shards]
            ranges = {s.shard_id: (s.start, s.end) for s in stream.all_shards}
        return [record for record, _arrived in _user_records(snapshot)], ranges

    def open_shard_counts(self) -> Dict[str, int]:
        with self._lock:
            return {name: len(s.shards) for name, s in self._streams.items()}

    def records(self, stream: str) -> List[Record]:
        return [record for record, _arrived in self.records_arrived(stream)]

    def records_arrived(self, stream: str) -> List[Tuple[Record, float]]:
        return _user_records(self._snapshot(stream))

    def kinesis_records(self, stream: str, take: bool = False) -> List[KinesisRecord]:
        return [KinesisRecord(shard_id, sequence_number, key, base64.b64decode(data))
                for shard_id, stored in self._snapshot(stream, take)
                for sequence_number, key, _ehk, data, _arrived in stored]

    def _snapshot(self, stream: str, take: bool = False) -> List[Tuple[str, List[Any]]]:
        """Each shard's stored records; ``take``: the shards forget them."""
        with self._lock:
            found = self._streams.get(stream)
            if found is None:
                raise KeyError(f"no stream {stream!r}")
            snapshot = [(s.shard_id, list(s.stored)) for s in found.all_shards]
            if take:
                for shard in found.all_shards:
                    shard.stored.clear()
            return snapshot

    def delete_stream_after(self, name: str, records: int) -> None:
        if records < 1:
            raise ValueError(f"records must be >= 1, got {records!r}")
        with self._lock:
            if name not in self._streams:
                raise KeyError(f"no stream {name!r}")
            self._delete_after[name] = records

    def split_shard(self, stream: str, shard_id: Any, new_starting_hash_key: int) -> None:
        with self._lock:
            self._stream({"StreamName": stream}).split(shard_id, new_starting_hash_key)

    def merge_shards(self, stream: str, shard_id: Any, adjacent_shard_id: Any) -> None:
        with self._lock:
            self._stream({"StreamName": stream}).merge(shard_id, adjacent_shard_id)

    def list_late(self, stream: str, seconds: float, user_agent: str) -> None:
        with self._lock:
            self._late_listers[stream] = (seconds, user_agent)

    def set_record_distribution(self, stream: str, strategy: str) -> None:
        with self._lock:
            self._stream({"StreamName": stream}).set_distribution(strategy)

    def hash_ranges(self, stream: str) -> Dict[str, Tuple[int, int]]:
        with self._lock:
            return {s.shard_id: (s.start, s.end) for s in self._stream({"StreamName": stream}).all_shards}

    # -- the operations ------------------------------------------------------------------------

    def _stream(self, payload: Mapping[str, Any]) -> Stream:
        """The call's stream, by StreamName or StreamARN; the lock need not be held."""
        name = payload.get("StreamName")
        if name is None:
            name = _arn_stream_name(payload.get("StreamARN"))
            if name is None:
                raise ApiError(400, "InvalidArgumentException", "StreamName or StreamARN is required")
        stream = self._streams.get(name)
        if stream is None:
            raise stream_not_found(name)
        return stream

    def _stream_by_arn(self, payload: Mapping[str, Any]) -> Stream:
        """The stream of a call Kinesis takes by StreamARN only (its input has no StreamName)."""
        if "StreamARN" not in payload:
            raise ApiError(400, "ValidationException", "StreamARN is required")
        return self._stream(payload)

    def _put_record(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        stream = self._stream(payload)
        entry = {k: payload.get(k) for k in ("Data", "PartitionKey", "ExplicitHashKey")}
        result = self._put(stream, [entry], member=lambda _: "")[0]
        if "ErrorCode" in result:
            status = 500 if result["ErrorCode"] == "InternalFailure" else 400
            raise ApiError(status, result["ErrorCode"], result["ErrorMessage"])
        return {**result, "EncryptionType": "NONE"}

    def _put_records(self, payload: Dict[str, Any]) -> bytes:
        stream = self._stream(payload)
        entries = payload.get("Records")
        if not isinstance(entries, list) or not 1 <= len(entries) <= _MAX_RECORDS_PER_CALL:
            raise ApiError(400, "ValidationException",
                           f"Records must be a list of 1 to {_MAX_RECORDS_PER_CALL} records")
        results = self._put(stream, entries)
        failed = sum(1 for r in results if "ErrorCode" in r)
        # Built by hand: the answer is most of this endpoint's JSON work.
        parts = [
            f'{{"ErrorCode":"{r["ErrorCode"]}","ErrorMessage":{json.dumps(r["ErrorMessage"])}}}'
            if "ErrorCode" in r else
            f'{{"SequenceNumber":"{r["SequenceNumber"]}","ShardId":"{r["ShardId"]}"}}'
            for r in results
        ]
        return (f'{{"FailedRecordCount":{failed},"EncryptionType":"NONE","Records":['
                + ",".join(parts) + "]}").encode()

    def _put(self, stream: Stream, entries: List[Any],
             member: Callable[[int], str] = _records_member) -> List[Dict[str, str]]:
        """Route, throttle, fail or accept each record; one result per record, in order."""
        routed = _route(entries, stream.max_record_kib << 10, member)
        faults = self._faults.faults
        record_rate, byte_rate = faults.shard_records_per_second, faults.shard_bytes_per_second
        limited = record_rate is not None or byte_rate is not None
        results: List[Dict[str, str]] = []
        accepted = accepted_bytes = 0
        errors: Counter = Counter()
        with self._lock:
            if self._streams.get(stream.name) is not stream:  # deleted meanwhile
                raise stream_not_found(stream.name)
            now, arrived = time.monotonic(), time.time()
            for hash_key, size, key, ehk, data in routed:
                shard = stream.shard_for_put(hash_key)  # under the lock: a split or merge may have just happened
                if (self._faults.record_starved(data)  # first: a starved record takes none of the shard's tokens
                        or limited and shard.limits.throttled(size, now, record_rate, byte_rate)):
                    errors["ProvisionedThroughputExceededException"] += 1
                    results.append({"ErrorCode": "ProvisionedThroughputExceededException",
                                    "ErrorMessage": f"Rate exceeded for shard {shard.shard_id} in stream "
                                                    f"{stream.name} under account {ACCOUNT}."})
                elif self._faults.record_fails():
                    errors["InternalFailure"] += 1
                    results.append({"ErrorCode": "InternalFailure", "ErrorMessage": "Internal service failure."})
                else:
                    sequence_number = shard.accept(key, ehk, data, arrived, self.store)
                    accepted += 1
                    accepted_bytes += size
                    results.append({"SequenceNumber": sequence_number, "ShardId": shard.shard_id})
            self._counters.records(accepted, accepted_bytes, len(routed) - accepted, errors)
            deletion_due = self._delete_after.get(stream.name)
            if deletion_due is not None and stream.records_accepted >= deletion_due:
                del self._delete_after[stream.name]
                del self._streams[stream.name]
        return results

    def _list_shards(self, payload: Dict[str, Any], user_agent: str = "") -> Dict[str, Any]:
        token = payload.get("NextToken")
        if token is not None:
            if "StreamName" in payload or "StreamCreationTimestamp" in payload:
                raise ApiError(400, "InvalidArgumentException",
                               "NextToken cannot be given with StreamName or StreamCreationTimestamp")
            try:
                name, offset = json.loads(base64.b64decode(token))
            except Exception:
                raise ApiError(400, "InvalidArgumentException", "bad NextToken") from None
            stream = self._stream({"StreamName": name})
            shard_filter: Any = None
        else:
            stream = self._stream(payload)
            _check_creation(stream, payload)
            offset = 0
            shard_filter = payload.get("ShardFilter")
        with self._lock:
            described, closed = self._listing(stream, user_agent)
        shards = list(zip(described, closed))
        after = payload.get("ExclusiveStartShardId")
        if isinstance(shard_filter, dict):
            kind = shard_filter.get("Type")
            if kind == "AFTER_SHARD_ID":
                after = shard_filter.get("ShardId")
            elif kind == "AT_LATEST":
                shards = [(shard, was_closed) for shard, was_closed in shards if not was_closed]
            elif kind not in ("AT_TRIM_HORIZON", "FROM_TRIM_HORIZON", "AT_TIMESTAMP", "FROM_TIMESTAMP"):
                raise ApiError(400, "InvalidArgumentException", f"bad ShardFilter Type {kind!r}")
            # Records are never trimmed here: the other filters select every shard, closed ones too.
        if after is not None:
            shards = [(shard, was_closed) for shard, was_closed in shards if shard["ShardId"] > after]
        limit = _limit(payload, "MaxResults", 1000)
        answer: Dict[str, Any] = {"Shards": [shard for shard, _ in shards[offset: offset + limit]]}
        if offset + limit < len(shards):
            answer["NextToken"] = base64.b64encode(json.dumps([stream.name, offset + limit]).encode()).decode()
        return answer

    def _listing(self, stream: Stream, user_agent: str) -> Tuple[List[Dict[str, Any]], List[bool]]:
        """Every shard of ``stream`` as this caller's ListShards sees it, and which are closed: as before
        the latest split or merge while a lag set by :meth:`list_late` for the caller has not passed."""
        lag = self._late_listers.get(stream.name)
        if lag is not None and lag[1] in user_agent and time.monotonic() - stream.resharded_at < lag[0]:
            return stream.listing_before_reshard
        return [s.describe() for s in stream.all_shards], [s.closed for s in stream.all_shards]

    def _describe_stream_summary(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        return {"StreamDescriptionSummary": self._stream(payload).summary()}

    def _describe_stream(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        stream = self._stream(payload)
        summary = stream.summary()
        for key in ("OpenShardCount", "ConsumerCount"):
            summary.pop(key)
        summary["Shards"] = [s.describe() for s in stream.all_shards]
        summary["HasMoreShards"] = False
        return {"StreamDescription": summary}

    def _create_stream_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        name = payload.get("StreamName")
        mode = (payload.get("StreamModeDetails") or {}).get("StreamMode", "PROVISIONED")
        shards = payload.get("ShardCount", 4)  # on-demand streams start with 4 shards
        max_record_kib = payload.get("MaxRecordSizeInKiB")
        max_record_kib = DEFAULT_MAX_RECORD_KIB if max_record_kib is None else checked_max_record_kib(max_record_kib)
        try:
            self.create_stream(name, shards, on_demand=mode == "ON_DEMAND",  # type: ignore[arg-type]
                               max_record_kib=max_record_kib)
        except ValueError as e:
            if isinstance(name, str) and name in self._streams:
                raise ApiError(400, "ResourceInUseException",
                               f"Stream {name} under account {ACCOUNT} already exists.") from None
            raise ApiError(400, "InvalidArgumentException", str(e)) from None
        return {}

    def _delete_stream_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        stream = self._stream(payload)
        try:
            self.delete_stream(stream.name)
        except KeyError:
            raise stream_not_found(stream.name) from None
        return {}

    def _split_shard_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        try:
            new_start = int(payload.get("NewStartingHashKey"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ApiError(400, "InvalidArgumentException", "NewStartingHashKey must be a decimal") from None
        with self._lock:
            self._stream(payload).split(payload.get("ShardToSplit"), new_start)
        return {}

    def _merge_shards_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            self._stream(payload).merge(payload.get("ShardToMerge"), payload.get("AdjacentShardToMerge"))
        return {}

    def _update_distribution_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            self._stream_by_arn(payload).set_distribution(payload.get("RecordDistributionStrategy"))
        return {}

    def _update_max_record_size_call(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            self._stream_by_arn(payload).set_max_record_kib(payload.get("MaxRecordSizeInKiB"))
        return {}

    def _get_shard_iterator(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        """TRIM_HORIZON or LATEST only; the iterator names the stream, the shard and the next record's index."""
        stream = self._stream(payload)
        kind = payload.get("ShardIteratorType")
        with self._lock:
            shard = stream.any_shard(payload.get("ShardId"))
            if kind not in ("TRIM_HORIZON", "LATEST"):
                raise ApiError(400, "InvalidArgumentException",
                               f"ShardIteratorType {kind!r}: this endpoint serves TRIM_HORIZON and LATEST")
            position = 0 if kind == "TRIM_HORIZON" else len(shard.stored)
        return {"ShardIterator": _shard_iterator(stream.name, shard.shard_id, position)}

    def _get_records(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        try:
            name, shard_id, position = json.loads(base64.b64decode(payload.get("ShardIterator") or ""))
        except Exception:
            raise ApiError(400, "InvalidArgumentException", "bad ShardIterator") from None
        limit = _limit(payload, "Limit", 10000)
        stream = self._stream({"StreamName": name})
        with self._lock:
            shard = stream.any_shard(shard_id)
            page, behind, closed = shard.stored[position: position + limit], len(shard.stored) - position, shard.closed
        answer: Dict[str, Any] = {
            "Records": [{"SequenceNumber": seq, "ApproximateArrivalTimestamp": arrived, "Data": data,
                         "PartitionKey": key, "EncryptionType": "NONE"}
                        for seq, key, _ehk, data, arrived in page],
            "MillisBehindLatest": 0 if behind <= limit else 1000,
        }
        if not (closed and behind <= limit):  # as Kinesis: no next iterator once a closed shard is read to its end
            answer["NextShardIterator"] = _shard_iterator(name, shard_id, position + len(page))
        return answer

    def _list_streams(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        with self._lock:
            streams = sorted(self._streams.values(), key=lambda s: s.name)
        return {"StreamNames": [s.name for s in streams], "HasMoreStreams": False,
                "StreamSummaries": [{"StreamName": s.name, "StreamARN": s.arn, "StreamStatus": "ACTIVE"}
                                    for s in streams]}


def _route(entries: List[Any], max_record_bytes: int, member: Callable[[int], str] = _records_member) \
        -> List[Tuple[int, int, str, Optional[str], str]]:
    """(hash key, size, partition key, explicit hash key, base64 data) of each record of a put, checked
    as Kinesis checks them; raises :class:`ApiError` for the whole call otherwise.

    A per-record result carries only throttling or ``InternalFailure``, so one bad entry fails the
    whole call: a value off the API model's constraints with ``ValidationException``, in the AWS
    wording that names the member (``member`` gives its path; the first such value only); else, as
    the service checks after the model, a record over the stream's maximum record size
    (``max_record_bytes``; data plus partition key) with ``ValidationException`` in the same wording,
    naming that maximum (what Kinesis answered the KPL 1.0.6 for a 1 MiB stream, KPL issue #680), a
    hash key past 2^128-1, or records over 10 MiB in all, with ``InvalidArgumentException``."""
    routed: List[Tuple[int, int, str, Optional[str], str]] = []
    out_of_limits: Optional[ApiError] = None
    call_bytes = 0
    md5 = hashlib.md5
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ApiError(400, "SerializationException", f"record {i} is not an object")
        data, key, ehk = entry.get("Data"), entry.get("PartitionKey"), entry.get("ExplicitHashKey")
        if not isinstance(data, str):
            raise _invalid(member(i) + "data", None, "Member must not be null")
        if not isinstance(key, str) or not 1 <= len(key) <= 256:
            raise _invalid(member(i) + "partitionKey", None,
                           "Member must have length greater than or equal to 1" if not key
                           else "Member must have length less than or equal to 256")
        if ehk is not None and not (isinstance(ehk, str) and _HASH_KEY.fullmatch(ehk)):
            raise _invalid(member(i) + "explicitHashKey", ehk,
                           f"Member must satisfy regular expression pattern: {_HASH_KEY.pattern}")
        encoded_key = key.encode()
        size = _decoded_size(data) + len(encoded_key)
        if size > max_record_bytes and out_of_limits is None:
            out_of_limits = _invalid(member(i) + "data", None,
                                     f"Member must have length less than or equal to {max_record_bytes}")
        call_bytes += size
        hash_key = int.from_bytes(md5(encoded_key).digest(), "big") if ehk is None else int(ehk)
        if hash_key >= HASH_SPACE and out_of_limits is None:
            out_of_limits = ApiError(400, "InvalidArgumentException",
                                     f"{member(i)}explicitHashKey {ehk} is over the hash key range 0 to 2^128-1")
        routed.append((hash_key, size, key, ehk, data))
    if out_of_limits is not None:
        raise out_of_limits
    if call_bytes > _MAX_CALL_BYTES:
        raise ApiError(400, "InvalidArgumentException", f"Records size exceeds {_MAX_CALL_BYTES >> 20} MB limit")
    return routed


def _user_records(snapshot: List[Tuple[str, List[Any]]]) -> List[Tuple[Record, float]]:
    """Each shard's stored records, de-aggregated, with when they arrived."""
    out: List[Tuple[Record, float]] = []
    for shard_id, stored in snapshot:
        for sequence_number, partition_key, _ehk, data, arrived in stored:
            raw = {"Data": base64.b64decode(data), "SequenceNumber": sequence_number, "PartitionKey": partition_key}
            out.extend((record, arrived) for record in user_records(raw, shard_id))
    return out


def _stream_named(payload: Mapping[str, Any]) -> Optional[str]:
    """The stream a call names, by StreamName, StreamARN or a ListShards NextToken; None if none (or not
    readably: the call is then refused for that anyway)."""
    name = payload.get("StreamName")
    if isinstance(name, str):
        return name
    name = _arn_stream_name(payload.get("StreamARN"))
    if name is not None:
        return name
    try:
        name = json.loads(base64.b64decode(payload["NextToken"]))[0]
    except Exception:
        return None
    return name if isinstance(name, str) else None


def _arn_stream_name(arn: Any) -> Optional[str]:
    """The stream name in a stream ARN (None: not one)."""
    return arn.rsplit("stream/", 1)[1] if isinstance(arn, str) and "stream/" in arn else None


def _check_creation(stream: Stream, payload: Mapping[str, Any]) -> None:
    """ListShards's StreamCreationTimestamp tells apart streams of one name: another one's is not found."""
    created = payload.get("StreamCreationTimestamp")
    if created is not None and abs(float(created) - stream.created) > 0.0005:
        raise ApiError(400, "ResourceNotFoundException",
                       f"Stream {stream.name} under account {ACCOUNT} with creation timestamp {created} not found.")


def _invalid(member: str, value: Optional[str], constraint: str) -> ApiError:
    """A request member off the API model's constraints, as AWS words it."""
    shown = "" if value is None else f" '{value}'"
    return ApiError(400, "ValidationException", f"1 validation error detected: Value{shown} at '{member}' "
                                                f"failed to satisfy constraint: {constraint}")


def _decoded_size(data: str) -> int:
    """Bytes a base64 string decodes to, without decoding it."""
    return len(data) * 3 // 4 - (data[-2:] == "==") - (data[-1:] == "=")


def _limit(payload: Mapping[str, Any], name: str, default: int, maximum: int = 10000) -> int:
    limit = payload.get(name) or default
    if not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise ApiError(400, "InvalidArgumentException", f"{name} must be 1 to {maximum}")
    return limit


def _shard_iterator(stream: str, shard_id: str, position: int) -> str:
    return base64.b64encode(json.dumps([stream, shard_id, position]).encode()).decode()
