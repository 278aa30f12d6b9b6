"""Several writes in one application: each runs with its own settings and commits its own records.

The rule (docs/backpressure.md, "Several writes in one application"): writes share an executor's producer only when
every KPL property and every producer-shaping option (queue limits, credentials, nativeDir, idle and
shutdown timeouts) is equal; streaming queries keep their committed batches per query.
"""

from __future__ import annotations

import json
import os
import time

from pyspark.sql import functions as F

import spark_kpl
from spark_kpl_testing.delivery import compare, numbered_expected, numbered_rows, write_in_background


def test_two_writes_with_different_queue_caps_run_on_their_own_producers(spark, kinesis, stream):
    small_cap, rows = 300, 6_000
    second_rows = numbered_rows(spark, rows, partitions=2).select(
        F.concat(F.lit("second-"), "data").alias("data"), "partitionKey")
    first, first_outcome = write_in_background(spark, numbered_rows(spark, rows, partitions=2), stream,
                                               queueLimit=str(small_cap), **kinesis.kpl_options())
    second, second_outcome = write_in_background(spark, second_rows, stream, **kinesis.kpl_options())
    queue_limits = set()
    while first.is_alive() or second.is_alive():  # local[2]: the writes' tasks may take turns
        queue_limits |= {int(s["spark.kpl.queueLimit"]) for s in spark_kpl.producer_settings(spark)}
        time.sleep(0.1)

    assert "error" not in first_outcome and "error" not in second_outcome, (first_outcome, second_outcome)
    assert queue_limits == {small_cap, 100_000}, "one producer per queue limit"
    small, default = first_outcome["result"], second_outcome["result"]
    assert small.records_written == default.records_written == rows
    assert small.peak_outstanding_records <= small_cap, "the capped write never ran on the other's producer"
    expected = {**numbered_expected(rows), **{b"second-" + d: k for d, k in numbered_expected(rows).items()}}
    report = compare(expected, ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.exactly_once, report.summary()


def add_json_file(folder, name, values):
    temporary = os.path.join(folder, f".{name}.tmp")
    with open(temporary, "w") as out:
        out.writelines(json.dumps({"data": value}) + "\n" for value in values)
    os.rename(temporary, os.path.join(folder, f"{name}.json"))


def test_two_streaming_queries_each_commit_their_own_batches(spark, kinesis, stream, tmp_path):
    """Both queries run batches 0, 1, 2 into one stream at once: a sink that kept committed batches
    per stream or per batch id, not per query, would skip the second query's batches as replays."""
    queries = {}
    for name in ("a", "b"):
        source = tmp_path / f"source-{name}"
        source.mkdir()
        for batch in range(3):
            add_json_file(str(source), f"part-{batch}", [f"{name}-{batch}-{i}" for i in range(50)])
        queries[name] = (spark.readStream.schema("data string").option("maxFilesPerTrigger", 1).json(str(source))
                         .select(F.col("data"), F.lit(name).alias("partitionKey"))
                         .writeStream.format("kpl").option("checkpointLocation", str(tmp_path / f"checkpoint-{name}"))
                         .option("streamName", stream).options(**kinesis.kpl_options())
                         .trigger(availableNow=True).start())
    for query in queries.values():
        query.awaitTermination(300)
        assert query.exception() is None

    expected = {f"{name}-{batch}-{i}".encode(): name for name in queries for batch in range(3) for i in range(50)}
    report = compare(expected, ((r.data, r.partition_key) for r in kinesis.read_records(stream)))
    assert report.exactly_once, report.summary()
    for name, query in queries.items():
        written = sum(int(p["sink"].get("numOutputRows", -1)) for p in query.recentProgress)
        assert written == 150, f"query {name} reported {written} rows written"
