"""The project's own Kinesis endpoint: the protocol by boto3, then the real KPL through the sink,
without faults, with faults it must retry through, and with faults it cannot survive."""

from __future__ import annotations

import hashlib
import socket
import ssl
import sys
import threading
import time
import traceback
from collections import Counter

import pytest
from botocore.exceptions import BotoCoreError, ClientError, ConnectionClosedError

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows
from spark_kpl_testing.endpoint import Faults, KinesisEndpoint
from spark_kpl_testing.endpoint.faults import ControlPlaneLimits
from spark_kpl_testing.polling import wait_for

#: The project's Kinesis endpoint, a test double: no Spark line changes it, so scripts/test.sh runs
#: it on the 4.1 line only.
pytestmark = pytest.mark.one_spark_line


def delivery(endpoint, stream, count):
    return compare(numbered_expected(count), ((r.data, r.partition_key) for r in endpoint.records(stream)))


def shard_of_key(key: str, shards: int) -> str:
    index = int.from_bytes(hashlib.md5(key.encode()).digest(), "big") // (2**128 // shards)
    return f"shardId-{min(index, shards - 1):012d}"


# -- the endpoint itself, by boto3 ----------------------------------------------------------------


def test_boto3_smoke(endpoint, ep_stream):
    client = endpoint.client()
    shards = client.list_shards(StreamName=ep_stream, ShardFilter={"Type": "AT_LATEST"})["Shards"]
    assert [s["ShardId"] for s in shards] == ["shardId-000000000000", "shardId-000000000001"]
    assert shards[1]["HashKeyRange"] == {"StartingHashKey": str(2**127),
                                         "EndingHashKey": str(2**128 - 1)}
    first = client.list_shards(StreamName=ep_stream, MaxResults=1)
    second = client.list_shards(NextToken=first["NextToken"])
    assert [s["ShardId"] for s in first["Shards"] + second["Shards"]] == [s["ShardId"] for s in shards]
    assert "NextToken" not in second

    entries = [{"Data": f"d{i}".encode(), "PartitionKey": f"k{i}"} for i in range(50)]
    entries.append({"Data": b"low", "PartitionKey": "x", "ExplicitHashKey": "0"})
    answer = client.put_records(StreamName=ep_stream, Records=entries)
    assert answer["FailedRecordCount"] == 0
    for entry, result in zip(entries[:50], answer["Records"]):
        assert result["ShardId"] == shard_of_key(entry["PartitionKey"], 2)
    assert answer["Records"][50]["ShardId"] == "shardId-000000000000"
    stored = {r.data: (r.partition_key, r.shard_id) for r in endpoint.records(ep_stream)}
    assert stored[b"d7"] == ("k7", shard_of_key("k7", 2)) and len(stored) == 51
    assert endpoint.records_received >= 51

    summary = client.describe_stream_summary(StreamName=ep_stream)["StreamDescriptionSummary"]
    assert (summary["StreamStatus"], summary["OpenShardCount"]) == ("ACTIVE", 2)
    with pytest.raises(client.exceptions.ResourceNotFoundException, match="no-such-stream"):
        client.put_records(StreamName="no-such-stream", Records=entries[:1])
    client.create_stream(StreamName=ep_stream + "-new", ShardCount=3)
    assert endpoint.streams[ep_stream + "-new"] == 3
    client.delete_stream(StreamName=ep_stream + "-new")
    assert ep_stream + "-new" not in endpoint.streams


def test_kinesis_records_are_kept_whole_and_taken_write_by_write(endpoint, ep_stream):
    client = endpoint.client()
    aggregate = b"\xf3\x89\x9a\xc2" + b"not a valid aggregate, so one user record"
    client.put_records(StreamName=ep_stream, Records=[{"Data": aggregate, "PartitionKey": "a"},
                                                      {"Data": b"plain", "PartitionKey": "b", "ExplicitHashKey": "0"}])

    first = endpoint.kinesis_records(ep_stream, take=True)
    client.put_record(StreamName=ep_stream, Data=b"later", PartitionKey="c")
    second = endpoint.kinesis_records(ep_stream)

    assert sorted((r.partition_key, r.data, r.size) for r in first) == [
        ("a", aggregate, len(aggregate) + 1), ("b", b"plain", 6)]
    assert next(r for r in first if r.partition_key == "b").shard_id == "shardId-000000000000"
    assert [(r.partition_key, r.data, r.shard_id) for r in second] == [("c", b"later", shard_of_key("c", 2))]
    assert [r.data for r in second[0].user_records()] == [b"later"]


