"""conf/spark-defaults.conf.example, loaded as spark-submit loads a spark-defaults.conf: every key in
it, uncommented with a value other than its default, reaches what it configures.

The KPL properties and the producer options are read back from the live producer of a real write (its
KinesisProducerConfiguration, as handed to the KPL); the write options from the write's resolved
settings, and by what they do where the write shows it. The keys go in three files, because some
exclude others: static keys or a profile, the sink's daemon placement or the user's own; the third,
a role, is checked as resolved, not used (tests/sink/aws/test_api_credentials.py writes through a role assumed
from a loopback STS). The endpoint checks signatures, so files 1 and 2 prove their keys signed. The Proxy* keys
route the daemon through a loopback CONNECT proxy (``ProxyPassword`` is refused: the KPL would put it
on its daemon's command line).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from spark_kpl import dedup
from spark_kpl_testing.proxy import ConnectProxy
from spark_kpl_testing.sigv4 import Credentials

from example_job import REPO, submit_example_job

pytestmark = pytest.mark.uses_spark  # spark-submit of this Spark line

EXAMPLE = REPO / "conf" / "spark-defaults.conf.example"
ROWS = 300
MASKED = "***"
PROXY_USER = "conf-example-user"
#: The credentials files 1 and 2 sign with; the endpoint checks signatures, so it is told them.
STATIC_KEYS = Credentials("AKIDCONFEXAMPLE", "conf-example-secret", "conf-example-token")
PROFILE_KEYS = Credentials("AKIDPROFILE", "profile-secret")


def example_keys() -> Dict[str, str]:
    """Every key of the example, with the default it shows."""
    keys = {}
    for line in EXAMPLE.read_text().splitlines():
        found = re.fullmatch(r"# (spark\.kpl\.\S+) ?(.*)", line)
        if found:
            keys[found.group(1)] = found.group(2)
    return keys


def uncommented(values: Dict[str, str]) -> str:
    """The example's text with these keys uncommented at these values; every other key stays commented."""
    lines = []
    for line in EXAMPLE.read_text().splitlines():
        found = re.fullmatch(r"# (spark\.kpl\.\S+) ?(.*)", line)
        lines.append(f"{found.group(1)} {values[found.group(1)]}" if found and found.group(1) in values else line)
    missing = set(values) - set(example_keys())
    assert not missing, f"not in the example: {missing}"
    return "\n".join(lines) + "\n"


def reaching_the_endpoint(endpoint, stream) -> Dict[str, str]:
    """The keys every file needs for its write to reach the test endpoint (set to their test values)."""
    return {"spark.kpl.streamName": stream,
            **{f"spark.kpl.{name}": value for name, value in endpoint.kpl_options().items()}}


def producer_and_write_keys(endpoint, stream, tmp: Path, proxy: ConnectProxy) -> Dict[str, str]:
    """File 1: a real write with nearly every key, static credentials, the sink placing the daemon."""
    certs = tmp / "certs"
    certs.mkdir()
    (certs / "empty.pem").write_text("")
    return {
        **reaching_the_endpoint(endpoint, stream),
        "spark.kpl.queueLimit": "5000",
        "spark.kpl.queueLimitBytes": "33554432",
        "spark.kpl.ackTimeoutMs": "120000",
        "spark.kpl.nativeDir": str(tmp / "native"),
        "spark.kpl.producerIdleTimeoutMs": "45000",
        "spark.kpl.shutdownFlushTimeoutMs": "20000",
        "spark.kpl.failOnError": "false",
        "spark.kpl.deadLetterPath": str(tmp / "dead-letters"),
        "spark.kpl.maxRecordBytes": "200000",
        "spark.kpl.nullData": "skip",
        "spark.kpl.partitioner": "column",
        "spark.kpl.defaultPartition": "fallback-key",
        "spark.kpl.recordId": "prefix",
        "spark.kpl.writeName": "conf-example-copy",
        "spark.kpl.allowDuplicates": "true",
        "spark.kpl.awsAccessKeyId": STATIC_KEYS.access_key_id,
        "spark.kpl.awsSecretAccessKey": STATIC_KEYS.secret_access_key,
        "spark.kpl.awsSessionToken": STATIC_KEYS.session_token or "",
        "spark.kpl.AggregationEnabled": "false",
        "spark.kpl.AggregationMaxCount": "1000",
        "spark.kpl.AggregationMaxSize": "40000",
        "spark.kpl.CaCertFile": str(certs / "empty.pem"),
        "spark.kpl.CaCertPath": str(certs),
        "spark.kpl.CollectionMaxCount": "400",
        "spark.kpl.CollectionMaxSize": "4194304",
        "spark.kpl.ConnectTimeout": "7000",
        "spark.kpl.CredentialsRefreshDelay": "4000",
        "spark.kpl.DaemonHealthCheckTimeoutMs": "40000",
        "spark.kpl.DescribeStreamSummaryIntervalMs": "120000",
        "spark.kpl.EnableCoreDumps": "true",
        "spark.kpl.EnableDaemonHealthCheck": "true",
        # Its KPL default, but the sink turns it off unless the key is given: so seen only if it arrived.
        "spark.kpl.EnableOldestFutureTracker": "true",
        "spark.kpl.FailIfThrottled": "true",
        "spark.kpl.LogLevel": "warning",
        "spark.kpl.MaxConnections": "12",
        "spark.kpl.MinConnections": "2",
        "spark.kpl.MetricsGranularity": "stream",
        "spark.kpl.MetricsNamespace": "SparkKplConfExample",
        "spark.kpl.MetricsUploadDelay": "30000",
        "spark.kpl.RateLimit": "120",
        "spark.kpl.RecordDistributionStrategyDefault": "USER_PARTITION_KEY",  # the stream's: it places by key
        "spark.kpl.RecordMaxBufferedTime": "50",
        "spark.kpl.RecordTtl": "60000",
        "spark.kpl.RequestTimeout": "8000",
        "spark.kpl.ReturnUserRecordOnFailure": "true",
        "spark.kpl.StsEndpoint": "127.0.0.1",
        "spark.kpl.StsPort": str(endpoint.port),
        "spark.kpl.ThreadPoolSize": "8",
        "spark.kpl.ThreadingModel": "POOLED",
        "spark.kpl.UserRecordTimeoutInMillis": "90000",
    }


