"""A write as on an EC2 instance: no Region option, no credential option, the region and rotating
role credentials from the instance's metadata (the harness's emulator); or, as on EKS, the
credentials from a web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN) that the harness's STS
exchanges for a role's; or, as with EKS Pod Identity, from the pod's credentials agent
(AWS_CONTAINER_CREDENTIALS_FULL_URI, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE). Runs as its own process
in a network namespace with loopback alone (``unshare -n``), started by tests/sink/aws/test_instance_profile.py,
so that nothing can reach the real metadata address whatever a component ignores. Prints one line,
``RESULT <json>``.

Arguments: rows, rotate_every seconds, lifetime seconds, pause (seconds a task waits per 100 rows,
so that the write outlasts a rotation), and the mode: ``instance-profile`` (the default),
``web-identity`` (then grants from STS last ``lifetime`` seconds), ``pod-identity``, or
``eks-recipe``: web identity through docs/recipes/kubernetes.md's job, as it stands there, submitted
in local mode (rows and pause are the recipe's then).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_kpl_testing.delivery import compare, numbered_expected
from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.env import instance_metadata_env
from spark_kpl_testing.imds import InstanceMetadata, PodIdentityAgent
from spark_kpl_testing.net import LOOPBACK
from spark_kpl_testing.processes import stop_process_tree
from spark_kpl_testing.sts import StsEndpoint

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_REAL_METADATA = ("169.254.169.254", 80)
STREAM = "events"
ROLE = "arn:aws:iam::000000000000:role/spark-kpl-pod"
PARTITIONS = 20


def loopback_up() -> None:
    """A new network namespace has ``lo`` down; bring it up (what ``ip link set lo up`` does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        flags = struct.unpack("16sh", fcntl.ioctl(sock, _SIOCGIFFLAGS, struct.pack("16sh", b"lo", 0)))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | _IFF_UP))


def real_metadata_unreachable() -> bool:
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(_REAL_METADATA) in (errno.ENETUNREACH, errno.EHOSTUNREACH)


def paced_rows(spark, count: int, pause: float):
    """:func:`~spark_kpl_testing.delivery.numbered_rows`, each task waiting ``pause`` seconds every 100."""
    per_partition = count // PARTITIONS

    def partition(index: int):
        for i in range(index * per_partition, (index + 1) * per_partition):
            if i % 100 == 0:
                time.sleep(pause)
            yield f"row-{i}".encode(), f"key-{i % 101}"

    return spark.sparkContext.parallelize(range(PARTITIONS), PARTITIONS).flatMap(partition) \
        .toDF("data binary, partitionKey string")


#: How the suite submits the recipe's job: in local mode, as no Kubernetes runs here.
LOCAL_SUBMIT = 'spark-submit --master "local[2]" --jars "$(python -m spark_kpl jar-path)" eks_job.py'


def eks_recipe() -> tuple:
    """docs/recipes/kubernetes.md's job, as written there, and the command that submits it here."""
    recipe = (Path(__file__).resolve().parents[3] / "docs" / "recipes" / "kubernetes.md").read_text()
    (job,) = re.findall(r"<!-- run: job -->\n```python\n(.*?)```", recipe, re.S)
    return job, LOCAL_SUBMIT


