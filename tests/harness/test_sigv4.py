"""The endpoint's SigV4 check, against botocore's signer as an independent reference: what it signs
is accepted, and each way of getting credentials wrong is answered in Kinesis's (or STS's) words."""

from __future__ import annotations

import datetime as dt
import warnings
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials as BotoCredentials
from botocore.exceptions import ClientError

from spark_kpl_testing.sigv4 import (
    EXPIRED_TOKEN,
    INVALID_TOKEN,
    LOOPBACK_CREDENTIALS,
    SIGNATURE_MISMATCH,
    Credentials,
    SignatureRejected,
    SigV4Verifier,
)
from spark_kpl_testing.sts import StsEndpoint

TEMPORARY = Credentials("ASIATEMPORARY", "temporary-secret", "temporary-token")
ROLE = "arn:aws:iam::000000000000:role/writer"


def signed(credentials: Credentials, body: bytes = b'{"StreamName":"s"}', url: str = "https://127.0.0.1:4443/",
           service: str = "kinesis", region: str = "us-east-1"):
    """(target, headers, body) of a request botocore signed, as the server receives them."""
    request = AWSRequest(method="POST", url=url, data=body, headers={
        "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "Kinesis_20131202.ListShards",
        "X-Spaced": "  a   b  "})
    SigV4Auth(BotoCredentials(credentials.access_key_id, credentials.secret_access_key, credentials.session_token),
              service, region).add_auth(request)
    prepared = request.prepare()
    parts = urlsplit(prepared.url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return target, [*prepared.headers.items(), ("Host", parts.netloc)], prepared.body


def rejection(verifier: SigV4Verifier, target, headers, body, **others) -> SignatureRejected:
    with pytest.raises(SignatureRejected) as rejected:
        verifier.verify("POST", target, headers, body, "kinesis", **others)
    return rejected.value


@pytest.fixture
def verifier() -> SigV4Verifier:
    return SigV4Verifier([LOOPBACK_CREDENTIALS, TEMPORARY], "us-east-1")


def test_what_botocore_signs_is_accepted(verifier):
    assert verifier.verify("POST", *signed(LOOPBACK_CREDENTIALS), "kinesis") == LOOPBACK_CREDENTIALS
    assert verifier.verify("POST", *signed(TEMPORARY), "kinesis") == TEMPORARY
    # An encoded path and a query with repeated names, in any order: canonicalized as botocore does.
    target, headers, body = signed(LOOPBACK_CREDENTIALS, url="https://127.0.0.1:4443/a%20b/c?z=1&a=x%2Fy&a=0")
    assert verifier.verify("POST", target, headers, body, "kinesis") == LOOPBACK_CREDENTIALS


def test_an_unknown_key_id_is_an_unrecognized_client(verifier):
    rejected = rejection(verifier, *signed(Credentials("AKIDUNKNOWN", "spark-kpl-local")))
    assert (rejected.status, rejected.code, rejected.message) == (400, "UnrecognizedClientException", INVALID_TOKEN)


def test_a_wrong_secret_or_a_changed_body_is_an_invalid_signature(verifier):
    wrong_secret = rejection(verifier, *signed(Credentials(LOOPBACK_CREDENTIALS.access_key_id, "not-the-secret")))
    target, headers, body = signed(LOOPBACK_CREDENTIALS)
    changed_body = rejection(verifier, target, headers, body + b" ")
    for rejected in (wrong_secret, changed_body):
        assert (rejected.status, rejected.code) == (400, "InvalidSignatureException")
        assert rejected.message.startswith(SIGNATURE_MISMATCH + "\n\nThe Canonical String for this request")


def test_temporary_credentials_need_their_own_session_token(verifier):
    for token in ("another-token", None):
        rejected = rejection(verifier, *signed(Credentials(TEMPORARY.access_key_id, TEMPORARY.secret_access_key,
                                                           token)))
        assert (rejected.code, rejected.message) == ("UnrecognizedClientException", INVALID_TOKEN)


def test_scope_time_and_missing_signature(verifier):
    assert "scoped to a valid region, not 'eu-west-1'" in rejection(
        verifier, *signed(LOOPBACK_CREDENTIALS, region="eu-west-1")).message
    assert "scoped to correct service: 'kinesis'" in rejection(
        verifier, *signed(LOOPBACK_CREDENTIALS, service="firehose")).message
    late = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=6)
    assert rejection(verifier, *signed(LOOPBACK_CREDENTIALS), now=late).message.startswith("Signature expired: ")
    target, headers, body = signed(LOOPBACK_CREDENTIALS)
    unsigned = [(name, value) for name, value in headers if name.lower() != "authorization"]
    assert rejection(verifier, target, unsigned, body).code == "MissingAuthenticationTokenException"