def test_delete_stream_after_a_number_of_records(endpoint, ep_stream):
    client = endpoint.client()
    endpoint.delete_stream_after(ep_stream, 5)
    batch = [{"Data": b"x", "PartitionKey": f"k{i}"} for i in range(3)]
    client.put_records(StreamName=ep_stream, Records=batch)
    assert len(endpoint.records(ep_stream)) == 3  # below the mark: kept
    client.put_records(StreamName=ep_stream, Records=batch)  # stored, and the stream goes with it
    assert ep_stream not in endpoint.streams
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        client.put_records(StreamName=ep_stream, Records=batch)


def test_boto3_sees_each_fault(endpoint, ep_stream):
    client = endpoint.client()
    entries = [{"Data": b"x" * 100, "PartitionKey": f"k{i}"} for i in range(100)]

    endpoint.set_faults(shard_records_per_second=10)  # a full bucket: 10 records per shard
    codes = Counter(r.get("ErrorCode") for r in client.put_records(StreamName=ep_stream, Records=entries)["Records"])
    assert codes == {None: 20, "ProvisionedThroughputExceededException": 80}

    endpoint.set_faults(Faults(record_failure_rate=0.5))
    codes = Counter(r.get("ErrorCode") for r in client.put_records(StreamName=ep_stream, Records=entries)["Records"])
    assert codes == {None: 50, "InternalFailure": 50}  # an exact share

    endpoint.set_faults(Faults(http_error_rate=1.0))
    statuses = set()
    for _ in range(12):
        with pytest.raises(ClientError) as error:
            client.put_records(StreamName=ep_stream, Records=entries)
        statuses.add((error.value.response["ResponseMetadata"]["HTTPStatusCode"],
                      error.value.response["Error"]["Code"]))
    assert statuses == {(500, "InternalFailure"), (503, "ServiceUnavailable")}
    assert client.list_shards(StreamName=ep_stream)["Shards"]  # faults hit PutRecords only

    endpoint.set_faults(Faults(reset_rate=1.0))
    with pytest.raises(ConnectionClosedError):
        client.put_records(StreamName=ep_stream, Records=entries)
    endpoint.set_faults(Faults())
    endpoint.outage(30)
    with pytest.raises(BotoCoreError):  # the connection fails: no error response at all
        client.list_shards(StreamName=ep_stream)
    endpoint.end_outage()
    assert client.put_records(StreamName=ep_stream, Records=entries)["FailedRecordCount"] == 0

    errors = endpoint.call_errors
    assert errors["ConnectionReset"] >= 1 and errors["Outage"] >= 1
    assert endpoint.record_errors["ProvisionedThroughputExceededException"] >= 80


def refused_in_a_burst(call, count):
    """Make ``count`` calls back to back: the error answers of those refused, and the seconds they all took."""
    started, refused = time.monotonic(), []
    for _ in range(count):
        try:
            call()
        except ClientError as error:
            refused.append(error.response)
    return refused, time.monotonic() - started


def test_control_plane_limits_refuse_a_burst_past_them_as_kinesis_does():
    with KinesisEndpoint({"s": 1}, faults=Faults(control_plane_limits=True)) as own:
        client = own.client()
        described, described_in = refused_in_a_burst(lambda: client.describe_stream_summary(StreamName="s"), 40)
        listed, listed_in = refused_in_a_burst(client.list_streams, 10)
        # Each bucket holds one second of calls (20 and 5) and refills at that rate while the burst lasts.
        assert 20 - 20 * described_in - 1 <= len(described) <= 20, (len(described), described_in)
        assert 5 - 5 * listed_in - 1 <= len(listed) <= 5, (len(listed), listed_in)
        assert described and listed
        for answer in described + listed:
            assert answer["ResponseMetadata"]["HTTPStatusCode"] == 400
            assert answer["Error"]["Code"] == "LimitExceededException"
        # Kinesis names the call's stream, though the limit is the account's, and the account for a call naming none.
        assert described[0]["Error"]["Message"] == "Rate exceeded for stream s under account 000000000000."
        assert listed[0]["Error"]["Message"] == "Rate exceeded for account 000000000000."
        assert own.limits_exceeded == {"DescribeStreamSummary": len(described), "ListStreams": len(listed)}
        assert own.calls == {"DescribeStreamSummary": 40, "ListStreams": 10}
        assert own.stats()["limits_exceeded"] == own.limits_exceeded
        assert own.call_errors == {"LimitExceededException": len(described) + len(listed)}
        own.reset_counters()
        assert own.limits_exceeded == {}