def run_eks_recipe(kinesis: KinesisEndpoint, env: dict, scratch: Path, outcome: dict) -> None:
    """The recipe's command in ``scratch``, the endpoint's settings in $SPARK_CONF_DIR/spark-defaults.conf."""
    job, command = eks_recipe()
    (scratch / "eks_job.py").write_text(job)
    conf = scratch / "conf"
    conf.mkdir()
    settings = {**{key: value for key, value in kinesis.kpl_options().items() if key != "Region"},
                "producerIdleTimeoutMs": "2000"}
    (conf / "spark-defaults.conf").write_text(
        "".join(f"spark.kpl.{key} {value}\n" for key, value in settings.items())
        + f"spark.ui.enabled false\nspark.driver.host {LOOPBACK}\nspark.driver.bindAddress {LOOPBACK}\n")
    venv_bin = str(Path(sys.executable).parent)
    run_env = {**env, "SPARK_CONF_DIR": str(conf), "PATH": venv_bin + os.pathsep + env.get("PATH", "")}
    started = time.monotonic()
    submit = subprocess.Popen(["bash", "-euo", "pipefail", "-c", command], cwd=scratch, env=run_env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = submit.communicate(timeout=200)
    finally:  # the command's whole process group, KPL daemons included, by its id
        try:
            os.killpg(submit.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    outcome["seconds"] = round(time.monotonic() - started, 1)
    written = re.findall(r"^written (\d+)$", stdout, re.M)
    if submit.returncode != 0 or not written:
        outcome["error"] = f"exit {submit.returncode}: {stderr[-3000:]}"
    else:
        outcome["records_written"] = int(written[0])


def main(rows: int, rotate_every: float, lifetime: float, pause: float, mode: str) -> dict:
    loopback_up()
    outcome: dict = {"real_metadata_unreachable": real_metadata_unreachable()}
    scratch = Path(tempfile.mkdtemp(prefix="instance-profile-job-"))
    token_file = scratch / "web-identity-token"
    token_file.write_text("eks-service-account-token")
    pod_token_file = scratch / "pod-identity-token"
    pod_token_file.write_text("eks-pod-identity-token")
    with KinesisEndpoint({STREAM: 2}) as kinesis, \
            InstanceMetadata(kinesis, rotate_every=rotate_every, lifetime=lifetime) as metadata, \
            StsEndpoint(kinesis, roles=[ROLE], web_identity_tokens=[token_file.read_text()],
                        max_duration=int(lifetime)) as sts, \
            PodIdentityAgent(kinesis, pod_token_file.read_text()) as agent:
        env = instance_metadata_env(metadata.url, scratch)
        if mode in ("web-identity", "eks-recipe"):
            env.update(AWS_WEB_IDENTITY_TOKEN_FILE=str(token_file), AWS_ROLE_ARN=ROLE, AWS_ENDPOINT_URL_STS=sts.url)
        if mode == "pod-identity":
            env.update(AWS_CONTAINER_CREDENTIALS_FULL_URI=agent.credentials_uri,
                       AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=str(pod_token_file))
        if mode == "eks-recipe":
            run_eks_recipe(kinesis, env, scratch, outcome)
            report = compare(numbered_expected(rows), ((r.data, r.partition_key) for r in kinesis.records(STREAM)))
            outcome.update(delivery=report.summary(), exactly_once=report.exactly_once,
                           put_records_session_tokens=len(kinesis.session_tokens_used("PutRecords")),
                           put_records_tokens_from_sts=len(set(kinesis.session_tokens_used("PutRecords"))
                                                           & {granted.session_token for granted in sts.issued}))
            return outcome
        os.environ.clear()
        os.environ.update(env)
        from pyspark import SparkContext

        import spark_kpl
        from spark_kpl_testing.session import spark_session

        spark = spark_session("instance-profile", log_level=None, loopback=False,
                              conf={"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK,
                                    "spark.kpl.producerIdleTimeoutMs": "2000"})
        options = {key: value for key, value in kinesis.kpl_options().items() if key != "Region"}
        started = time.monotonic()
        try:
            result = spark_kpl.write(paced_rows(spark, rows, pause), STREAM, partition_key="partitionKey", **options)
            outcome["records_written"] = result.records_written
        except Exception as error:  # reported to the test, which shows it
            outcome["error"] = f"{type(error).__name__}: {error}; cause: {error.__cause__}"[:3000]
        outcome["seconds"] = round(time.monotonic() - started, 1)
        spark.stop()
        driver_jvm = getattr(SparkContext._gateway, "proc", None)
        if driver_jvm is not None:  # stopped with the daemons it ran, by pid
            stop_process_tree(driver_jvm, timeout=30)
        report = compare(numbered_expected(rows), ((r.data, r.partition_key) for r in kinesis.records(STREAM)))
        outcome.update(delivery=report.summary(), exactly_once=report.exactly_once,
                       credentials_issued=len(metadata.issued),
                       put_records_session_tokens=len(kinesis.session_tokens_used("PutRecords")),
                       put_records_tokens_from_sts=len(set(kinesis.session_tokens_used("PutRecords"))
                                                       & {granted.session_token for granted in sts.issued}),
                       put_records_tokens_from_pod_identity=len(set(kinesis.session_tokens_used("PutRecords"))
                                                                & {agent.credentials.session_token}),
                       pod_identity_requests=agent.requests,
                       expired_rejected=kinesis.call_errors.get("ExpiredTokenException", 0),
                       call_errors=kinesis.call_errors, metadata_requests=sorted(set(metadata.requests)))
    return outcome


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]),
                                      sys.argv[5] if len(sys.argv) > 5 else "instance-profile")))
