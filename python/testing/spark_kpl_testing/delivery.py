"""Comparing what was written with what a stream holds: every record, once, with its key; and what a
KCL consumer, which checks each aggregate against the hash range of its shard, would take of it."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.polling import wait_until_steady
from spark_kpl_testing.records import Record

#: data -> partition key the writer gave it.
Expected = Dict[bytes, str]


@dataclass
class DeliveryReport:
    expected: int
    received: int
    missing: List[bytes] = field(default_factory=list)
    duplicated: List[bytes] = field(default_factory=list)
    unexpected: List[bytes] = field(default_factory=list)
    wrong_key: List[Tuple[bytes, str, str]] = field(default_factory=list)
    #: Kinesis records among those read that are byte-for-byte copies of another: the KPL's own re-sends
    #: (after "Wrong Shard"), counted in ``duplicated`` like any other copy. None: not counted.
    resent: Optional[int] = None

    @property
    def exactly_once(self) -> bool:
        return not (self.missing or self.duplicated or self.unexpected or self.wrong_key)

    @property
    def at_least_once(self) -> bool:
        return not (self.missing or self.unexpected or self.wrong_key)

    def at_least_once_with_duplicates_under(self, share: float) -> bool:
        """Every record read, with its key, and fewer than ``share`` of them read more than once."""
        return self.at_least_once and len(self.duplicated) < share * self.expected

    def summary(self) -> str:
        def sample(items: list) -> str:
            return f"{len(items)} (e.g. {items[:3]!r})" if items else "0"

        return (
            f"expected {self.expected}, received {self.received}: missing {sample(self.missing)}, "
            f"duplicated {sample(self.duplicated)}, unexpected {sample(self.unexpected)}, "
            f"wrong partition key {sample(self.wrong_key)}"
            + ("" if self.resent is None else f"; {self.resent} Kinesis records re-sent byte for byte")
        )


def numbered_rows(spark, count: int, partitions: int = 4, keys: int = 101):
    """``count`` rows ``data`` = "row-<i>" and ``partitionKey`` = "key-<i mod keys>", as the sink takes them."""
    from pyspark.sql import functions as F

    return spark.range(count, numPartitions=partitions).select(
        F.format_string("row-%d", "id").alias("data"),
        F.format_string("key-%d", F.col("id") % keys).alias("partitionKey"),
    )


def numbered_expected(count: int, keys: int = 101) -> Expected:
    """What :func:`numbered_rows` writes."""
    return {f"row-{i}".encode(): f"key-{i % keys}" for i in range(count)}


def warm_up(spark, stream: str, **options: str) -> Expected:
    """Write one record so the executors' producers have loaded the stream's shard map.

    Until it has, the KPL sends records one by one instead of aggregated, which kinesis-mock
    serves slowly. Returns the record, to add to what the stream is expected to hold.
    """
    import spark_kpl

    record = {b"warm-up": "warm-up"}
    rows = spark.createDataFrame([(data, key) for data, key in record.items()], "data binary, partitionKey string")
    spark_kpl.write(rows, stream, partition_key="partitionKey", **options)
    return record


def compare(expected: Expected, records: Iterable[Tuple[bytes, str]], resent: Optional[int] = None) -> DeliveryReport:
    """``records`` are (data, partition key) pairs read back from the stream, de-aggregated; ``resent``, the
    Kinesis records among them stored again byte for byte, for the report."""
    seen: Counter = Counter()
    keys: Dict[bytes, Optional[str]] = {}
    received = 0
    for data, key in records:
        received += 1
        seen[data] += 1
        keys.setdefault(data, key)
    report = DeliveryReport(expected=len(expected), received=received, resent=resent)
    for data, key in expected.items():
        if data not in seen:
            report.missing.append(data)
        elif keys[data] != key:
            report.wrong_key.append((data, key, keys[data] or ""))
    report.duplicated = [data for data, count in seen.items() if count > 1]
    report.unexpected = [data for data in seen if data not in expected]
    return report


def write_in_background(spark, rows, stream: Optional[str], group: Optional[str] = None,
                        **options: str) -> Tuple[threading.Thread, Dict[str, Any]]:
    """Runs ``spark_kpl.write`` of numbered rows on a thread, in job group ``group`` (cancellable,
    interrupting its tasks). Returns the thread and a dict that receives ``result`` or ``error``."""
    import spark_kpl

    outcome: Dict[str, Any] = {}

    def run() -> None:
        if group:
            spark.sparkContext.setJobGroup(group, "spark-kpl test write", interruptOnCancel=True)
        try:
            outcome["result"] = spark_kpl.write(rows, stream, partition_key="partitionKey", **options)
        except Exception as error:  # handed to the caller, which asserts on it
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def failed_task_attempts(spark, group: str) -> int:
    """Task attempts that failed in the jobs of job group ``group`` (a lost executor's included): each
    may have stored its rows before it failed, and its retry sends them again."""
    tracker = spark.sparkContext.statusTracker()
    stages = [stage for job in tracker.getJobIdsForGroup(group)
              for stage in (tracker.getJobInfo(job).stageIds if tracker.getJobInfo(job) else [])]
    return sum(info.numFailedTasks for info in map(tracker.getStageInfo, stages) if info)


def wait_until_settled(endpoint: KinesisEndpoint, quiet: float = 3.0, timeout: float = 120.0) -> None:
    """Returns once ``endpoint`` has stored nothing new for ``quiet`` seconds: after a failed or
    cancelled write, what its tasks had in flight has landed."""
    wait_until_steady(lambda: endpoint.records_received, quiet, timeout, "the records received")


#: Shard id -> (starting, ending hash key), as :meth:`KinesisEndpoint.hash_ranges` gives them.
HashRanges = Mapping[str, Tuple[int, int]]


def partition_key_hash(partition_key: str) -> int:
    """The hash key Kinesis gives a partition key: its UTF-8 MD5 as a 128-bit big-endian integer."""
    return int.from_bytes(hashlib.md5(partition_key.encode("utf-8")).digest(), "big")


def effective_hash_key(record: Record) -> int:
    """The hash key Kinesis routes a record by: its explicit hash key, else its partition key's."""
    if record.explicit_hash_key is not None:
        return int(record.explicit_hash_key)
    return partition_key_hash(record.partition_key)


def outside_its_shard(record: Record, ranges: HashRanges) -> bool:
    start, end = ranges[record.shard_id]
    return not start <= effective_hash_key(record) <= end


def misplaced_aggregates(records: Iterable[Record], ranges: HashRanges) -> Set[Tuple[str, str]]:
    """The stored KPL aggregates, as (shard id, sequence number), holding a record whose hash key lies
    outside the range of the shard that stored them. Records stored on their own are never among
    them: a consumer checks only what it de-aggregates."""
    return {(r.shard_id, r.sequence_number) for r in records
            if r.sub_sequence_number is not None and outside_its_shard(r, ranges)}


def kcl_view(records: List[Record], ranges: HashRanges) -> List[Record]:
    """What a KCL consumer receives: it drops a whole aggregate when any record inside hashes outside
    the range of the shard that stored it (KCL's AggregatorUtil.deaggregate), as after a split or
    merge an aggregate built for the closed shard can land in a child."""
    dropped = misplaced_aggregates(records, ranges)
    return [r for r in records if (r.shard_id, r.sequence_number) not in dropped]


def read_by_kcl(expected: Expected, records: List[Record], ranges: HashRanges,
                data: Callable[[bytes], bytes] = lambda data: data) -> DeliveryReport:
    """What a KCL consumer of the stream reads of ``expected``: every copy it receives counts, the KPL's
    byte-for-byte re-sends included, and the report says how many Kinesis records were such re-sends.
    ``data`` turns a record's data into the row it carries (e.g. ``dedup.strip``)."""
    read = kcl_view(records, ranges)
    return compare(expected, ((data(r.data), r.partition_key) for r in read), resent=repeated_kinesis_records(read))


def by_kinesis_record(records: List[Record]) -> Dict[Tuple[str, str], List[Record]]:
    grouped: Dict[Tuple[str, str], List[Record]] = {}
    for record in records:
        grouped.setdefault((record.shard_id, record.sequence_number), []).append(record)
    return grouped


def without_repeated_kinesis_records(records: List[Record]) -> List[Record]:
    """The records less the Kinesis records stored again byte for byte: the KPL's own retries (after
    "Wrong Shard", when its shard map was stale, it sends the same aggregate again)."""
    seen: Set[Tuple[bytes, ...]] = set()
    kept: List[Record] = []
    for inside in by_kinesis_record(records).values():
        content = tuple(r.data for r in inside)
        if content not in seen:
            seen.add(content)
            kept.extend(inside)
    return kept


def repeated_kinesis_records(records: List[Record]) -> int:
    return len(by_kinesis_record(records)) - len(by_kinesis_record(without_repeated_kinesis_records(records)))
