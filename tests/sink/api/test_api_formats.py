"""Serialization: the whole row as JSON (Spark's own writer, as to_json), Avro's missing-module error,
and write_rdd for RDDs of Python objects."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F

import spark_kpl


def people(spark):
    return spark.createDataFrame(
        [(1, "ann", 1.5, ["a", "b"], ("x", 7)), (2, "bob", None, [], ("y", 8))],
        "id long, name string, score double, tags array<string>, address struct<city:string,zip:int>").coalesce(1)


def test_format_json_sends_every_non_key_column_as_to_json_does(spark, kinesis, stream):
    rows = people(spark).withColumn("partitionKey", F.col("name")).withColumn("ts", F.timestamp_seconds(F.lit(0)))
    rows.write.format("kpl").option("streamName", stream).option("format", "json") \
        .options(**kinesis.kpl_options()).mode("append").save()
    expected = {r.name: r.json.encode() for r in rows.select(
        F.col("partitionKey").alias("name"), F.to_json(F.struct("id", "name", "score", "tags", "address", "ts"))
        .alias("json")).collect()}
    assert {r.partition_key: r.data for r in kinesis.read_records(stream)} == expected
    assert json.loads(expected["bob"]) == {"id": 2, "name": "bob", "tags": [], "address": {"city": "y", "zip": 8},
                                           "ts": json.loads(expected["bob"])["ts"]}


def test_python_write_with_format_json_and_a_key_expression(spark, kinesis, stream):
    result = spark_kpl.write(people(spark), stream, format="json", partition_key=F.upper("name"),
                             **kinesis.kpl_options())
    assert result.records_written == 2
    sent = {r.partition_key: json.loads(r.data) for r in kinesis.read_records(stream)}
    assert sent["ANN"]["name"] == "ann" and sent["BOB"]["address"] == {"city": "y", "zip": 8}
    assert "partitionKey" not in sent["ANN"]


def decode_avro(spark, payload_schema, data):
    """Avro's own reader, with the schema Spark's SchemaConverters derives (as to_avro does)."""
    jvm = spark.sparkContext._jvm
    schema = jvm.org.apache.spark.sql.avro.SchemaConverters.toAvroType(
        spark._jsparkSession.parseDataType(payload_schema.json()), False, "topLevelRecord", "")
    decoder = jvm.org.apache.avro.io.DecoderFactory.get().binaryDecoder(data, None)
    return json.loads(jvm.org.apache.avro.generic.GenericDatumReader(schema).read(None, decoder).toString())


def avro_module_loaded(spark):
    """Spark 4 carries its Avro serializer in spark-sql; Spark 3.5 only with the spark-avro package."""
    try:
        spark.sparkContext._jvm.java.lang.Class.forName("org.apache.spark.sql.avro.AvroSerializer")
        return True
    except Exception:
        return False


def test_format_avro_without_the_avro_module_names_the_package(spark, kinesis, stream):
    if avro_module_loaded(spark):
        pytest.skip("this Spark has its Avro module")
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"format=avro needs Spark's Avro module.*org.apache.spark:spark-avro_2\.1[23]:3"):
        spark_kpl.write(people(spark), stream, format="avro", **kinesis.kpl_options())


def test_format_avro_serializes_the_row_as_spark_does(spark, kinesis, stream):
    if not avro_module_loaded(spark):
        pytest.skip("this Spark has no Avro module (the test above checks the error)")
    rows = people(spark).withColumn("partitionKey", F.col("name"))
    spark_kpl.write(rows, stream, format="avro", **kinesis.kpl_options())
    payload_schema = people(spark).schema
    sent = {r.partition_key: decode_avro(spark, payload_schema, r.data) for r in kinesis.read_records(stream)}
    assert sent["ann"] == {"id": 1, "name": "ann", "score": 1.5, "tags": ["a", "b"],
                           "address": {"city": "x", "zip": 7}}
    assert sent["bob"]["score"] is None and sent["bob"]["tags"] == []


def test_data_argument_with_format_json_is_refused(spark, stream):
    with pytest.raises(ValueError, match="data is for format='raw'"):
        spark_kpl.write(people(spark), stream, data="name", format="json")


def test_write_rdd_with_a_serializer_and_key_function(spark, kinesis, stream):
    events = spark.sparkContext.parallelize([{"user": f"u{i % 3}", "n": i} for i in range(30)], 3)
    result = spark_kpl.write_rdd(events, stream, serializer=lambda e: json.dumps(e).encode(),
                                 partition_key=lambda e: e["user"], **kinesis.kpl_options())
    assert result.records_written == 30
    sent = [(r.partition_key, json.loads(r.data)) for r in kinesis.read_records(stream)]
    assert sorted((k, e["n"]) for k, e in sent) == sorted((f"u{i % 3}", i) for i in range(30))
    assert all(k == e["user"] for k, e in sent)


def test_write_rdd_passes_bytes_and_str_through(spark, kinesis, stream):
    items = spark.sparkContext.parallelize([b"raw", "text", bytearray(b"more")], 2)
    assert spark_kpl.write_rdd(items, stream, **kinesis.kpl_options()).records_written == 3
    assert sorted(r.data for r in kinesis.read_records(stream)) == [b"more", b"raw", b"text"]


def test_write_rdd_checks_its_arguments_before_any_job():
    with pytest.raises(TypeError, match="rdd must be a pyspark RDD, got list"):
        spark_kpl.write_rdd(["not", "an", "rdd"], "stream")


def test_write_rdd_names_the_record_it_cannot_serialize(spark, kinesis, stream):
    items = spark.sparkContext.parallelize(["ok", "ok", 42], 1)
    with pytest.raises(Exception, match="record 2 of RDD partition 0: is a int; without a serializer"):
        spark_kpl.write_rdd(items, stream, **kinesis.kpl_options())


def test_a_bad_format_names_the_choices(spark, kinesis, stream):
    with pytest.raises(spark_kpl.WriteRefused,
                       match=r"'format' \(spark.kpl.format\): expected one of raw, json, avro, got 'xml'"):
        spark_kpl.write(spark.range(1).select(F.lit("x").alias("data")), stream, format="xml",
                        **kinesis.kpl_options())
