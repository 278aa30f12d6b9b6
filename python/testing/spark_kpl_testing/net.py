"""The harness's networking: everything it serves or calls is on 127.0.0.1, and only there."""

from __future__ import annotations

import socket
import subprocess
import urllib.request
import warnings
from typing import Any, Dict, List, Optional

from spark_kpl_testing.env import LOOPBACK_AWS_ENV
from spark_kpl_testing.polling import wait_for

__all__ = ["LOOPBACK", "NO_PROXY", "free_port", "free_ports", "ignore_unverified_tls", "kinesis_client", "kpl_options",
           "listening", "wait_listening"]

LOOPBACK = "127.0.0.1"
#: An opener that ignores the caller's http_proxy: a request to 127.0.0.1 must not go through it.
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_ports(count: int) -> List[int]:
    """Distinct ports free on 127.0.0.1 right now (all held open together while the OS picks them, so
    parallel runs do not collide; another process may still take one before the caller binds it)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((LOOPBACK, 0))
            sockets.append(s)
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def free_port() -> int:
    """One port free on 127.0.0.1 right now."""
    return free_ports(1)[0]


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=1):
            return True
    except OSError:
        return False


def wait_listening(port: int, timeout: float, what: str, process: "Optional[subprocess.Popen]" = None) -> None:
    """Waits until ``what`` accepts connections on 127.0.0.1:``port``; fails at once if ``process``, the
    one that should listen, exits first."""

    def up() -> bool:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} (pid {process.pid}) exited with {process.returncode}")
        return listening(port)

    wait_for(up, timeout, f"{what} to listen on {LOOPBACK}:{port}", every=0.25)


def kpl_options(region: str, port: int) -> Dict[str, str]:
    """KPL properties that keep every connection of the KPL here: Kinesis and CloudWatch (the KPL's Java
    side builds a CloudWatch client even with ``MetricsLevel=none``) on 127.0.0.1:``port``, TLS unverified
    (the harness's certificates are self-signed), and ``Region`` given, so that the daemon asks no
    metadata service for one."""
    return {
        "Region": region,
        "KinesisEndpoint": LOOPBACK,
        "KinesisPort": str(port),
        "VerifyCertificate": "false",
        "MetricsLevel": "none",
        "CloudwatchEndpoint": LOOPBACK,
        "CloudwatchPort": str(port),
    }


def ignore_unverified_tls() -> None:
    """Silences urllib3's warning for HTTPS to 127.0.0.1 unverified (the harness's self-signed endpoints).
    Called before each use, not once: pytest resets the warning filters for every test."""
    warnings.filterwarnings("ignore", message=r"Unverified HTTPS request is being made to host '127\.0\.0\.1'")


def kinesis_client(endpoint_url: str, region: str, attempts: int, read_timeout: float) -> Any:
    """A boto3 Kinesis client for a loopback endpoint: the loopback keys and an explicit region, so
    botocore looks nowhere else for them; no proxy; TLS unverified; ``attempts`` tries per call."""
    import boto3
    from botocore.config import Config

    ignore_unverified_tls()
    session = boto3.session.Session(aws_access_key_id=LOOPBACK_AWS_ENV["AWS_ACCESS_KEY_ID"],
                                    aws_secret_access_key=LOOPBACK_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
                                    region_name=region)
    return session.client("kinesis", endpoint_url=endpoint_url, verify=False,
                          config=Config(retries={"total_max_attempts": attempts, "mode": "standard"},
                                        connect_timeout=5, read_timeout=read_timeout, proxies={}))
