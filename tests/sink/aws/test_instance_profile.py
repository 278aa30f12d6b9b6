"""A write with no Region and no credential option, as on an EC2 instance with an instance profile:
the region and the role's credentials come from the instance's metadata (the harness's emulator),
and the credentials rotate during the write while the endpoint refuses expired ones. The same as on
EKS: the credentials from a web identity token, exchanged by the harness's STS, or from EKS Pod
Identity's agent.

The write runs in a process of its own inside a network namespace with loopback alone, so the real
metadata address is unreachable whatever a component ignores; it runs its own Spark (not the
``spark`` fixture), so scripts/test.sh runs it on one Spark line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: unshare -n needs root.
pytestmark = [pytest.mark.root_only,
              pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")]

JOB = Path(__file__).resolve().parent / "instance_profile_job.py"
ROWS = 20_000
#: New credentials every 20 s, each valid 25 s; tasks pace themselves so the write lasts 30 s or more.
ROTATE_EVERY, LIFETIME, PAUSE = 20.0, 25.0, 0.3


def run_in_own_network(*args: object) -> dict:
    """Runs the job under ``unshare -n`` (needs root) and returns what it reported."""
    run = subprocess.run(["unshare", "-n", sys.executable, str(JOB), *map(str, args)],
                         capture_output=True, text=True, timeout=240)
    results = [line[len("RESULT "):] for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and results, run.stderr[-4000:] + run.stdout[-2000:]
    return json.loads(results[0])


def test_region_and_rotating_credentials_from_the_instance_metadata() -> None:
    outcome = run_in_own_network(ROWS, ROTATE_EVERY, LIFETIME, PAUSE)
    print(json.dumps(outcome, indent=1))
    assert outcome["real_metadata_unreachable"], outcome
    assert "error" not in outcome, outcome["error"]
    assert outcome["records_written"] == ROWS, outcome
    assert outcome["exactly_once"], outcome["delivery"]
    assert outcome["seconds"] > ROTATE_EVERY, outcome
    # Credentials rotated mid-write, and the KPL's daemon signed with the new ones.
    assert outcome["put_records_session_tokens"] >= 2, outcome
    # The JVM asked the emulator for the region (the AWS SDK for Java reads the identity document).
    assert any(request.startswith("GET /latest/dynamic/instance-identity/document (aws-sdk-java/")
               for request in outcome["metadata_requests"]), outcome


def test_web_identity_credentials_as_on_eks() -> None:
    """AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, as EKS sets them for a service account: the JVM's
    default chain exchanges the token through STS (AWS_ENDPOINT_URL_STS: the harness's), grants that
    last 30 s, so the KPL signs with several during a write of 15 s or so."""
    rows = 4_000
    outcome = run_in_own_network(rows, ROTATE_EVERY, 30, 0.3, "web-identity")
    assert_every_row_once_signed_by_sts(outcome, rows, least_tokens=2)


def test_pod_identity_credentials_as_on_eks() -> None:
    """AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, as EKS Pod Identity
    sets them in a pod: the JVM's default chain asks the agent (the harness's, on loopback) with the
    token, and the KPL signs with the credentials it gave; the instance's own role is never asked for."""
    rows = 4_000
    outcome = run_in_own_network(rows, ROTATE_EVERY, LIFETIME, 0, "pod-identity")
    print(json.dumps(outcome, indent=1))
    assert "error" not in outcome, outcome["error"]
    assert outcome["records_written"] == rows and outcome["exactly_once"], outcome["delivery"]
    assert outcome["put_records_session_tokens"] == 1 and outcome["put_records_tokens_from_pod_identity"] == 1, outcome
    assert outcome["pod_identity_requests"] and all(authorized for _, authorized in outcome["pod_identity_requests"])
    assert outcome["credentials_issued"] == 0, "the instance profile's credentials were asked for"


def test_the_eks_recipe_runs_as_written() -> None:
    """docs/recipes/kubernetes.md's job, as it stands there, submitted in local mode (no Kubernetes here),
    with only the web identity variables IRSA sets and the endpoint's settings in
    $SPARK_CONF_DIR/spark-defaults.conf."""
    rows = 5_000  # the recipe's
    outcome = run_in_own_network(rows, ROTATE_EVERY, 30, 0, "eks-recipe")
    assert_every_row_once_signed_by_sts(outcome, rows, least_tokens=1)


def assert_every_row_once_signed_by_sts(outcome: dict, rows: int, least_tokens: int) -> None:
    """The write succeeded with every row once, every PutRecords signed with a session token the
    harness's STS issued, and at least ``least_tokens`` of them over the write."""
    print(json.dumps(outcome, indent=1))
    assert "error" not in outcome, outcome["error"]
    assert outcome["records_written"] == rows, outcome
    assert outcome["exactly_once"], outcome["delivery"]
    assert outcome["put_records_tokens_from_sts"] == outcome["put_records_session_tokens"] >= least_tokens, outcome