def own_daemon_and_profile_keys(endpoint, stream, tmp: Path, proxy: ConnectProxy) -> Dict[str, str]:
    """File 2: a real write with the user's own placed daemon and folder, a credentials profile, and
    the daemon's connections through a proxy, as a user."""
    placed = subprocess.run([sys.executable, "-m", "spark_kpl", "extract-native", "--dir", str(tmp / "placed")],
                            check=True, capture_output=True, text=True).stdout.strip()
    (tmp / "kpl-temp").mkdir(mode=0o700)
    return {
        **reaching_the_endpoint(endpoint, stream),
        "spark.kpl.NativeExecutable": placed,
        "spark.kpl.TempDirectory": str(tmp / "kpl-temp"),
        "spark.kpl.awsProfile": "conf-example",
        "spark.kpl.format": "json",
        "spark.kpl.ordering": "key",
        "spark.kpl.ProxyHost": "127.0.0.1",
        "spark.kpl.ProxyPort": str(proxy.port),
        "spark.kpl.ProxyUserName": PROXY_USER,
    }


def role_keys(endpoint, stream, tmp: Path, proxy: ConnectProxy) -> Dict[str, str]:
    """File 3, resolved only (tests/sink/aws/test_api_credentials.py assumes a role through a loopback STS)."""
    return {
        **reaching_the_endpoint(endpoint, stream),
        "spark.kpl.awsProfile": "conf-example",
        "spark.kpl.awsRoleArn": "arn:aws:iam::123456789012:role/conf-example",
        "spark.kpl.awsRoleSessionName": "conf-example-session",
        "spark.kpl.awsStsEndpoint": "https://127.0.0.1:1",
        # the role's account, the endpoint's region and the stream streamName names, as the sink requires
        "spark.kpl.streamArn": f"arn:aws:kinesis:{endpoint.region}:123456789012:stream/{stream}",
        # Resolved here: file 1 sets the KPL's own aggregation properties, which aggregation=executor refuses.
        "spark.kpl.aggregation": "kpl",
    }


def schema_registry_keys(endpoint, stream, tmp: Path, proxy: ConnectProxy) -> Dict[str, str]:
    """File 4, resolved only (tests/sink/api/test_schema_registry.py writes through a registry)."""
    return {
        **reaching_the_endpoint(endpoint, stream),
        "spark.kpl.format": "avro",
        "spark.kpl.schemaRegistryName": "conf-example-registry",
        "spark.kpl.schemaName": "conf-example-schema",
        "spark.kpl.schemaAutoRegistration": "true",
        "spark.kpl.schemaCompatibility": "full",
        "spark.kpl.schemaCompression": "zlib",
        "spark.kpl.schemaRegistryEndpoint": "http://127.0.0.1:1",
    }


FILES = {"producer and write": producer_and_write_keys,
         "own daemon, profile and proxy": own_daemon_and_profile_keys, "role": role_keys,
         "schema registry": schema_registry_keys}
