"""Where Python keeps a declaration of its own beside the JVM's (WriteResult's typed fields are the
public API), it must equal sink_facts.json, which scripts/gen-docs.sh writes from the JVM's."""

from __future__ import annotations

import dataclasses
import uuid

from spark_kpl import WriteResult, dedup, writer
from spark_kpl._facts import METRICS, SINK_COLUMNS


def test_write_result_has_a_field_for_each_metric_in_the_jvm_order():
    fields = [field.name for field in dataclasses.fields(WriteResult)]
    missing, unknown = set(METRICS) - set(fields), set(fields) - set(METRICS)
    assert fields == METRICS, (f"WriteResult differs from the JVM's WriteMetric: lacks {sorted(missing)}, "
                               f"has besides {sorted(unknown)}, order {fields} against {METRICS}")


def test_every_sink_column_has_a_column_argument():
    assert sorted(writer._SINK_COLUMNS.values()) == sorted(SINK_COLUMNS.values()), \
        f"spark_kpl.write's column arguments {writer._SINK_COLUMNS} differ from RowLayout's columns {SINK_COLUMNS}"


def test_the_header_layout_fills_the_header():
    assert dedup._LAYOUT.size == dedup.HEADER_SIZE


def test_a_header_laid_out_by_the_facts_reads_back():
    write_id = uuid.uuid4()
    fields = {"magic": dedup.MAGIC, "write_id": write_id.bytes, "batch_id": 7, "partition": 3,
              "digest": bytes(range(12)), "occurrence": 2}
    header = dedup._LAYOUT.pack(*(fields[name] for name in dedup._FIELD_NAMES))
    assert dedup.record_id(header + b"data") == dedup.RecordId(write_id, 7, 3, bytes(range(12)), 2)
    assert dedup.strip(header + b"data") == b"data"