def test_control_plane_limits_are_off_unless_asked_for(endpoint, ep_stream):
    assert not Faults().control_plane_limits and Faults.kinesis_limits().control_plane_limits
    assert not Faults.kinesis_limits(control_plane_limits=False).control_plane_limits
    endpoint.reset_counters()
    client = endpoint.client()
    refused, _ = refused_in_a_burst(lambda: client.describe_stream_summary(StreamName=ep_stream), 40)
    assert not refused and not endpoint.limits_exceeded
    assert endpoint.calls["DescribeStreamSummary"] == 40


def test_control_plane_limits_count_list_shards_per_stream_and_describes_per_account():
    limits, at = ControlPlaneLimits(), 100.0
    for stream in ("a", "b"):  # each stream its own 1,000 a second
        assert not any(limits.refuses("ListShards", stream, at) for _ in range(1000))
        assert limits.refuses("ListShards", stream, at)
    passed = sum(not limits.refuses("DescribeStreamSummary", stream, at) for stream in ("a", "b") * 20)
    assert passed == 20  # the account's 20, whichever streams the calls name
    assert sum(not limits.refuses("DescribeStreamSummary", "a", at + 0.5) for _ in range(20)) == 10  # half a second's
    assert not any(limits.refuses("PutRecords", "a", at) for _ in range(5000))  # a data-plane call: not limited here


def threads_left_by(before):
    """Endpoint threads started since ``before``, with their stacks: a port number can be reused,
    so a thread left by an earlier endpoint must not be taken for this one's."""
    frames = sys._current_frames()
    return {f"{t.name}:\n" + "".join(traceback.format_stack(frames[t.ident])) for t in threading.enumerate()
            if t not in before and t.name.startswith("kinesis-endpoint-") and t.ident in frames}


def test_stop_ends_every_thread_and_closes_the_port():
    before = set(threading.enumerate())
    ep = KinesisEndpoint({"s": 1}).start()
    port = ep.port
    ep.client().put_records(StreamName="s", Records=[{"Data": b"x", "PartitionKey": "k"}])
    idle = socket.create_connection(("127.0.0.1", port))  # a connection that never says a word
    try:
        ep.stop()
        ep.stop()
        left = threads_left_by(before)
        assert not left, "\n".join(left)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        idle.close()


def test_stop_joins_a_connection_that_ended_by_itself_and_is_still_closing(monkeypatch):
    """A client that hangs up just before stop() leaves a thread closing its socket: stop() must wait for it."""
    real_close = ssl.SSLSocket._real_close

    def slow_server_close(sock):
        if sock.server_side:
            time.sleep(0.3)
        real_close(sock)

    monkeypatch.setattr(ssl.SSLSocket, "_real_close", slow_server_close)
    before = set(threading.enumerate())
    ep = KinesisEndpoint({"s": 1}).start()
    try:
        client = ep.client()
        client.put_records(StreamName="s", Records=[{"Data": b"x", "PartitionKey": "k"}])
        client._endpoint.http_session.close()  # the client hangs up: the server's thread ends on its own
        time.sleep(0.1)
    finally:
        ep.stop()
    left = threads_left_by(before)
    assert not left, "\n".join(left)


# -- the real KPL through the sink ----------------------------------------------------------------