RESOLVED_ONLY = {"role", "schema registry"}


@pytest.fixture(scope="module")
def proxy() -> Iterator[ConnectProxy]:
    with ConnectProxy() as running:
        yield running


def submit(properties: Path, tmp: Path, settings: str) -> Tuple[dict, dict]:
    """spark-submit of the example job with this properties file; its RESULT and SETTINGS lines."""
    profiles = tmp / "aws-credentials"
    profiles.write_text(f"[conf-example]\naws_access_key_id = {PROFILE_KEYS.access_key_id}\n"
                        f"aws_secret_access_key = {PROFILE_KEYS.secret_access_key}\n")
    env = {**os.environ, "AWS_SHARED_CREDENTIALS_FILE": str(profiles)}
    spark_args = ["--master", "local[2]", "--properties-file", str(properties),
                  "--conf", f"spark.pyspark.python={sys.executable}",
                  "--conf", f"spark.pyspark.driver.python={sys.executable}"]
    printed = submit_example_job(spark_args, ["--rows", str(ROWS), "--settings", settings], env)
    return printed.get("RESULT", {}), printed["SETTINGS"]


def test_the_files_cover_every_key_of_the_example_with_a_value_other_than_its_default(endpoint, proxy, tmp_path):
    covered: Dict[str, str] = {}
    for name, keys_of in FILES.items():
        folder = tmp_path / name.replace(" ", "-")
        folder.mkdir()
        covered.update(keys_of(endpoint, "s", folder, proxy))
    defaults = example_keys()
    assert set(covered) == set(defaults), "keep FILES in step with the example"
    same = [key for key, value in covered.items()
            if value == defaults[key] and key != "spark.kpl.EnableOldestFutureTracker"]
    assert not same, f"set to their defaults, so not proven to arrive: {same}"


@pytest.mark.parametrize("name", list(FILES))
def test_each_key_of_the_example_reaches_the_producer(endpoint, ep_stream, proxy, tmp_path, name):
    values = FILES[name](endpoint, ep_stream, tmp_path, proxy)
    endpoint.accept_credentials(STATIC_KEYS)
    endpoint.accept_credentials(PROFILE_KEYS)
    tunnels_before = proxy.tunnels
    properties = tmp_path / "spark-defaults.conf"
    # allowDuplicates shows by letting a write run with speculation on, which it otherwise refuses.
    speculation = "spark.speculation true\n" if "spark.kpl.allowDuplicates" in values else ""
    properties.write_text(uncommented(values) + speculation)
    result, settings = submit(properties, tmp_path, "only" if name in RESOLVED_ONLY else "after-write")

    if name in RESOLVED_ONLY:
        producer: Dict[str, str] = {}
    else:
        producers: List[Dict[str, str]] = settings["producers"]
        assert len(producers) == 1, producers
        producer = producers[0]
    wrong = {}
    for key, value in values.items():
        expected = MASKED if re.search(r"(?i)secret|token|accesskeyid|password", key) else value
        actual = producer.get(key, settings["write"].get(key))
        if actual != expected:
            wrong[key] = (expected, actual)
    assert not wrong, f"keys that did not arrive, as (set, seen): {wrong}"
    if name in RESOLVED_ONLY:
        return

    # What the write shows of them: every row arrived in the stream the file names (the job gives no
    # stream) with its key; speculation was allowed; file 1 put a record id before each (recordId),
    # naming the write as told (writeName), file 2 sent the rows as JSON (format) and placed no daemon
    # of its own (NativeExecutable).
    assert (result["records_written"], result["records_failed"]) == (ROWS, 0)
    records = endpoint.records(ep_stream)
    if name == "producer and write":
        assert {dedup.record_id(r.data).write_id for r in records} == {dedup.write_id("conf-example-copy")}
        payloads = [dedup.strip(r.data) for r in records]
        expected = [f"row-{i}".encode() for i in range(ROWS)]
        placed = list((tmp_path / "native").glob("*/kinesis_producer"))
        assert len(placed) == 1 and os.access(placed[0], os.X_OK), "the daemon is placed under nativeDir"
    else:
        assert proxy.tunnels > tunnels_before and not proxy.refused, "the daemon went through the proxy"
        payloads = [r.data for r in records]
        expected = [json.dumps({"data": f"row-{i}", "key": f"key-{i % 10}"}, separators=(",", ":")).encode()
                    for i in range(ROWS)]
    received = sorted(zip(payloads, (r.partition_key for r in records)))
    assert received == sorted(zip(expected, (f"key-{i % 10}" for i in range(ROWS))))