def kinesis_client(endpoint, credentials: Credentials):
    warnings.filterwarnings("ignore", message=r"Unverified HTTPS request is being made to host '127\.0\.0\.1'")
    return boto3.session.Session().client(
        "kinesis", endpoint_url=endpoint.endpoint_url, verify=False, region_name=endpoint.region,
        aws_access_key_id=credentials.access_key_id, aws_secret_access_key=credentials.secret_access_key,
        aws_session_token=credentials.session_token,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, proxies={}))


def test_the_endpoint_answers_wrong_credentials_as_kinesis_does_and_stores_nothing(endpoint, ep_stream):
    record = [{"Data": b"x", "PartitionKey": "k"}]
    for credentials, code, message in [
            (Credentials("AKIDUNKNOWN", "spark-kpl-local"), "UnrecognizedClientException", INVALID_TOKEN),
            (Credentials(LOOPBACK_CREDENTIALS.access_key_id, "not-the-secret"), "InvalidSignatureException",
             SIGNATURE_MISMATCH)]:
        with pytest.raises(ClientError) as error:
            kinesis_client(endpoint, credentials).put_records(StreamName=ep_stream, Records=record)
        answer = error.value.response
        assert (answer["ResponseMetadata"]["HTTPStatusCode"], answer["Error"]["Code"]) == (400, code)
        assert answer["Error"]["Message"].startswith(message)
    assert endpoint.records(ep_stream) == []
    assert kinesis_client(endpoint, LOOPBACK_CREDENTIALS).put_records(StreamName=ep_stream, Records=record)[
        "FailedRecordCount"] == 0


def test_sts_grants_temporary_credentials_that_the_endpoint_then_accepts(endpoint, ep_stream):
    with StsEndpoint(endpoint, roles=[ROLE]) as sts:
        client = boto3.session.Session().client(
            "sts", endpoint_url=sts.url, region_name=endpoint.region,
            aws_access_key_id=LOOPBACK_CREDENTIALS.access_key_id,
            aws_secret_access_key=LOOPBACK_CREDENTIALS.secret_access_key, config=Config(proxies={}))
        granted = client.assume_role(RoleArn=ROLE, RoleSessionName="test")["Credentials"]
        with pytest.raises(ClientError, match=r"AccessDenied.*not authorized to perform: sts:AssumeRole"):
            client.assume_role(RoleArn=ROLE + "-other", RoleSessionName="test")
        stranger = boto3.session.Session().client(
            "sts", endpoint_url=sts.url, region_name=endpoint.region, aws_access_key_id="AKIDUNKNOWN",
            aws_secret_access_key="x", config=Config(proxies={}))
        with pytest.raises(ClientError, match=r"InvalidClientTokenId.*" + INVALID_TOKEN[:-1]):
            stranger.assume_role(RoleArn=ROLE, RoleSessionName="test")
    temporary = Credentials(granted["AccessKeyId"], granted["SecretAccessKey"], granted["SessionToken"],
                            granted["Expiration"])
    assert granted["AccessKeyId"].startswith("ASIA") and sts.issued == [temporary]
    answer = kinesis_client(endpoint, temporary).put_records(StreamName=ep_stream,
                                                             Records=[{"Data": b"x", "PartitionKey": "k"}])
    assert answer["FailedRecordCount"] == 0
    with pytest.raises(ClientError, match="UnrecognizedClientException"):
        kinesis_client(endpoint, Credentials(temporary.access_key_id, temporary.secret_access_key)).put_records(
            StreamName=ep_stream, Records=[{"Data": b"x", "PartitionKey": "k"}])


def test_temporary_credentials_past_their_expiry_are_refused(verifier):
    expires = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=1)
    expiring = Credentials("ASIAEXPIRING", "expiring-secret", "expiring-token", expires)
    verifier.accept(expiring)
    request = signed(expiring)
    assert verifier.verify("POST", *request, "kinesis", now=expires - dt.timedelta(seconds=1)) == expiring
    refused = rejection(verifier, *request, now=expires)
    assert (refused.status, refused.code, refused.message) == (400, "ExpiredTokenException", EXPIRED_TOKEN)
