"""AWS Signature Version 4 checked on the server side, as Kinesis and STS check it.

Written from the published SigV4 specification (header form: the ``Authorization`` header with
``AWS4-HMAC-SHA256``). :class:`SigV4Verifier` knows which access key ids exist and their secrets
(and, for temporary credentials, their session tokens), recomputes each request's signature from the
method, path, query, signed headers and body, and raises :class:`SignatureRejected` with the status,
error code and message the AWS JSON services answer with when it does not match.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import hmac
import re
import threading
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import quote, unquote

from spark_kpl_testing.env import LOOPBACK_AWS_ENV

__all__ = ["ALGORITHM", "LOOPBACK_CREDENTIALS", "Credentials", "SigV4Verifier", "SignatureRejected"]

ALGORITHM = "AWS4-HMAC-SHA256"
#: How far a request's time may be from the server's, either way, as AWS allows.
MAX_CLOCK_SKEW = dt.timedelta(minutes=5)
_AMZ_DATE = "%Y%m%dT%H%M%SZ"
_UNRESERVED = "-_.~"  # with letters and digits: what SigV4's URI encoding leaves as it is
_SPACES = re.compile(r" +")

#: Kinesis's own words for each way a request's credentials can be wrong.
INVALID_TOKEN = "The security token included in the request is invalid."
EXPIRED_TOKEN = "The security token included in the request is expired"
SIGNATURE_MISMATCH = ("The request signature we calculated does not match the signature you provided. Check your "
                      "AWS Secret Access Key and signing method. Consult the service documentation for details.")


@dataclass(frozen=True)
class Credentials:
    """An access key the server knows; ``session_token`` and ``expires`` only for temporary credentials."""

    access_key_id: str
    secret_access_key: str
    session_token: Optional[str] = None
    #: After this (UTC) the server refuses the credentials as expired.
    expires: Optional[dt.datetime] = None


#: The static keys of :data:`LOOPBACK_AWS_ENV`, which the harness's endpoints accept unless told otherwise.
LOOPBACK_CREDENTIALS = Credentials(LOOPBACK_AWS_ENV["AWS_ACCESS_KEY_ID"], LOOPBACK_AWS_ENV["AWS_SECRET_ACCESS_KEY"])


class SignatureRejected(Exception):
    """The request is not signed by known credentials: answer ``status`` with ``code`` and ``message``."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class _Authorization:
    access_key_id: str
    date: str  # yyyymmdd of the credential scope
    region: str
    service: str
    signed_headers: Tuple[str, ...]
    signature: str

    @property
    def scope(self) -> str:
        return f"{self.date}/{self.region}/{self.service}/aws4_request"


