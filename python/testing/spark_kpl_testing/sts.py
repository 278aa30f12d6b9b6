"""A loopback STS endpoint that answers ``AssumeRole`` and ``AssumeRoleWithWebIdentity`` with temporary
credentials a :class:`~spark_kpl_testing.endpoint.KinesisEndpoint` then accepts, and ``GetCallerIdentity``
of its long-term callers (a user of the endpoint's one account).

It checks each AssumeRole call's SigV4 signature (service ``sts``) against the long-term credentials it
was given, and each AssumeRoleWithWebIdentity call's token against those it was given, as STS does, and
hands out a fresh access key id, secret and session token per call, made known to the Kinesis endpoint
at once. Plain HTTP on 127.0.0.1: the AWS SDK for Java in the sink's jar would refuse the self-signed
certificate of a TLS one, and ``awsStsEndpoint`` (and ``AWS_ENDPOINT_URL_STS``) take an ``http://``
URI. Typical use::

    with KinesisEndpoint({"events": 2}) as kinesis, StsEndpoint(kinesis, roles={ROLE_ARN}) as sts:
        spark_kpl.write(df, "events", awsRoleArn=ROLE_ARN, awsStsEndpoint=sts.url, **kinesis.kpl_options())
"""

from __future__ import annotations

import datetime as dt
import http.server
import secrets
import threading
from typing import Any, Iterable, List, Optional
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

from spark_kpl_testing.endpoint import KinesisEndpoint
from spark_kpl_testing.endpoint.errors import ACCOUNT
from spark_kpl_testing.lifecycle import LoopbackHttpService
from spark_kpl_testing.sigv4 import LOOPBACK_CREDENTIALS, Credentials, SignatureRejected, SigV4Verifier

__all__ = ["StsEndpoint"]

_NAMESPACE = "https://sts.amazonaws.com/doc/2011-06-15/"
#: STS's own codes for what the verifier reports in the words of the JSON services.
_STS_CODES = {"UnrecognizedClientException": "InvalidClientTokenId",
              "InvalidSignatureException": "SignatureDoesNotMatch",
              "MissingAuthenticationTokenException": "MissingAuthenticationToken",
              "IncompleteSignatureException": "IncompleteSignature"}


