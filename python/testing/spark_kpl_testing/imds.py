"""A loopback EC2 instance-metadata service (IMDSv2) for tests that run as on an EC2 instance: the
region and an instance profile's role credentials, which expire and rotate.

Only what the AWS SDKs ask for: ``PUT /latest/api/token`` (a session token, required by every ``GET``
in its ``X-aws-ec2-metadata-token`` header, as IMDSv2 requires), the region
(``/latest/meta-data/placement/region`` and the instance identity document), and the role's
credentials (``/latest/meta-data/iam/security-credentials/`` names the role, ``.../<role>`` gives
them). New credentials are issued every ``rotate_every`` seconds and each set expires ``lifetime``
seconds after it was issued; each set is made known, with its expiry, to the Kinesis endpoint, which
then refuses it once expired. Processes reach it through ``AWS_EC2_METADATA_SERVICE_ENDPOINT``
(:attr:`InstanceMetadata.url`). Plain HTTP on 127.0.0.1, as the real service is plain HTTP.

Beside it, :class:`PodIdentityAgent`: the EKS Pod Identity agent, which a pod's SDK asks for its role's
credentials through ``AWS_CONTAINER_CREDENTIALS_FULL_URI``, with the token of
``AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`` in its ``Authorization`` header.
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import secrets
import threading
from typing import Any, Dict, List, Optional, Tuple

from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.endpoint.errors import ACCOUNT
from spark_kpl_testing.lifecycle import LoopbackHttpService
from spark_kpl_testing.net import LOOPBACK
from spark_kpl_testing.sigv4 import Credentials

__all__ = ["InstanceMetadata", "PodIdentityAgent"]

_TOKEN_TTL_HEADER = "X-aws-ec2-metadata-token-ttl-seconds"
_TOKEN_HEADER = "X-aws-ec2-metadata-token"
_CREDENTIALS_PATH = "/latest/meta-data/iam/security-credentials/"
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    """Logs nothing; answers with :meth:`_respond`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (quiet)
        pass

    def _respond(self, status: int, content_type: str, body: str, headers: Optional[dict] = None) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _MetadataHandler(_QuietHandler):
    def _metadata(self) -> InstanceMetadata:
        return self.server.service  # type: ignore[attr-defined, no-any-return]

    def _described(self) -> str:
        return f"{self.command} {self.path} ({self.headers.get('User-Agent', 'no User-Agent')})"

    def do_PUT(self) -> None:
        metadata = self._metadata()
        metadata.requests.append(self._described())
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        ttl = self.headers.get(_TOKEN_TTL_HEADER, "")
        if self.path != "/latest/api/token":
            self._respond(404, "text/plain", "Not Found")
        elif not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            self._respond(400, "text/plain", "Bad Request")
        else:
            self._respond(200, "text/plain", metadata._new_token(int(ttl)), {_TOKEN_TTL_HEADER: ttl})

    def do_GET(self) -> None:
        metadata = self._metadata()
        metadata.requests.append(self._described())
        if not metadata._token_valid(self.headers.get(_TOKEN_HEADER)):
            self._respond(401, "text/plain", "Unauthorized")  # IMDSv2 only: no answer without a session token
            return
        answer = metadata.answer(self.path)
        if answer is None:
            self._respond(404, "text/plain", "Not Found")
        else:
            self._respond(200, *answer)


