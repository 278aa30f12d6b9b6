"""spark_kpl.dedup on headers built here byte by byte, as docs/api.md lays them out: no Spark, no JVM."""

from __future__ import annotations

import struct
import subprocess
import sys
import uuid

import pytest

from spark_kpl import dedup

WRITE = uuid.UUID("12345678-1234-5678-1234-567812345678")


def header_v2(batch: int, partition: int, digest: bytes, occurrence: int) -> bytes:
    return struct.pack(">4s16sqi12si", b"SKR\x02", WRITE.bytes, batch, partition, digest, occurrence)


def test_record_id_reads_each_field_of_the_48_byte_header() -> None:
    data = header_v2(7, 3, b"d" * 12, 2) + b"payload"

    assert len(header_v2(0, 0, b"\0" * 12, 0)) == dedup.HEADER_SIZE == 48
    assert dedup.record_id(data) == dedup.RecordId(WRITE, 7, 3, b"d" * 12, 2)
    assert dedup.strip(data) == b"payload"
    assert dedup.has_record_id(data)


def test_copies_of_a_record_share_an_id_and_other_records_do_not() -> None:
    first, copy = header_v2(1, 0, b"a" * 12, 0) + b"x", header_v2(1, 0, b"a" * 12, 0) + b"x"
    twin = header_v2(1, 0, b"a" * 12, 1) + b"x"  # an identical record later in the same task

    assert len({dedup.record_id(first), dedup.record_id(copy), dedup.record_id(twin)}) == 2


def test_a_version_1_header_is_read_with_its_row_number_as_content() -> None:
    data = struct.pack(">4s16sqiq", b"SKR\x01", WRITE.bytes, 5, 1, 42) + b"old"

    assert dedup.record_id(data) == dedup.RecordId(WRITE, 5, 1, (42).to_bytes(8, "big"), 0)
    assert dedup.strip(data) == b"old"


@pytest.mark.parametrize("data", [b"plain data without a header", b"SKR\x02 too short", b""])
def test_data_without_a_header_is_refused_naming_the_option(data: bytes) -> None:
    assert not dedup.has_record_id(data)
    with pytest.raises(ValueError, match="recordId='prefix'"):
        dedup.record_id(data)
    with pytest.raises(ValueError, match="recordId='prefix'"):
        dedup.strip(data)


def test_write_id_is_the_same_uuid_on_every_run_of_a_named_write() -> None:
    nightly = dedup.write_id("nightly-export")

    assert nightly == dedup.write_id("nightly-export") and nightly.version == 3
    assert nightly != dedup.write_id("nightly-export-2")


def test_a_header_of_a_newer_version_is_refused_naming_it_not_taken_for_data() -> None:
    """docs/versioning.md: a reader cannot know where a header of an unknown version ends, so it says which
    version it met and what to do, rather than call it data without a header."""
    data = b"SKR\x03" + bytes(60)
    with pytest.raises(ValueError, match=r"record-id header of version 3, which this spark_kpl \(\S+\) cannot "
                                         r"read \(it reads versions 1, 2\): upgrade spark_kpl"):
        dedup.record_id(data)
    with pytest.raises(ValueError, match="version 3"):
        dedup.strip(data)


def test_a_consumer_without_pyspark_imports_dedup_and_the_package():
    """A KCL application or a Lambda drops copies with spark_kpl.dedup where no pyspark is installed; the
    package's names that need pyspark load only when used."""
    blocked = "import sys; sys.modules['pyspark'] = None; "  # `import pyspark` then raises ImportError
    consumer = blocked + "import spark_kpl, spark_kpl.dedup; print(spark_kpl.__version__)"
    run = subprocess.run([sys.executable, "-c", consumer], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    refused = subprocess.run([sys.executable, "-c", blocked + "import spark_kpl; spark_kpl.write"],
                             capture_output=True, text=True, timeout=60)
    assert "ImportError" in refused.stderr or "ModuleNotFoundError" in refused.stderr, refused.stderr
