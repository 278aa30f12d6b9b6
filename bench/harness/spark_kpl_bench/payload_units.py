"""What a write costs in Kinesis PUT payload units, counted from the Kinesis records a stream stored.

Provisioned streams bill each Kinesis record in 25 KB units, at least one a record; on-demand streams
round each record up to 1 KB. A record's size is its data plus its partition key, as Kinesis counts it
against its limits. The fewest units the same rows could cost: a Kinesis record goes to one shard, so
per shard the rows' own bytes (data plus partition key, as each row would travel alone) in whole units,
summed over the shards that took rows. Aggregation framing is part of what is used, not of the fewest.
KB is taken as 1,024 bytes, as Kinesis's 1 MiB record limit counts them.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

from spark_kpl_testing.records import KinesisRecord

__all__ = ["ON_DEMAND_UNIT", "PROVISIONED_UNIT", "PayloadUnits", "payload_units", "units_table"]

PROVISIONED_UNIT = 25 * 1024
ON_DEMAND_UNIT = 1024


@dataclass(frozen=True)
class PayloadUnits:
    """One write's Kinesis records and their units; writes add up (``+``) when they cannot share
    Kinesis records, as separate writes or micro-batches cannot."""

    #: Writes (or micro-batches) added up here.
    writes: int = 0
    kinesis_records: int = 0
    rows: int = 0
    #: The rows' data plus partition keys, as they would travel alone.
    row_bytes: int = 0
    #: Data plus partition key of the Kinesis records, aggregation framing included.
    kinesis_bytes: int = 0
    #: Shards that took at least one Kinesis record, summed over the writes.
    shards: int = 0
    units: int = 0
    on_demand_units: int = 0
    fewest_units: int = 0
    fewest_on_demand_units: int = 0

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any]) -> "PayloadUnits":
        """From :meth:`as_dict` (a saved report's)."""
        return cls(**{f.name: saved[f.name] for f in dataclasses.fields(cls)})

    def __add__(self, other: "PayloadUnits") -> "PayloadUnits":
        return PayloadUnits(*(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other))))

    @property
    def rows_per_kinesis_record(self) -> float:
        return self.rows / self.kinesis_records if self.kinesis_records else 0.0

    @property
    def efficiency(self) -> float:
        """The fewest 25 KB units over those used: 1.0 is no waste."""
        return self.fewest_units / self.units if self.units else 0.0

    @property
    def on_demand_efficiency(self) -> float:
        return self.fewest_on_demand_units / self.on_demand_units if self.on_demand_units else 0.0

    def per_million_rows(self, units: int) -> float:
        return units * 1e6 / self.rows if self.rows else 0.0

    def as_dict(self) -> Dict[str, Any]:
        return {**dataclasses.asdict(self), "rows_per_kinesis_record": self.rows_per_kinesis_record,
                "efficiency": self.efficiency, "on_demand_efficiency": self.on_demand_efficiency,
                "units_per_million_rows": self.per_million_rows(self.units),
                "on_demand_units_per_million_rows": self.per_million_rows(self.on_demand_units)}


def payload_units(records: Iterable[KinesisRecord]) -> PayloadUnits:
    """The units of one write's Kinesis records (the endpoint's, aggregates whole), and the fewest its rows need."""
    count = rows = kinesis_bytes = units = on_demand_units = 0
    row_bytes_by_shard: Dict[str, int] = defaultdict(int)
    for record in records:
        count += 1
        kinesis_bytes += record.size
        units += _units(record.size, PROVISIONED_UNIT)
        on_demand_units += _units(record.size, ON_DEMAND_UNIT)
        users = record.user_records()
        rows += len(users)
        row_bytes_by_shard[record.shard_id] += sum(len(u.data) + len(u.partition_key.encode()) for u in users)
    return PayloadUnits(
        writes=1 if count else 0, kinesis_records=count, rows=rows, row_bytes=sum(row_bytes_by_shard.values()),
        kinesis_bytes=kinesis_bytes,
        shards=len(row_bytes_by_shard), units=units, on_demand_units=on_demand_units,
        fewest_units=sum(_units(b, PROVISIONED_UNIT) for b in row_bytes_by_shard.values()),
        fewest_on_demand_units=sum(_units(b, ON_DEMAND_UNIT) for b in row_bytes_by_shard.values()))


def _units(size: int, unit: int) -> int:
    """Whole units of ``size`` bytes, at least one (an empty record is billed too)."""
    return max(1, -(-size // unit))


def units_table(rows: Sequence[Tuple[str, PayloadUnits]], what: str = "write") -> List[str]:
    """A markdown table of writes' units (``what`` names the first column), with what explains them: rows and
    bytes per Kinesis record, Kinesis records per shard that took rows."""
    lines = [f"| {what} | writes | rows | shards written per write | Kinesis records per shard | "
             "rows per Kinesis record | "
             "bytes per Kinesis record | 25 KB units per million rows: used / fewest | efficiency (fewest / used) | "
             "1 KB (on-demand) units per million rows: used / fewest | on-demand efficiency |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, u in rows:
        per_shard = u.kinesis_records / u.shards if u.shards else 0.0
        per_record = u.kinesis_bytes / u.kinesis_records if u.kinesis_records else 0.0
        per_write = u.shards / u.writes if u.writes else 0.0
        lines.append(f"| {label} | {u.writes:,} | {u.rows:,} | {per_write:,.0f} | {per_shard:,.1f} | "
                     f"{u.rows_per_kinesis_record:,.1f} | "
                     f"{per_record:,.0f} | {u.per_million_rows(u.units):,.0f} / "
                     f"{u.per_million_rows(u.fewest_units):,.0f} | "
                     f"{u.efficiency:.2f} | {u.per_million_rows(u.on_demand_units):,.0f} / "
                     f"{u.per_million_rows(u.fewest_on_demand_units):,.0f} | {u.on_demand_efficiency:.2f} |")
    return lines