class _StsHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (quiet)
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            status, answer = 200, self.server.service._answer(  # type: ignore[attr-defined]
                self.headers.items(), self.path, body)
        except SignatureRejected as rejected:
            status = rejected.status
            answer = (f'<ErrorResponse xmlns="{_NAMESPACE}"><Error><Type>Sender</Type><Code>{rejected.code}</Code>'
                      f"<Message>{escape(rejected.message)}</Message></Error>"
                      f"<RequestId>{secrets.token_hex(16)}</RequestId></ErrorResponse>")
        data = answer.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class StsEndpoint(LoopbackHttpService):
    """``AssumeRole`` of the role ARNs in ``roles``, for callers signing with ``credentials`` (by
    default the loopback keys), and ``AssumeRoleWithWebIdentity`` for callers with one of
    ``web_identity_tokens``; each grant becomes credentials ``kinesis`` accepts; :attr:`url` for the
    sink's ``awsStsEndpoint``. A context manager."""

    handler = _StsHandler

    def __init__(self, kinesis: KinesisEndpoint, roles: Iterable[str], *,
                 credentials: Optional[List[Credentials]] = None, web_identity_tokens: Iterable[str] = (),
                 max_duration: Optional[int] = None) -> None:
        self.kinesis = kinesis
        self.roles = frozenset(roles)
        self._verifier = SigV4Verifier(credentials or [LOOPBACK_CREDENTIALS], kinesis.region)
        #: The tokens AssumeRoleWithWebIdentity accepts (an identity provider's, as EKS mounts them).
        self.web_identity_tokens = frozenset(web_identity_tokens)
        #: Caps each grant's lifetime in seconds, below STS's own minimum of 900, for tests of rotation.
        self.max_duration = max_duration
        self._lock = threading.Lock()
        #: The temporary credentials handed out, oldest first.
        self.issued: List[Credentials] = []

    def _caller_identity(self, headers: Any, path: str, body: bytes) -> str:
        """GetCallerIdentity of a caller signing with known long-term credentials: a user of :data:`ACCOUNT`."""
        try:
            key = self._verifier.verify("POST", path, headers, body, "sts").access_key_id
        except SignatureRejected as rejected:
            raise SignatureRejected(_STS_CODES.get(rejected.code, rejected.code), rejected.message, 403) from None
        return (f'<GetCallerIdentityResponse xmlns="{_NAMESPACE}"><GetCallerIdentityResult>'
                f"<Arn>arn:aws:iam::{ACCOUNT}:user/{escape(key)}</Arn><UserId>AIDA{escape(key)}</UserId>"
                f"<Account>{ACCOUNT}</Account></GetCallerIdentityResult><ResponseMetadata>"
                f"<RequestId>{secrets.token_hex(16)}</RequestId></ResponseMetadata></GetCallerIdentityResponse>")

    def _answer(self, headers: Any, path: str, body: bytes) -> str:
        """The XML answer to AssumeRole (signed by known credentials) or AssumeRoleWithWebIdentity
        (unsigned, carrying a known token), or :class:`SignatureRejected` (status, code and message)."""
        form = {name: values[0] for name, values in parse_qs(body.decode()).items()}
        action = form.get("Action")
        if action == "AssumeRoleWithWebIdentity":
            if form.get("WebIdentityToken") not in self.web_identity_tokens:
                raise SignatureRejected("InvalidIdentityToken", "Couldn't verify the token's signature", 400)
            caller = "assumed-role/web-identity"
        elif action == "AssumeRole":
            try:
                caller = "user/" + self._verifier.verify("POST", path, headers, body, "sts").access_key_id
            except SignatureRejected as rejected:
                raise SignatureRejected(_STS_CODES.get(rejected.code, rejected.code), rejected.message, 403) from None
        elif action == "GetCallerIdentity":
            return self._caller_identity(headers, path, body)
        else:
            raise SignatureRejected("InvalidAction", f"Could not find operation {action} for version "
                                    f"{form.get('Version')}")
        role, session = form.get("RoleArn", ""), form.get("RoleSessionName", "")
        if role not in self.roles:
            raise SignatureRejected("AccessDenied", f"User: arn:aws:iam::{ACCOUNT}:{caller} is not "
                                    f"authorized to perform: sts:{action} on resource: {role}", 403)
        seconds = int(form.get("DurationSeconds", "3600"))
        seconds = min(seconds, self.max_duration or seconds)
        expiry = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=seconds)
        granted = Credentials("ASIA" + secrets.token_hex(8).upper(), secrets.token_urlsafe(30),
                              secrets.token_urlsafe(60), expiry)
        self.kinesis.accept_credentials(granted)
        with self._lock:
            self.issued.append(granted)
        expires = expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
        role_name = role.rsplit("/", 1)[-1]
        return (f'<{action}Response xmlns="{_NAMESPACE}"><{action}Result><Credentials>'
                f"<AccessKeyId>{granted.access_key_id}</AccessKeyId>"
                f"<SecretAccessKey>{escape(granted.secret_access_key)}</SecretAccessKey>"
                f"<SessionToken>{escape(granted.session_token or '')}</SessionToken>"
                f"<Expiration>{expires}</Expiration></Credentials><AssumedRoleUser>"
                f"<AssumedRoleId>AROA{ACCOUNT}:{escape(session)}</AssumedRoleId>"
                f"<Arn>arn:aws:sts::{ACCOUNT}:assumed-role/{escape(role_name)}/{escape(session)}</Arn>"
                f"</AssumedRoleUser></{action}Result><ResponseMetadata><RequestId>{secrets.token_hex(16)}"
                f"</RequestId></ResponseMetadata></{action}Response>")