class SigV4Verifier:
    """Checks requests against the credentials it knows; :meth:`accept` adds more at any time."""

    def __init__(self, credentials: Iterable[Credentials], region: str) -> None:
        self.region = region
        self._lock = threading.Lock()
        self._known: Dict[str, Credentials] = {}
        for known in credentials:
            self.accept(known)

    def accept(self, credentials: Credentials) -> None:
        """Known from now on (STS hands out temporary credentials while the server runs)."""
        with self._lock:
            self._known[credentials.access_key_id] = credentials

    def verify(self, method: str, target: str, headers: Sequence[Tuple[str, str]], body: bytes, service: str,
               now: Optional[dt.datetime] = None) -> Credentials:
        """The credentials that signed the request, or :class:`SignatureRejected` saying what is wrong.

        ``target`` is the request line's path and query as sent; ``headers`` every header, repeats
        included; ``service`` the signing name the request must be scoped to.
        """
        by_name = _headers_by_name(headers)
        header = by_name.get("authorization")
        if header is None:
            raise SignatureRejected("MissingAuthenticationTokenException", "Missing Authentication Token")
        auth = _parse_authorization(header)
        with self._lock:
            known = self._known.get(auth.access_key_id)
        token = by_name.get("x-amz-security-token")
        if known is None or token != known.session_token:
            raise SignatureRejected("UnrecognizedClientException", INVALID_TOKEN)
        now = now or dt.datetime.now(dt.timezone.utc)
        if known.expires is not None and now >= known.expires:
            raise SignatureRejected("ExpiredTokenException", EXPIRED_TOKEN)
        if auth.service != service:
            raise SignatureRejected("InvalidSignatureException",
                                    f"Credential should be scoped to correct service: '{service}'. ")
        if auth.region != self.region:
            raise SignatureRejected("InvalidSignatureException",
                                    f"Credential should be scoped to a valid region, not '{auth.region}'. ")
        if "host" not in auth.signed_headers:
            raise SignatureRejected("InvalidSignatureException",
                                    "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
        amz_date = _request_time(by_name)
        _check_fresh(amz_date, now)
        if amz_date[:8] != auth.date:
            raise SignatureRejected("InvalidSignatureException",
                                    f"Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "
                                    f"from HTTP: '{auth.date}' != '{amz_date[:8]}', from '{amz_date}'.")
        canonical = canonical_request(method, target, by_name, auth.signed_headers, body)
        to_sign = string_to_sign(amz_date, auth.scope, canonical)
        expected = signature(known.secret_access_key, auth.date, auth.region, auth.service, to_sign)
        if not hmac.compare_digest(expected, auth.signature):
            raise SignatureRejected("InvalidSignatureException",
                                    f"{SIGNATURE_MISMATCH}\n\nThe Canonical String for this request should have been\n"
                                    f"'{canonical}'\n\nThe String-to-Sign should have been\n'{to_sign}'\n")
        return known


def _headers_by_name(headers: Sequence[Tuple[str, str]]) -> Dict[str, str]:
    """Lower-case name -> value; a repeated header's values joined by commas, in order (as SigV4 does)."""
    values: Dict[str, List[str]] = {}
    for name, value in headers:
        values.setdefault(name.strip().lower(), []).append(_SPACES.sub(" ", value.strip()))
    return {name: ",".join(parts) for name, parts in values.items()}


def _parse_authorization(header: str) -> _Authorization:
    algorithm, _, rest = header.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise SignatureRejected("IncompleteSignatureException",
                                f"Unsupported AWS 'algorithm': '{algorithm}'; only {ALGORITHM} is accepted")
    fields: Dict[str, str] = {}
    for part in rest.split(","):
        name, equals, value = part.strip().partition("=")
        if equals:
            fields[name] = value
    for required in ("Credential", "SignedHeaders", "Signature"):
        if required not in fields:
            raise SignatureRejected("IncompleteSignatureException",
                                    f"Authorization header requires '{required}' parameter. "
                                    f"Authorization={header}")
    scope = fields["Credential"].split("/")
    if len(scope) != 5 or scope[4] != "aws4_request":
        raise SignatureRejected("IncompleteSignatureException",
                                f"Credential must have exactly 5 slash-delimited elements, e.g. "
                                f"keyid/date/region/service/term, got '{fields['Credential']}'")
    return _Authorization(scope[0], scope[1], scope[2], scope[3],
                          tuple(fields["SignedHeaders"].split(";")), fields["Signature"])


def _request_time(by_name: Dict[str, str]) -> str:
    """The request's time, ``yyyymmddThhmmssZ``: X-Amz-Date, else the HTTP Date header."""
    amz_date = by_name.get("x-amz-date")
    if amz_date is not None:
        try:
            dt.datetime.strptime(amz_date, _AMZ_DATE)
        except ValueError:
            raise SignatureRejected("IncompleteSignatureException",
                                    f"X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\", "
                                    f"got '{amz_date}'") from None
        return amz_date
    http_date = by_name.get("date")
    if http_date is None:
        raise SignatureRejected("IncompleteSignatureException",
                                "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
    try:
        return email.utils.parsedate_to_datetime(http_date).astimezone(dt.timezone.utc).strftime(_AMZ_DATE)
    except (TypeError, ValueError):
        raise SignatureRejected("IncompleteSignatureException", f"Date header not understood: '{http_date}'") from None


def _check_fresh(amz_date: str, now: dt.datetime) -> None:
    signed_at = dt.datetime.strptime(amz_date, _AMZ_DATE).replace(tzinfo=dt.timezone.utc)
    now_text = now.strftime(_AMZ_DATE)
    if signed_at < now - MAX_CLOCK_SKEW:
        earliest = (now - MAX_CLOCK_SKEW).strftime(_AMZ_DATE)
        raise SignatureRejected("InvalidSignatureException",
                                f"Signature expired: {amz_date} is now earlier than {earliest} ({now_text} - 5 min.)")
    if signed_at > now + MAX_CLOCK_SKEW:
        latest = (now + MAX_CLOCK_SKEW).strftime(_AMZ_DATE)
        raise SignatureRejected("InvalidSignatureException",
                                f"Signature not yet current: {amz_date} is still later than {latest} "
                                f"({now_text} + 5 min.)")


def _uri_encode(text: str, safe: str = "") -> str:
    return quote(text, safe=_UNRESERVED + safe)


def canonical_request(method: str, target: str, by_name: Dict[str, str], signed_headers: Sequence[str],
                      body: bytes) -> str:
    """SigV4's canonical request. Every service but S3 encodes the path as sent once more, and the
    payload hash is always that of the body received (a claimed ``x-amz-content-sha256`` that differs
    from it, or ``UNSIGNED-PAYLOAD``, cannot match)."""
    path, _, query = target.partition("?")
    canonical_path = _uri_encode(path or "/", safe="/")
    pairs = sorted((_uri_encode(unquote(name)), _uri_encode(unquote(value)))
                   for name, _, value in (item.partition("=") for item in query.split("&") if item))
    canonical_query = "&".join(f"{name}={value}" for name, value in pairs)
    canonical_headers = "".join(f"{name}:{by_name.get(name, '')}\n" for name in signed_headers)
    return "\n".join([method, canonical_path, canonical_query, canonical_headers, ";".join(signed_headers),
                      hashlib.sha256(body).hexdigest()])


def string_to_sign(amz_date: str, scope: str, canonical: str) -> str:
    return "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])


def signature(secret: str, date: str, region: str, service: str, to_sign: str) -> str:
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
