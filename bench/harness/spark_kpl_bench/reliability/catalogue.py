"""The reliability scenarios, as data: each one's name, set-up, fault and expected outcome."""

from __future__ import annotations

import re
from typing import List

from spark_kpl_bench.reliability.faults import (
    DAEMON_KILL,
    AttemptInterruption,
    DeadLettersTurnedIntoFile,
    ProcessFaults,
    StreamDeletion,
    StreamRecreation,
    merge_the_two_shards,
    rows_write_then_create_again,
    split_first_shard,
    write_then_create_again,
    write_then_switch_to_auto,
)
from spark_kpl_bench.reliability.scenario import CLUSTER_WORKERS, OVERSIZED_BYTES, SLOW_STREAM, Scenario
from spark_kpl_bench.reliability.writes import LOOK_CALLS
from spark_kpl_testing.endpoint import Faults

#: How long the endpoint holds each look call at the slow stream: longer than the other queries' writes.
SLOW_CALLS_S = 20.0


def scenarios(count: int, processes: ProcessFaults) -> List[Scenario]:
    quarter = count // 4
    kill_note = ("SIGKILL to the KPL daemon once 25% arrived; 100 records/s per shard, unaggregated, so "
                 "most records are in flight; failOnError=false")
    daemon_kill = {**DAEMON_KILL, "nativeDir": str(processes.native_dir)}
    unwritable = DeadLettersTurnedIntoFile()
    return [
        Scenario("no faults"),
        Scenario("per-shard throttling", Faults(shard_records_per_second=5),
                 note="5 Kinesis records/s per shard (an aggregate counts as one; the KPL wants ~10/s)"),
        Scenario("partial PutRecords failures", Faults(record_failure_rate=0.3),
                 note="30% of records in each call fail with InternalFailure"),
        Scenario("5xx on a share of calls", Faults(http_error_rate=0.3), note="30% of PutRecords calls: 500/503"),
        Scenario("connection resets", Faults(reset_rate=0.3), note="30% of PutRecords calls reset, nothing stored"),
        Scenario("added latency", Faults(latency=0.5), note="+0.5 s per PutRecords call"),
        Scenario("outage shorter than RecordTtl", Faults(latency=0.2),
                 during=lambda ep: ep.outage(5), trigger_after=quarter,
                 note="5 s outage mid-write (after the first 25% arrived), RecordTtl 30 s; +0.2 s latency"),
        Scenario("outage longer than RecordTtl, failOnError=true", Faults(latency=0.2),
                 {"RecordTtl": "3000", "failOnError": "true"},
                 during=lambda ep: ep.outage(6), trigger_after=quarter,
                 note="6 s outage mid-write, RecordTtl 3 s: attempts fail until it is over, then Spark's task retry"),
        Scenario("unknown stream", options={"RecordTtl": "3000"}, stream="no-such-stream",
                 expect="error: .*ResourceNotFoundException",
                 note="refused on the driver, before any task: its look at the stream (DescribeStreamSummary) "
                      "finds none"),
        Scenario("shard split mid-write", during=lambda ep: split_first_shard(ep), trigger_after=quarter,
                 note="the stream's first shard split in two once 25% arrived"),
        Scenario("shard merge mid-write", during=lambda ep: merge_the_two_shards(ep), trigger_after=quarter,
                 note="the stream's two shards merged into one once 25% arrived"),
        Scenario("shard split while a streaming query runs", during=lambda ep: split_first_shard(ep),
                 trigger_after=quarter + count // 8, streaming=True,
                 note="the stream's first shard split in two mid micro-batch 1 of 4"),
        Scenario("shard merge while a streaming query runs", during=lambda ep: merge_the_two_shards(ep),
                 trigger_after=quarter + count // 8, streaming=True,
                 note="the stream's two shards merged into one mid micro-batch 1 of 4"),
        Scenario("stream created again between writes", before=write_then_create_again,
                 note="a write of 1,000 rows in the same session, then the stream deleted and created again under "
                      "its name with 4 shards (shard ids start over, with other hash ranges)"),
        Scenario("stream created again between writes, named by rows", before=rows_write_then_create_again,
                 named_by_rows=True,
                 note="as above, both writes' rows naming the stream (target_stream, no stream option): the "
                      "executors describe it for each write, and list the new stream's shards"),
        Scenario("stream created again between writes, aggregation=kpl", options={"aggregation": "kpl"},
                 before=write_then_create_again,
                 note="as above, the stream named by the write, the KPL aggregating (its daemon keeps a shard map "
                      "per stream name: a producer whose daemon met the old stream is replaced)"),
        Scenario("stream created again during a streaming query", during=StreamRecreation(),
                 trigger_after=quarter + count // 8, streaming=True, expect=r"success after [1-9]\d* restart",
                 note="the stream deleted mid micro-batch 1 of 4 (out: what it held then, and the new stream's), "
                      "created again 1 s later under its name with 4 shards; RecordTtl 30 s. The micro-batch fails "
                      "at its commit (StreamRecreated: a KCL consumer may miss aggregates built for the old "
                      "stream's shards), and the query, restarted from its checkpoint, sends it again"),
        Scenario("stream switched to AUTO between writes", before=write_then_switch_to_auto, on_demand=True,
                 note="an on-demand stream: a write of 1,000 rows (aggregated), then its record distribution "
                      "strategy switched to AUTO (Kinesis places records itself, ignoring keys)"),
        Scenario("ListShards throttled", Faults(limit_exceeded_rate=0.5, operations=frozenset({"ListShards"})),
                 note="half the ListShards calls (the sink's and the KPL daemon's) refused with "
                      "LimitExceededException"),
        Scenario("KPL daemon killed, failOnError=false, batch write", Faults(shard_records_per_second=100),
                 daemon_kill, during=processes.kill_daemon, trigger_after=quarter, note=kill_note),
        Scenario("KPL daemon killed, failOnError=false, streaming", Faults(shard_records_per_second=100),
                 daemon_kill, during=processes.kill_daemon, trigger_after=quarter + count // 8, streaming=True,
                 note=kill_note.replace("25%", "37% (mid micro-batch 1 of 4)")
                 + "; the query is restarted from its checkpoint if it fails"),
        Scenario("executor JVM killed, standalone cluster", Faults(shard_records_per_second=100),
                 {"AggregationEnabled": "false", "RecordTtl": "120000"}, during=processes.kill_executor,
                 trigger_after=quarter, cluster=True,
                 note=f"{CLUSTER_WORKERS} workers, an executor JVM each; SIGKILL to one executor once 25% "
                      "arrived; 100 records/s per shard, unaggregated, so most records are in flight"),
        Scenario("cancelled job", during=processes.cancel_jobs, trigger_after=quarter,
                 expect="error: .*cancel", note="SparkContext.cancelAllJobs() once 25% arrived"),
        Scenario("streaming driver killed between the sink's commit and Spark's, restarted", driver_killed=True,
                 expect=r"success: .* ran batch (\d+) again \([1-9]\d* rows\), re-sent 0 of them",
                 note="the query's driver (its own process, local mode) gets SIGKILL the instant the sink has "
                      "committed micro-batch 1 or later (of 4) and Spark has not logged it; the query is then "
                      "restarted from its checkpoint"),
        Scenario("stream deleted mid-write", options={"RecordTtl": "3000"}, during=StreamDeletion(),
                 trigger_after=quarter, expect="error: .*ResourceNotFoundException",
                 note="the stream deleted once 25% arrived, and with it what it stored (out: what it held then; "
                      "the endpoint paused 0.5 s to count it); RecordTtl 3 s"),
        Scenario("endpoint down when the write starts, then back", during=lambda ep: ep.outage(8),
                 note="every connection and call reset for the write's first 8 s, then served; RecordTtl 30 s"),
        Scenario("per-shard quotas held through the write, at the defaults", Faults.kinesis_limits(0.01),
                 {"AggregationMaxSize": "4096"},
                 note="Kinesis's per-shard limits scaled to 1% (10 records/s and 10 KiB/s per shard), with 4 KiB "
                      "aggregates, so the write offers about twice what the stream takes for its whole length; "
                      "RecordTtl 30 s, the queue limits and their budget at their defaults"),
        Scenario("per-shard quotas held through a streaming query, at the defaults", Faults.kinesis_limits(0.01),
                 {"AggregationMaxSize": "4096"}, streaming=True,
                 note="as above, through a streaming query of 4 micro-batches: no batch may fail"),
        Scenario("a hot key on a stream held at its per-shard quotas, at the defaults", Faults.kinesis_limits(0.01),
                 {"AggregationMaxSize": "4096"}, shards=8, hot_key_every=2,
                 note="every second row has one partition key, the others spread over 8 shards held at Kinesis's "
                      "limits scaled to 1% (10 records/s and 10 KiB/s per shard), with 4 KiB aggregates: the hot "
                      "shard takes over half the rows; RecordTtl 30 s, the queue limits and their budgets at their "
                      "defaults"),
        Scenario("8 producers at once on one shard held at its quotas, at the defaults", Faults.kinesis_limits(0.1),
                 shards=1, producers=8, master="local[8]", row_bytes=1000,
                 note="8 writes at once (local[8]), each of 250 rows of 1 KB with a producer and daemon of its own, "
                      "into one shard held at Kinesis's limits scaled to 10% (100 records/s and 100 KiB/s): 2 MB, "
                      "about 20 s of the shard; RecordTtl 30 s, the queue limits and their budgets at their defaults"),
        Scenario("8 producers at once on one shard held at its quotas, keys the sink chooses",
                 Faults.kinesis_limits(0.1), shards=1, producers=8, master="local[8]", row_bytes=1000,
                 keys_by_sink=True,
                 note="as above, the rows without partition keys: the sink chooses a random one for each and "
                      "aggregates them, so every producer's records share one shard's budget"),
        Scenario("3 streaming queries beside a 4th held in its look at a slow stream",
                 Faults(latency=SLOW_CALLS_S, streams=frozenset({SLOW_STREAM}), operations=frozenset(LOOK_CALLS)),
                 beside_a_slow_query=3, expect=r"success: .* had committed 0 micro-batches",
                 note=f"one driver: a query into a stream whose DescribeStreamSummary and ListShards the endpoint "
                      f"holds {SLOW_CALLS_S:.0f} s each (throttled, or far away), then 3 queries of a third of the "
                      "rows each, 4 micro-batches apiece, into the scenario's stream; the slow one is stopped when "
                      "they end"),
        Scenario("control-plane calls at Kinesis's limits, rows naming the stream, standalone cluster",
                 Faults(control_plane_limits=True), named_by_rows=True, cluster=True,
                 note="the endpoint refuses calls past Kinesis's limit on each control-plane operation "
                      "(DescribeStreamSummary 20 a second per account, ListShards 1,000 a second per stream) "
                      f"with LimitExceededException; {CLUSTER_WORKERS} executor JVMs write rows naming the stream, "
                      "which the driver describes for both (the sink's plugin)"),
        Scenario("a task attempt interrupted while its shared listing runs",
                 Faults(latency=3.0, operations=frozenset({"ListShards"})), during=AttemptInterruption(processes),
                 expect=r"success: 2000 written, 0 failed; task attempt \d+ interrupted",
                 note="each ListShards held 3 s by the endpoint; once the tasks' listing (one for the JVM's "
                      "tasks, the others wait for it) is under way, one task attempt is killed by interrupting "
                      "its thread, as Spark kills a speculative attempt whose task's other attempt won; Spark "
                      "runs that task again"),
        Scenario("per-shard quotas held longer than RecordTtl, failOnError=false",
                 Faults.kinesis_limits(0.01), {"failOnError": "false", "RecordTtl": "2000",
                                               "AggregationMaxSize": "4096"},
                 note="Kinesis's per-shard limits scaled to 1% (10 records/s and 10 KiB/s per shard), with 4 KiB "
                      "aggregates (AggregationMaxSize=4096), so this write stays over them for seconds; "
                      "RecordTtl 2 s; deadLetterPath set"),
        Scenario("dead-letter path unwritable mid-write", options={"failOnError": "false",
                                                                   "deadLetterPath": str(unwritable.path)},
                 during=unwritable, trigger_after=quarter, oversized_rows=True,
                 expect=f"error: .*{re.escape(str(unwritable.path))}",
                 note="every 100th row over maxRecordBytes, failOnError=false: those go to deadLetterPath, "
                      "whose folder is replaced by a file once 25% arrived"),
        Scenario("records over the maximum record size", oversized_rows=True,
                 expect=r"error: Row \d+ of Spark partition \d+, column 'data': the record has \d+ bytes",
                 note=f"every 100th row has {OVERSIZED_BYTES} bytes of data: over maxRecordBytes (1 MiB, "
                      "data plus partition key, the stream's default maximum)"),
        Scenario("records over the maximum record size, failOnError=false", options={"failOnError": "false"},
                 oversized_rows=True,
                 note=f"every 100th row has {OVERSIZED_BYTES} bytes of data; failOnError=false, deadLetterPath set"),
        Scenario("aggregates at the record size limit", options={"AggregationMaxSize": str((1 << 20) - 1)},
                 row_bytes=20_000,
                 note="rows of 20,000 bytes and AggregationMaxSize=1048575, the most the sink takes (1048576 is "
                      "refused: Kinesis's 1 MiB counts the aggregate's partition key 'a' with its data), so "
                      "aggregates fill up to the limit"),
        Scenario("credentials rejected by Kinesis",
                 options={"awsAccessKeyId": "AKIDUNKNOWN", "awsSecretAccessKey": "unknown", "RecordTtl": "3000"},
                 expect="error: .*UnrecognizedClientException",
                 note="static keys the endpoint does not know (it checks each request's SigV4 signature, as Kinesis "
                      "does): refused on the driver, whose look at the stream is signed with them"),
    ]