def test_split_and_merge_close_shards_and_route_to_their_children(endpoint, ep_stream):
    client = endpoint.client()
    key_in_shard_1 = next(f"k{i}" for i in range(1000) if shard_of_key(f"k{i}", 2) == "shardId-000000000001")
    client.put_records(StreamName=ep_stream, Records=[{"Data": b"before", "PartitionKey": key_in_shard_1}])
    middle = 3 * 2**126
    client.split_shard(StreamName=ep_stream, ShardToSplit="shardId-000000000001", NewStartingHashKey=str(middle))
    with pytest.raises(client.exceptions.InvalidArgumentException, match="not an open shard"):
        client.split_shard(StreamName=ep_stream, ShardToSplit="shardId-000000000001", NewStartingHashKey=str(middle))
    with pytest.raises(client.exceptions.InvalidArgumentException, match="not adjacent"):
        client.merge_shards(StreamName=ep_stream, ShardToMerge="shardId-000000000000",
                            AdjacentShardToMerge="shardId-000000000003")
    low, high = (client.put_records(StreamName=ep_stream, Records=[{"Data": b"x", "PartitionKey": "p",
                                                                    "ExplicitHashKey": str(h)}])["Records"][0]
                 for h in (middle - 1, middle))
    assert (low["ShardId"], high["ShardId"]) == ("shardId-000000000002", "shardId-000000000003")
    client.merge_shards(StreamName=ep_stream, ShardToMerge="shardId-000000000003",
                        AdjacentShardToMerge="shardId-000000000002")

    latest = client.list_shards(StreamName=ep_stream, ShardFilter={"Type": "AT_LATEST"})["Shards"]
    assert [s["ShardId"] for s in latest] == ["shardId-000000000000", "shardId-000000000004"]
    assert latest[1]["HashKeyRange"] == {"StartingHashKey": str(2**127), "EndingHashKey": str(2**128 - 1)}
    assert (latest[1]["ParentShardId"], latest[1]["AdjacentParentShardId"]) == (
        "shardId-000000000002", "shardId-000000000003")
    every = client.list_shards(StreamName=ep_stream)["Shards"]
    assert [s["ShardId"] for s in every] == [f"shardId-{i:012d}" for i in range(5)]
    assert "EndingSequenceNumber" in every[1]["SequenceNumberRange"]
    assert client.describe_stream_summary(StreamName=ep_stream)["StreamDescriptionSummary"]["OpenShardCount"] == 2
    assert endpoint.hash_ranges(ep_stream)["shardId-000000000002"] == (2**127, middle - 1)
    stored = {r.data: r.shard_id for r in endpoint.records(ep_stream)}
    assert stored[b"before"] == "shardId-000000000001", "a closed shard keeps its records"


