"""Glue Schema Registry: records a KCL consumer reads and the registry's own deserializer decodes back to the
rows, aggregated and not, from a batch write and a streaming query; the schema looked up or registered once on
the driver, and a schema the registry does not have refused there, before any record is sent. The registry is
moto's server on loopback; the writes run in a driver of their own (schema_registry_job.py) that has the
optional registry artifact on its classpath."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pyspark
import pytest

import spark_kpl
from spark_kpl_testing.connect import ConnectServer, connect_unavailable
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.env import loopback_env, python_path
from spark_kpl_testing.schema_registry import GlueRegistry

from conftest import TEST_SPARK_CONF

REPO = Path(__file__).resolve().parents[3]
JOB = Path(__file__).resolve().parent / "schema_registry_job.py"
#: build.gradle's registryCheck: the registry's deserializer and the KCL's de-aggregator, apart from the sink.
READER_CLASSPATH = f"{REPO / 'build/classes/java/registryCheck'}:{REPO / 'build/registry-check/lib'}/*"
ROWS = 600
#: The rows written: each with its key and three columns the records carry in Avro.
COLUMNS = ["id", "concat('n', id) AS name", "id / 2 AS score", "concat('k', id % 17) AS partitionKey"]
REGISTRY = "spark-kpl-tests"
ABSENT_SCHEMA = "never-registered"
#: Port 1 of loopback, where nothing listens.
UNREACHABLE = "http://127.0.0.1:1"

pytestmark = pytest.mark.skipif(int(pyspark.__version__.split(".")[0]) < 4,
                                reason="format=avro needs Spark's Avro module, in spark-sql from Spark 4 on")


@pytest.fixture(scope="module")
def registry() -> Iterator[GlueRegistry]:
    with GlueRegistry() as own:
        yield own


@pytest.fixture(scope="module")
def refusing_registry() -> Iterator[GlueRegistry]:
    with GlueRegistry(refusing_access=True) as own:
        yield own


@pytest.fixture(scope="module")
def glue_jar() -> Path:
    jar = REPO / "build" / "libs" / f"spark-kpl-glue-{spark_kpl.__version__}.jar"
    assert jar.is_file(), "scripts/build.sh glueJar builds the registry artifact"
    return jar


@pytest.fixture(scope="module")
def writes(endpoint: KinesisEndpoint, registry: GlueRegistry, refusing_registry: GlueRegistry, glue_jar: Path,
           tmp_path_factory) -> Dict[str, dict]:
    """Each write of the job by its stream, with the error it raised (or None); run once for the module."""
    folder = tmp_path_factory.mktemp("schema-registry")
    registry_options = {"format": "avro", "schemaRegistryName": REGISTRY, "schemaRegistryEndpoint": registry.url}
    first = "gsr-aggregated"
    specs: Dict[str, Dict[str, Any]] = {
        # Auto registration creates the registry and the schema, named after the stream.
        first: {"mode": "batch", "options": {**registry_options, "schemaAutoRegistration": "true"}},
        # The schema the first write registered, looked up by its definition; rows deflated after the header.
        "gsr-unaggregated": {"mode": "batch", "options": {**registry_options, "schemaName": first,
                                                          "AggregationEnabled": "false", "schemaCompression": "zlib"}},
        # Read back from parquet, the columns are nullable: another schema, registered under the stream's name.
        "gsr-streaming": {"mode": "stream", "options": {**registry_options, "schemaAutoRegistration": "true"},
                          "input": str(folder / "input"), "checkpoint": str(folder / "checkpoint")},
        "gsr-not-registered": {"mode": "batch", "options": {**registry_options, "schemaName": ABSENT_SCHEMA}},
        "gsr-access-refused": {"mode": "batch", "options": {**registry_options, "schemaAutoRegistration": "true",
                                                            "schemaRegistryEndpoint": refusing_registry.url}},
        "gsr-unreachable": {"mode": "batch", "options": {**registry_options, "schemaRegistryEndpoint": UNREACHABLE}},
    }
    for stream in specs:
        endpoint.create_stream(stream, shards=2)
    job = {"kpl": endpoint.kpl_options(), "rows": ROWS, "columns": COLUMNS, "glue_jar": str(glue_jar),
           "writes": [{**spec, "options": {**spec["options"], "streamName": stream}} for stream, spec in specs.items()]}
    run = subprocess.run([sys.executable, str(JOB), json.dumps(job)], capture_output=True, text=True, timeout=600,
                         env={**loopback_env(), "PYTHONPATH": python_path()})
    results = [json.loads(line[len("RESULT "):]) for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(results) == len(specs), f"the job ended early ({run.returncode}):\n{run.stdout}\n{run.stderr[-5000:]}"
    return dict(zip(specs, results))


def read_by_registry(endpoint: KinesisEndpoint, registry: GlueRegistry, stream: str) -> List[Tuple[str, dict]]:
    """What a KCL consumer with the registry's deserializer reads: each row's key and decoded columns."""
    stored = "".join(f"{record.partition_key}\t{base64.b64encode(record.data).decode()}\n"
                     for record in endpoint.kinesis_records(stream))
    reader = ["java", "-cp", READER_CLASSPATH, "sparkkpl.registrycheck.RegistryReadMain", registry.url, registry.region]
    run = subprocess.run(reader, input=stored, capture_output=True, text=True, timeout=300, env=loopback_env())
    assert run.returncode == 0, run.stderr[-5000:]
    return [(key, json.loads(record)) for key, record in (line.split("\t", 1) for line in run.stdout.splitlines())]


def expected_rows() -> List[Tuple[str, dict]]:
    return [(f"k{i % 17}", {"id": i, "name": f"n{i}", "score": i / 2}) for i in range(ROWS)]


def by_id(rows: List[Tuple[str, dict]]) -> List[Tuple[str, dict]]:
    return sorted(rows, key=lambda row: row[1]["id"])


@pytest.mark.parametrize("stream", ["gsr-aggregated", "gsr-unaggregated", "gsr-streaming"])
def test_the_registry_deserializer_reads_back_every_row_once_with_its_key(writes, endpoint, registry, stream):
    assert writes[stream]["error"] is None, writes[stream]["error"]
    assert by_id(read_by_registry(endpoint, registry, stream)) == by_id(expected_rows())


def test_aggregated_rows_travel_in_aggregates_and_unaggregated_ones_alone(writes, endpoint):
    assert len(endpoint.kinesis_records("gsr-aggregated")) < ROWS / 10
    assert len(endpoint.kinesis_records("gsr-unaggregated")) == ROWS


def test_auto_registration_registers_the_schema_once_under_the_stream_name(writes, registry):
    schema = registry.client().get_schema(SchemaId={"RegistryName": REGISTRY, "SchemaName": "gsr-aggregated"})
    assert (schema["DataFormat"], schema["LatestSchemaVersion"]) == ("AVRO", 1)


def test_a_schema_not_registered_fails_on_the_driver_naming_schema_and_registry(writes, endpoint):
    error = writes["gsr-not-registered"]["error"]
    assert f"schema '{ABSENT_SCHEMA}' in Glue Schema Registry '{REGISTRY}'" in error
    assert "schemaAutoRegistration" in error
    assert endpoint.kinesis_records("gsr-not-registered") == []


def test_a_registry_that_refuses_access_fails_the_write_on_the_driver_naming_schema_and_registry(writes, endpoint):
    error = writes["gsr-access-refused"]["error"]
    assert f"refused access to the schema 'gsr-access-refused' in Glue Schema Registry '{REGISTRY}'" in error
    assert endpoint.kinesis_records("gsr-access-refused") == []


def test_a_registry_out_of_reach_fails_the_write_on_the_driver_naming_the_endpoint(writes, endpoint):
    error = writes["gsr-unreachable"]["error"]
    assert (f"could not be reached for the schema 'gsr-unreachable' in Glue Schema Registry '{REGISTRY}' "
            f"(endpoint {UNREACHABLE}, option schemaRegistryEndpoint)") in error
    assert endpoint.kinesis_records("gsr-unreachable") == []


@pytest.fixture(scope="module")
def connect_spark_with_registry(glue_jar: Path):
    """A Spark Connect client session of a server that has the registry artifact beside the sink's jar."""
    from pyspark.sql import SparkSession

    reason = connect_unavailable()
    if reason:
        pytest.skip(reason)
    with ConnectServer(f"{spark_kpl.jar_path()},{glue_jar}", conf=TEST_SPARK_CONF) as server:
        session = SparkSession.builder.remote(server.url).getOrCreate()
        yield session
        session.stop()
        # PySpark marks the process as a Connect client for good; later modules' sessions are classic.
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


def test_a_spark_connect_write_is_read_back_by_the_registry_deserializer(connect_spark_with_registry, endpoint,
                                                                          registry, writes):
    endpoint.create_stream("gsr-connect", shards=2)
    connect_spark_with_registry.range(ROWS, numPartitions=4).selectExpr(*COLUMNS).write.format("kpl") \
        .option("streamName", "gsr-connect").option("format", "avro").option("schemaRegistryName", REGISTRY) \
        .option("schemaName", "gsr-aggregated").option("schemaRegistryEndpoint", registry.url) \
        .options(**endpoint.kpl_options()).mode("append").save()
    assert by_id(read_by_registry(endpoint, registry, "gsr-connect")) == by_id(expected_rows())
