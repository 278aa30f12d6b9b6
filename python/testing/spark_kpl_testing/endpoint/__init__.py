"""A Kinesis endpoint of the project's own on loopback TLS: fast, and able to inject faults.

kinesis-mock is correct but slow (seconds per ``PutRecords``) and cannot misbehave on purpose.
:class:`KinesisEndpoint` speaks just enough of the Kinesis JSON 1.1 protocol for the real KPL daemon
(``ListShards``, ``PutRecords``) and for tests (``CreateStream``, ``DeleteStream``,
``DescribeStream``, ``DescribeStreamSummary``, ``ListStreams``, ``SplitShard``, ``MergeShards``;
``GetShardIterator`` and ``GetRecords`` for consumers that read the stored records as they are),
over HTTPS on 127.0.0.1 with a self-signed certificate made at start (the KPL runs with
``VerifyCertificate=false``).

Typical use::

    with KinesisEndpoint({"events": 4}, faults=Faults(record_failure_rate=0.05)) as endpoint:
        spark_kpl.write(df, "events", data="payload", **endpoint.kpl_options())
        records = endpoint.records("events")          # KPL aggregates already de-aggregated
        endpoint.set_faults(http_error_rate=0.2)      # thread-safe, at any time
        endpoint.outage(10)                           # reset every connection for 10 s

Design: a threaded ``http.server`` in the calling process, one thread per keep-alive connection
(:mod:`.tls`); the Kinesis operations over the streams (:mod:`.api`, :mod:`.streams`); the fault
knobs (:mod:`.faults`); what was received (:mod:`.counters`); the request path that joins them
(:mod:`.server`); ``python -m spark_kpl_testing.endpoint`` to run one on its own (:mod:`.__main__`).
The KPL sends few, large calls (up to 500 Kinesis records of up to 50 KiB aggregates each), so the
work per byte is what counts: the body is read in one piece, parsed once by the C JSON parser, and
with ``store=False`` the base64 data is never decoded (its size is computed from its length).
Records are routed to shards as Kinesis does: MD5 of the partition key, or the explicit hash key,
over the shards' evenly split hash ranges. As in Kinesis, a record (data plus partition key) may have
up to its stream's maximum record size, 1 MiB unless raised to at most 10 MiB (``UpdateMaxRecordSize``
or ``CreateStream``'s ``MaxRecordSizeInKiB``), and a ``PutRecords`` call up to 10 MiB in all; past
either, the whole call fails.

Signatures: every request must carry a valid AWS Signature Version 4 from credentials the endpoint
knows (:mod:`spark_kpl_testing.sigv4`): by default the loopback keys the test helpers give every
process (:data:`LOOPBACK_CREDENTIALS`), more with ``credentials=`` or
:meth:`KinesisEndpoint.accept_credentials` (temporary ones with their session token; the loopback STS
of :mod:`spark_kpl_testing.sts` adds those it grants). Wrong ones are answered as Kinesis answers them,
HTTP 400: ``UnrecognizedClientException`` "The security token included in the request is invalid."
for an unknown key id or session token, ``InvalidSignatureException`` "The request signature we
calculated does not match the signature you provided..." for a wrong secret or a changed request;
nothing is stored. The KPL daemon retries both until ``RecordTtl``.

Fault knobs (:class:`Faults`, settable at any time with :meth:`KinesisEndpoint.set_faults`):

- per-shard throttling (records/s and bytes/s, token buckets holding one second): a throttled
  record gets ``ProvisionedThroughputExceededException`` in its own result, as in Kinesis;
- ``control_plane_limits``: each control-plane operation held at the limit the Kinesis API reference
  gives it (``KINESIS_CONTROL_PLANE_LIMITS``: ``DescribeStreamSummary`` 20 calls/s and
  ``DescribeStream`` 10 per account, ``ListShards`` 1,000 per stream, ``ListStreams``,
  ``CreateStream``, ``DeleteStream``, ``SplitShard`` and ``MergeShards`` 5 per account; token buckets
  holding one second): a call past it is answered as Kinesis answers it, HTTP 400
  ``LimitExceededException`` "Rate exceeded for stream S under account A." (for a call naming no
  stream, "Rate exceeded for account A."), and counted by operation in
  :attr:`KinesisEndpoint.limits_exceeded`. :meth:`Faults.kinesis_limits` turns it on with the
  per-shard limits (whole, whatever share of those it takes);
- ``record_failure_rate``: a share of records in a successful call get ``InternalFailure``;
- ``http_error_rate``: a share of calls answered HTTP 500 ``InternalFailure`` and 503
  ``ServiceUnavailable`` in turn;
- ``reset_rate``: a share of calls read and then answered with a TCP reset, nothing stored;
- ``latency``: seconds added to each call;
- :meth:`KinesisEndpoint.outage`: for N seconds every new connection and every request on an open
  one is reset, whatever the operation;
- :meth:`KinesisEndpoint.list_late`: one caller's ``ListShards`` (by its User-Agent) shows a stream as
  before each split or merge for N seconds after it, as an eventually consistent listing may.

The call-level faults apply to ``Faults.operations`` (by default ``PutRecords`` only, so the daemon's
shard map loads promptly). Shares are exact and evenly spread, not drawn at random (a share of 0.1
hits the 5th, 15th, 25th... call or record), so a test with few calls still meets each fault it
asks for, and does so the same way every run.

What the KPL daemon (1.0.9 and 1.1.1) sends (seen here): 1.1.1 first ``DescribeStreamSummary`` with
``{"StreamName"}`` on a stream's first record, unless its ``RecordDistributionStrategyDefault`` is set
(then only every ``DescribeStreamSummaryIntervalMs``); ``ListShards`` with ``{"StreamName", "MaxResults":
1000, "ShardFilter": {"Type": "AT_LATEST"}}`` (retried every ~5 s while it fails), then
``PutRecords`` with ``Expect: 100-continue`` (answered by ``http.server`` before the body is read),
over one or two keep-alive connections, each signed over ``amz-sdk-invocation-id``,
``amz-sdk-request``, ``content-length``, ``content-type``, ``host``, ``x-amz-api-version``,
``x-amz-content-sha256`` (the body's SHA-256: no chunked or unsigned payload), ``x-amz-date``,
``x-amz-target`` and, with a session token, ``x-amz-security-token``. The sink's own ``ListShards``
(AWS SDK for Java signer) signs ``content-length``, ``content-type``, ``host``,
``x-amz-content-sha256``, ``x-amz-date``, ``x-amz-target`` (and the token) likewise. For an
unknown stream the daemon still sends ``PutRecords``, again and again until ``RecordTtl``. Nothing
else, with ``MetricsLevel=none``.

Cost, measured with the real KPL: about 1 to 2 microseconds of this process's CPU per aggregated
100-byte user record, against 50 to 120 in the Spark JVM and the KPL daemon; by a load generator
of its own, 65 to 95 MB/s of aggregated payload at half a core (measured before signatures were
checked; the check adds about 50 microseconds per call and 0.65 ms per MiB of body, its SHA-256, the
same for every producer). Only 127.0.0.1 is ever bound.
"""

from spark_kpl_testing.endpoint.errors import KinesisEndpointError
from spark_kpl_testing.endpoint.faults import KINESIS_SHARD_BYTES_PER_SECOND, KINESIS_SHARD_RECORDS_PER_SECOND, Faults
from spark_kpl_testing.endpoint.server import KinesisEndpoint
from spark_kpl_testing.endpoint.tls import self_signed_certificate

__all__ = [
    "KINESIS_SHARD_BYTES_PER_SECOND",
    "KINESIS_SHARD_RECORDS_PER_SECOND",
    "Faults",
    "KinesisEndpoint",
    "KinesisEndpointError",
    "self_signed_certificate",
]