class InstanceMetadata(LoopbackHttpService):
    """The metadata of an instance in ``kinesis``'s region whose instance profile has the role
    ``role``; :attr:`url` for ``AWS_EC2_METADATA_SERVICE_ENDPOINT``. A context manager."""

    handler = _MetadataHandler

    def __init__(self, kinesis: KinesisEndpoint, *, role: str = "spark-kpl-instance-role",
                 rotate_every: float = 300.0, lifetime: float = 360.0) -> None:
        if lifetime <= rotate_every:
            raise ValueError("lifetime must outlast rotate_every, or the service would hand out expired credentials")
        self.kinesis = kinesis
        self.role = role
        self.rotate_every = dt.timedelta(seconds=rotate_every)
        self.lifetime = dt.timedelta(seconds=lifetime)
        self._lock = threading.Lock()
        self._tokens: Dict[str, dt.datetime] = {}  # IMDSv2 session token -> when it expires
        #: The credentials issued with the time they were, oldest first.
        self.issued: List[Tuple[dt.datetime, Credentials]] = []
        #: Every request's method, path and User-Agent, in order: what asked, and whether anything did.
        self.requests: List[str] = []

    def _new_token(self, ttl_seconds: int) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._tokens[token] = _now() + dt.timedelta(seconds=ttl_seconds)
        return token

    def _token_valid(self, token: Optional[str]) -> bool:
        with self._lock:
            expires = self._tokens.get(token or "")
        return expires is not None and _now() < expires

    def current_credentials(self) -> Tuple[dt.datetime, Credentials]:
        """The set issued last, or a new one once ``rotate_every`` has passed since."""
        now = _now()
        with self._lock:
            if not self.issued or now - self.issued[-1][0] >= self.rotate_every:
                issued_at = now.replace(microsecond=0)
                fresh = Credentials("ASIA" + secrets.token_hex(8).upper(), secrets.token_urlsafe(30),
                                    secrets.token_urlsafe(60), issued_at + self.lifetime)
                self.kinesis.accept_credentials(fresh)
                self.issued.append((issued_at, fresh))
            return self.issued[-1]

    def answer(self, path: str) -> Optional[Tuple[str, str]]:
        """The content type and body of a GET of ``path``, or None when the service has no such path."""
        region = self.kinesis.region
        if path == "/latest/meta-data/placement/region":
            return "text/plain", region
        if path == "/latest/meta-data/placement/availability-zone":
            return "text/plain", region + "a"
        if path == "/latest/dynamic/instance-identity/document":
            return "application/json", json.dumps({
                "accountId": ACCOUNT, "architecture": "x86_64", "availabilityZone": region + "a",
                "imageId": "ami-0123456789abcdef0", "instanceId": "i-0123456789abcdef0", "instanceType": "m5.xlarge",
                "privateIp": LOOPBACK, "region": region, "version": "2017-09-30"})
        if path in (_CREDENTIALS_PATH, _CREDENTIALS_PATH.rstrip("/")):
            return "text/plain", self.role
        if path == _CREDENTIALS_PATH + self.role:
            issued_at, credentials = self.current_credentials()
            return "application/json", json.dumps({
                "Code": "Success", "LastUpdated": issued_at.strftime(_TIME_FORMAT), "Type": "AWS-HMAC",
                "AccessKeyId": credentials.access_key_id, "SecretAccessKey": credentials.secret_access_key,
                "Token": credentials.session_token,
                "Expiration": credentials.expires.strftime(_TIME_FORMAT) if credentials.expires else None})
        return None


class _PodIdentityHandler(_QuietHandler):
    def do_GET(self) -> None:
        agent: PodIdentityAgent = self.server.service  # type: ignore[attr-defined]
        authorized = self.headers.get("Authorization") == agent.token
        agent.requests.append((self.path, authorized))
        if not authorized:
            self._respond(403, "application/json", json.dumps({"message": "invalid token"}))
        elif self.path != PodIdentityAgent.PATH:
            self._respond(404, "application/json", json.dumps({"message": "not found"}))
        else:
            credentials = agent.credentials
            self._respond(200, "application/json", json.dumps({
                "AccessKeyId": credentials.access_key_id, "SecretAccessKey": credentials.secret_access_key,
                "Token": credentials.session_token, "AccountId": ACCOUNT,
                "Expiration": credentials.expires.strftime(_TIME_FORMAT) if credentials.expires else None}))


class PodIdentityAgent(LoopbackHttpService):
    """The EKS Pod Identity agent for one pod: answers ``GET`` :attr:`PATH` carrying ``token`` with one set
    of the role's temporary credentials, which ``kinesis`` accepts until they expire in ``lifetime``
    seconds. Point ``AWS_CONTAINER_CREDENTIALS_FULL_URI`` at :attr:`credentials_uri`. A context manager."""

    handler = _PodIdentityHandler
    PATH = "/v1/credentials"

    def __init__(self, kinesis: KinesisEndpoint, token: str, lifetime: float = 3600.0) -> None:
        self.token = token
        expires = _now().replace(microsecond=0) + dt.timedelta(seconds=lifetime)
        self.credentials = Credentials("ASIA" + secrets.token_hex(8).upper(), secrets.token_urlsafe(30),
                                       secrets.token_urlsafe(60), expires)
        kinesis.accept_credentials(self.credentials)
        #: Each request's path and whether it carried the token, in order.
        self.requests: List[Tuple[str, bool]] = []

    @property
    def credentials_uri(self) -> str:
        return self.url + self.PATH


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
