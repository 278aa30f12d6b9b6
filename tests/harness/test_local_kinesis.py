"""LocalKinesis: starts and stops kinesis-mock cleanly, and reads back exactly what producers wrote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest
from aws_kinesis_agg.aggregator import AggRecord

from spark_kpl_testing.kinesis import (
    KINESIS_MOCK_ENV_VAR,
    LocalKinesis,
    LocalKinesisError,
    find_kinesis_mock,
)
from spark_kpl_testing.processes import alive, wait_gone
from spark_kpl_testing.records import Record

# The hash key ranges of a 2-shard stream split at 2**127 - 1.
FIRST_SHARD_KEY = "0"
SECOND_SHARD_KEY = str(2**127 + 5)


@pytest.fixture(scope="module")
def kinesis() -> Iterator[LocalKinesis]:
    with LocalKinesis({"two-shards": 2, "empty": 1}) as k:
        yield k


def test_start_serves_initial_streams_and_stop_leaves_nothing_behind() -> None:
    local = LocalKinesis({"orders": 3})
    with local:
        pid = local.pid
        assert pid is not None and alive(pid)
        summary = local.client().describe_stream_summary(StreamName="orders")["StreamDescriptionSummary"]
        assert (summary["StreamStatus"], summary["OpenShardCount"]) == ("ACTIVE", 3)
        # The TLS endpoint (the one the KPL uses) answers too.
        assert "orders" in local.client(tls=True).list_streams()["StreamNames"]
        assert local.endpoint_url == f"https://127.0.0.1:{local.tls_port}"
        assert local.tls_port != local.plain_port
        workdir = local._workdir
        assert workdir is not None and workdir.is_dir()

    assert not alive(pid)
    assert not workdir.exists()
    assert local.pid is None
    with pytest.raises(LocalKinesisError, match="not running"):
        _ = local.tls_port
    local.stop()  # idempotent


def test_kpl_options_point_every_connection_at_loopback(kinesis: LocalKinesis) -> None:
    options = kinesis.kpl_options()
    assert options == {
        "Region": "us-east-1",
        "KinesisEndpoint": "127.0.0.1",
        "KinesisPort": str(kinesis.tls_port),
        "VerifyCertificate": "false",
        "MetricsLevel": "none",
        "CloudwatchEndpoint": "127.0.0.1",
        "CloudwatchPort": str(kinesis.tls_port),
        "RequestTimeout": "30000",
    }


def _aggregate(user_records: List[Tuple[str, bytes, Optional[str]]]) -> Tuple[str, bytes]:
    """A KPL-format aggregated record (partition key, data) built by aws-kinesis-agg."""
    agg = AggRecord()
    for key, data, hash_key in user_records:
        assert agg.add_user_record(key, data, hash_key)
    partition_key, _, data = agg.get_contents()
    return partition_key, data


def test_read_records_returns_user_records_with_their_own_keys(kinesis: LocalKinesis) -> None:
    # Mixed explicit hash keys inside one aggregate, and a partition key used twice.
    inner = [
        ("agg-a", b"inner-1", "42"),
        ("agg-b", b"inner-2", None),
        ("agg-a", b"inner-3", None),
        ("agg-c", b"inner-4", "7"),
    ]
    agg_key, agg_data = _aggregate(inner)
    assert agg_data[:4] == b"\xf3\x89\x9a\xc2"
    # Starts with the KPL magic but carries no valid digest: plain user data, returned as written.
    lookalike = b"\xf3\x89\x9a\xc2" + b"not an aggregate" * 4
    plain = [(f"key-{i}", f"value-{i}".encode()) for i in range(50)]

    client = kinesis.client()
    entries = [{"PartitionKey": k, "Data": d} for k, d in plain]
    entries.append({"PartitionKey": "to-first", "Data": b"first", "ExplicitHashKey": FIRST_SHARD_KEY})
    entries.append({"PartitionKey": "to-second", "Data": b"second", "ExplicitHashKey": SECOND_SHARD_KEY})
    entries.append({"PartitionKey": "lookalike", "Data": lookalike})
    entries.append({"PartitionKey": agg_key, "Data": agg_data, "ExplicitHashKey": SECOND_SHARD_KEY})
    assert client.put_records(StreamName="two-shards", Records=entries)["FailedRecordCount"] == 0

    records = kinesis.read_records("two-shards")

    assert all(isinstance(r, Record) for r in records)
    expected: List[Tuple[str, bytes, Optional[str]]] = [(k, d, None) for k, d in plain]
    expected += [("to-first", b"first", None), ("to-second", b"second", None), ("lookalike", lookalike, None)]
    expected += inner
    assert Counter((r.partition_key, r.data, r.explicit_hash_key) for r in records) == Counter(expected)

    by_key = {r.partition_key: r for r in records}
    assert by_key["to-first"].shard_id == "shardId-000000000000"
    assert by_key["to-second"].shard_id == "shardId-000000000001"
    assert by_key["key-0"].sub_sequence_number is None  # stored on its own

    # The aggregate's user records share its sequence number and keep their order.
    unpacked = [r for r in records if r.sub_sequence_number is not None]
    assert [(r.data, r.sub_sequence_number) for r in unpacked] == [(d, i) for i, (_, d, _) in enumerate(inner)]
    assert {(r.shard_id, r.sequence_number) for r in unpacked} == {
        ("shardId-000000000001", unpacked[0].sequence_number)
    }
    # Within a shard, records come back in the order they were written.
    first_shard = [r.partition_key for r in records if r.shard_id == "shardId-000000000000"]
    assert [k for k in first_shard if k.startswith("key-")] == sorted(
        (k for k in first_shard if k.startswith("key-")), key=lambda k: int(k[4:])
    )


def test_read_records_of_an_empty_stream(kinesis: LocalKinesis) -> None:
    assert kinesis.read_records("empty") == []


def test_create_and_delete_stream(kinesis: LocalKinesis) -> None:
    client = kinesis.client()
    kinesis.create_stream("scratch", shards=3)
    assert len(client.list_shards(StreamName="scratch")["Shards"]) == 3
    client.put_record(StreamName="scratch", PartitionKey="p", Data=b"old")

    kinesis.delete_stream("scratch")
    assert "scratch" not in client.list_streams()["StreamNames"]
    kinesis.create_stream("scratch")  # the name is free again, and the stream starts empty
    assert kinesis.read_records("scratch") == []
    kinesis.delete_stream("scratch")


def test_missing_kinesis_mock_names_both_places(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "main.js"
    monkeypatch.setenv(KINESIS_MOCK_ENV_VAR, str(missing))
    with pytest.raises(FileNotFoundError) as excinfo:
        find_kinesis_mock()
    message = str(excinfo.value)
    assert KINESIS_MOCK_ENV_VAR in message and str(missing) in message
    assert str(Path(".tools") / "node_modules" / "kinesis-local" / "main.js") in message
    assert "kinesis-local@0.6.2" in message

    local = LocalKinesis()
    with pytest.raises(FileNotFoundError):
        local.start()
    assert local.pid is None


def test_start_failure_reports_the_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    broken = tmp_path / "main.js"
    broken.write_text('console.error("kinesis-mock cannot start: disk on fire"); process.exit(3);\n')
    (tmp_path / "server.json").write_text("{}")
    monkeypatch.setenv(KINESIS_MOCK_ENV_VAR, str(broken))
    local = LocalKinesis()
    with pytest.raises(LocalKinesisError, match="(?s)exited with code 3.*disk on fire"):
        local.start()
    assert local.pid is None


_ORPHAN_SCRIPT = """
import os, signal, sys
from spark_kpl_testing.kinesis import LocalKinesis
k = LocalKinesis().start()
print(k.pid, k._workdir, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no stop()
"""


def test_mock_exits_when_its_python_process_is_killed() -> None:
    """A SIGKILLed test run must not leave kinesis-mock listening and using CPU."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, "-c", _ORPHAN_SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    pid_text, workdir = done.stdout.split()
    pid = int(pid_text)
    try:
        assert wait_gone(pid, timeout=10), "kinesis-mock outlived the process that started it"
        assert not Path(workdir).exists()
    finally:
        if alive(pid):  # only the process this test caused to exist
            os.kill(pid, signal.SIGKILL)