def test_kpl_refreshes_its_shard_map_after_a_split_mid_write_and_delivers_every_record(spark, endpoint,
                                                                                      ep_stream):
    count = 20_000
    # The KPL's own aggregation and shard map (tests/sink/streams/test_aggregation.py splits under the sink's).
    options = {"aggregation": "kpl", **endpoint.kpl_options()}

    def listings() -> int:
        return sum(1 for r in endpoint.requests("ListShards") if r.get("StreamName") == ep_stream)

    # A first write has the daemon list the stream before the split. A new daemon may ask before the
    # JVM has handed it credentials, and that unsigned call is refused as Kinesis refuses it: the
    # daemon asks again a second later, which a short write may not outlast.
    spark_kpl.write(numbered_rows(spark, 10), ep_stream, partition_key="partitionKey", **options)
    wait_for(lambda: listings() >= 1, 30, "the daemon's first ListShards")
    listed_before_split = listings()
    endpoint.set_faults(Faults(latency=0.05))  # the write lasts long enough to be split under
    split = threading.Thread(target=lambda: (
        wait_for(lambda: len(endpoint.records(ep_stream)) >= count // 4, 60, "a quarter of the write"),
        endpoint.split_shard(ep_stream, "shardId-000000000000", 2**126)))
    split.start()
    spark_kpl.write(numbered_rows(spark, count), ep_stream, partition_key="partitionKey", **options)
    split.join()
    report = delivery(endpoint, ep_stream, count)
    assert report.at_least_once, report.summary()
    stored_in = Counter(r.shard_id for r in endpoint.records(ep_stream))
    assert stored_in["shardId-000000000002"] and stored_in["shardId-000000000003"], stored_in
    assert listings() > listed_before_split, "the daemon did not reload its shard map after the split"


def test_kpl_delivers_every_record_with_its_key(spark, endpoint, ep_stream):
    count = 20_000
    result = spark_kpl.write(numbered_rows(spark, count), ep_stream, partition_key="partitionKey",
                             **endpoint.kpl_options())
    assert (result.records_written, result.records_failed) == (count, 0)
    report = delivery(endpoint, ep_stream, count)
    assert report.exactly_once, report.summary()
    records = endpoint.records(ep_stream)
    assert all(r.shard_id == shard_of_key(r.partition_key, 2) for r in records)
    assert any(r.sub_sequence_number for r in records)  # the KPL aggregated
    # What the daemon asks for its shard map: the open shards only (a second later if its first call
    # went out before it had credentials, see the split test).
    asked = {"StreamName": ep_stream, "MaxResults": 1000, "ShardFilter": {"Type": "AT_LATEST"}}
    wait_for(lambda: asked in endpoint.requests("ListShards"), 30, "the daemon's ListShards",
             lambda: str(endpoint.requests("ListShards")))


def test_kpl_retries_through_throttling_partial_failures_errors_and_resets(spark, endpoint, ep_stream):
    count = 20_000
    endpoint.reset_counters()
    endpoint.set_faults(Faults(shard_bytes_per_second=60_000, record_failure_rate=0.2,
                               http_error_rate=0.2, reset_rate=0.1, latency=0.01))
    result = spark_kpl.write(numbered_rows(spark, count), ep_stream, partition_key="partitionKey",
                             **endpoint.kpl_options())
    assert (result.records_written, result.records_failed) == (count, 0)
    report = delivery(endpoint, ep_stream, count)
    assert report.at_least_once, report.summary()
    record_errors, call_errors = endpoint.record_errors, endpoint.call_errors
    assert record_errors.get("ProvisionedThroughputExceededException", 0) > 0, record_errors
    assert record_errors.get("InternalFailure", 0) > 0, record_errors
    assert call_errors.get("InternalFailure", 0) + call_errors.get("ServiceUnavailable", 0) > 0, call_errors
    assert call_errors.get("ConnectionReset", 0) > 0, call_errors


def test_outage_longer_than_record_ttl_fails_the_write_naming_stream_and_error(spark, endpoint, ep_stream):
    """Every PutRecords connection reset for longer than RecordTtl (the driver's look at the stream and
    the daemon's ListShards still answered, so the write gets as far as sending)."""
    endpoint.set_faults(reset_rate=1.0)
    try:
        with pytest.raises(Exception) as failure:
            spark_kpl.write(numbered_rows(spark, 200, 2), ep_stream, partition_key="partitionKey",
                            RecordTtl=3000, **endpoint.kpl_options())
        stored_in_the_outage = len(endpoint.records(ep_stream))
    finally:
        endpoint.set_faults(reset_rate=0.0)
    message = str(failure.value)
    assert f"stream '{ep_stream}'" in message
    assert "Expired" in message and "curlCode" in message  # the final error, and why
    assert endpoint.call_errors["ConnectionReset"] > 0
    # After it, the other task's records still in the KPL may arrive: a failed write's accepted rows may.
    assert stored_in_the_outage == 0


def test_unknown_stream_fails_the_write_naming_it(spark, endpoint):
    with pytest.raises(Exception) as failure:
        spark_kpl.write(numbered_rows(spark, 100, 1), "no-such-stream", partition_key="partitionKey",
                        RecordTtl=3000, **endpoint.kpl_options())
    message = str(failure.value)
    assert "stream 'no-such-stream'" in message
    assert "ResourceNotFoundException" in message


def test_call_faults_fall_only_on_the_streams_named():
    from spark_kpl_testing.endpoint.faults import FaultInjector

    faults = FaultInjector(Faults(latency=20.0, operations=frozenset({"ListShards"}), streams=frozenset({"slow"})))
    by_name = b'{"StreamName": "slow", "MaxResults": 1}'
    by_arn = b'{"StreamARN": "arn:aws:kinesis:us-east-1:000000000000:stream/slow"}'
    assert faults.call_fault("ListShards", by_name).latency == 20.0
    assert faults.call_fault("ListShards", by_arn).latency == 20.0
    assert faults.call_fault("ListShards", b'{"StreamName": "fast"}').latency == 0.0
    assert faults.call_fault("ListShards", b'{"NextToken": "t"}').latency == 0.0
    assert faults.call_fault("DescribeStreamSummary", by_name).latency == 0.0
