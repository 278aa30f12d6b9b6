"""The endpoint itself: its life cycle, and the path of one request through outage, signature check,
injected call faults and the Kinesis operation; the rest is delegated to one module per concern."""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from spark_kpl_testing.endpoint.api import KinesisApi
from spark_kpl_testing.endpoint.counters import LIMIT_EXCEEDED, Counters
from spark_kpl_testing.endpoint.errors import ApiError, KinesisEndpointError
from spark_kpl_testing.endpoint.faults import FaultInjector, Faults
from spark_kpl_testing.endpoint.policy import Policy, cloudwatch_action
from spark_kpl_testing.endpoint.streams import DEFAULT_MAX_RECORD_KIB
from spark_kpl_testing.endpoint.tls import STOP_JOIN_TIMEOUT, RequestHandler, TlsServer
from spark_kpl_testing.lifecycle import Service, serve_in_thread, stop_serving
from spark_kpl_testing.net import LOOPBACK, ignore_unverified_tls, kinesis_client, kpl_options
from spark_kpl_testing.records import Record
from spark_kpl_testing.sigv4 import LOOPBACK_CREDENTIALS, Credentials, SignatureRejected, SigV4Verifier

__all__ = ["KinesisEndpoint"]

_TARGET_PREFIX = "Kinesis_20131202."
_PUT_METRIC_DATA_ANSWER = (b'<PutMetricDataResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/">'
                           b"<ResponseMetadata><RequestId>0</RequestId></ResponseMetadata></PutMetricDataResponse>")


def _count(name: str, doc: str) -> property:
    """A read-only property for one of the endpoint's counters."""
    return property(lambda endpoint: endpoint._counters.count(name), doc=doc)


class KinesisEndpoint(Service):
    """An HTTPS Kinesis endpoint on 127.0.0.1 serving the KPL fast, with fault knobs.

    ``streams`` maps stream name to shard count (more with :meth:`create_stream` or the
    ``CreateStream`` call). ``store=False`` only counts records (for benchmarks): :meth:`records`
    then has nothing to return. A context manager; :meth:`stop` is idempotent and also runs at interpreter exit.
    """

    def __init__(
        self,
        streams: Optional[Mapping[str, int]] = None,
        *,
        store: bool = True,
        faults: Optional[Faults] = None,
        region: str = "us-east-1",
        credentials: Optional[List[Credentials]] = None,
    ) -> None:
        self.region = region
        self.store = store
        #: Every request must be signed (SigV4) by one of these: by default the loopback keys that
        #: the test helpers give every process.
        self._verifier = SigV4Verifier(credentials or [LOOPBACK_CREDENTIALS], region)
        self._tokens_lock = threading.Lock()
        self._session_tokens: Dict[str, Dict[str, None]] = {}  # operation -> tokens, in order of first use
        self._faults = FaultInjector(faults)
        self._policy = Policy(region)
        self._counters = Counters()
        self._api = KinesisApi(streams or {}, region, store, self._faults, self._counters)
        self._server: Optional[TlsServer] = None
        self._serve_thread: Optional[threading.Thread] = None
        self._client: Optional[Any] = None

    # -- lifecycle -------------------------------------------------------------------------

    def _check_startable(self) -> None:
        if self._server is not None:
            raise KinesisEndpointError("KinesisEndpoint is already running")

    def _start(self) -> None:
        """Generate a certificate, bind a free port on 127.0.0.1 and serve in a background thread."""
        server = TlsServer(self)
        self._server = server
        self._serve_thread = serve_in_thread(server, f"kinesis-endpoint-{server.port}")

    def _stop(self) -> None:
        """Stop serving, reset open connections and join every thread this endpoint started."""
        server, self._server = self._server, None
        thread, self._serve_thread = self._serve_thread, None
        self._client = None
        if server is None:
            return
        stop_serving(server, thread, STOP_JOIN_TIMEOUT)
        server.close_connections()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        if self._server is None:
            raise KinesisEndpointError("KinesisEndpoint is not running; call start() first")
        return self._server.port

    @property
    def endpoint_url(self) -> str:
        """HTTPS endpoint for AWS SDK clients (self-signed certificate: do not verify)."""
        return f"https://{LOOPBACK}:{self.port}"

    def kpl_options(self) -> Dict[str, str]:
        """KPL properties that keep every connection of the KPL (Kinesis and CloudWatch) here."""
        return kpl_options(self.region, self.port)

    def client(self) -> Any:
        """A boto3 Kinesis client for this endpoint, one attempt per call so that faults show."""
        ignore_unverified_tls()
        if self._client is None:
            self._client = kinesis_client(self.endpoint_url, self.region, attempts=1, read_timeout=60)
        return self._client

    def accept_credentials(self, credentials: Credentials) -> None:
        """Accept requests signed with these credentials too, from now on."""
        self._verifier.accept(credentials)

    def grant_only(self, actions: Optional[Iterable[str]]) -> None:
        """From now on, answer any action not in ``actions`` (``kinesis:PutRecords``,
        ``cloudwatch:PutMetricData``, ...) with ``AccessDeniedException``, as Kinesis does for an IAM
        policy that does not grant it; None grants everything again (the default)."""
        self._policy.grant_only(actions)

    def session_tokens_used(self, operation: str) -> List[str]:
        """The session tokens of the temporary credentials that signed an accepted ``operation`` call
        (``PutRecords``, ...), first use first."""
        with self._tokens_lock:
            return list(self._session_tokens.get(operation, {}))

    # -- streams -----------------------------------------------------------------------------

    def create_stream(self, name: str, shards: int = 1, on_demand: bool = False,
                      max_record_kib: int = DEFAULT_MAX_RECORD_KIB) -> None:
        """Create a stream, ACTIVE at once; ``on_demand``: in on-demand mode, which has a record
        distribution strategy (``USER_PARTITION_KEY`` at first); ``max_record_kib``: its maximum record
        size (data plus partition key), 1024 to 10240 KiB, as CreateStream's ``MaxRecordSizeInKiB``."""
        self._api.create_stream(name, shards, on_demand, max_record_kib)

    def set_record_distribution(self, stream: str, strategy: str) -> None:
        """Switch an on-demand stream's record distribution strategy (``AUTO``: Kinesis ignores the keys)."""
        self._api.set_record_distribution(stream, strategy)

    def delete_stream(self, name: str) -> None:
        """Delete a stream and what it stored; the name can be reused at once."""
        self._api.delete_stream(name)

    @property
    def streams(self) -> Dict[str, int]:
        """Stream name -> open shards."""
        return self._api.open_shard_counts()

    def records(self, stream: str) -> List[Record]:
        """Every user record stored in ``stream``, de-aggregated: shard by shard, arrival order."""
        return self._api.records(stream)

    def stored_records(self, stream: str) -> List[Tuple[str, str]]:
        """Every Kinesis record stored in ``stream`` as a consumer gets it, aggregated or not: its partition key
        and its data in base64; shard by shard, arrival order."""
        return self._api.stored_records(stream)

    def deleted_stream(self, name: str) -> Tuple[List[Record], Dict[str, Tuple[int, int]]]:
        """The records and shard ranges (by shard id) of the last stream deleted under ``name``."""
        return self._api.deleted_stream(name)

    def stored_arrivals(self, stream: str) -> List[Tuple[bytes, float]]:
        """(data, epoch seconds when the endpoint stored it) of every user record of ``stream``."""
        return [(record.data, arrived) for record, arrived in self._api.records_arrived(stream)]

    def delete_stream_after(self, name: str, records: int) -> None:
        """Delete ``name`` inside the PutRecords call that brings its stored records to ``records``
        or more: a deletion mid-write at a known point, whatever the timing of the writer."""
        self._api.delete_stream_after(name, records)

    def split_shard(self, stream: str, shard_id: str, new_starting_hash_key: int) -> None:
        """Split an open shard as Kinesis's SplitShard does: it closes (keeping its records) and two
        children take its hash range, the second from ``new_starting_hash_key``."""
        self._api.split_shard(stream, shard_id, new_starting_hash_key)

    def merge_shards(self, stream: str, shard_id: str, adjacent_shard_id: str) -> None:
        """Merge two adjacent open shards as Kinesis's MergeShards does."""
        self._api.merge_shards(stream, shard_id, adjacent_shard_id)

    def list_late(self, stream: str, seconds: float, user_agent: str) -> None:
        """From now on, ListShards of ``stream`` from callers whose User-Agent contains ``user_agent`` shows
        the shards as they were before each split or merge until ``seconds`` after it. Kinesis's ListShards
        is eventually consistent; the lag given to one caller (the sink's lister, "spark-kpl/") lets a
        test see what that caller does with it while the KPL's daemon, whose retries of records stored in
        an unexpected shard would outlast the lag, lists the shards as they are."""
        self._api.list_late(stream, seconds, user_agent)

    def hash_ranges(self, stream: str) -> Dict[str, Tuple[int, int]]:
        """Shard id -> (starting, ending hash key) of every shard of ``stream``, closed ones too."""
        return self._api.hash_ranges(stream)

    # -- faults ------------------------------------------------------------------------------

    @property
    def faults(self) -> Faults:
        return self._faults.faults

    def set_faults(self, faults: Optional[Faults] = None, **changes: Any) -> Faults:
        """Replace the faults (``faults``) and/or change some of their fields; returns the new ones.

        ``set_faults(Faults())`` clears them all (an outage in progress is ended by
        :meth:`end_outage`).
        """
        return self._faults.set(faults, **changes)

    def outage(self, seconds: float) -> None:
        """From now on, for ``seconds``, reset every connection and every request."""
        self._faults.outage(seconds)

    def end_outage(self) -> None:
        self._faults.end_outage()

    def in_outage(self) -> bool:
        return self._faults.in_outage()

    # -- counters ----------------------------------------------------------------------------

    put_calls = _count("put_calls", "PutRecords/PutRecord calls received, whatever their answer.")
    records_received = _count("records_received", "Kinesis records accepted (given a sequence number): "
                                                   "aggregates count once.")
    bytes_received = _count("bytes_received", "Data and partition key bytes of the accepted records.")
    records_rejected = _count("records_rejected", "Records given an error in their own result (throttled or failed).")

    @property
    def record_errors(self) -> Dict[str, int]:
        """Per-record error code -> count."""
        return self._counters.record_errors()

    @property
    def call_errors(self) -> Dict[str, int]:
        """Whole-call failures -> count: error codes, ``ConnectionReset`` and ``Outage``."""
        return self._counters.call_errors()

    @property
    def calls(self) -> Dict[str, int]:
        """Operation -> calls received, refused ones too."""
        return self._counters.calls()

    @property
    def limits_exceeded(self) -> Dict[str, int]:
        """Operation -> its calls refused with ``LimitExceededException``: over its control-plane limit
        (``Faults.control_plane_limits``) or by ``Faults.limit_exceeded_rate``."""
        return self._counters.limits_exceeded()

    @property
    def first_put_at(self) -> Optional[float]:
        """Epoch seconds of the first PutRecords or PutRecord call since start or :meth:`reset_counters`."""
        return self._counters.first_put_at

    def requests(self, operation: Optional[str] = None) -> List[Dict[str, Any]]:
        """Bodies of the last calls (PutRecords excluded: too big), optionally of one operation."""
        return self._counters.requests(operation)

    def stats(self) -> Dict[str, Any]:
        """Every counter at once."""
        return self._counters.snapshot()

    def reset_counters(self) -> None:
        self._counters.reset()

    # -- serving (the TLS server's Service, called on connection threads) ----------------------

    def refuses_connections(self) -> bool:
        if not self._faults.in_outage():
            return False
        self._counters.call_error("Outage")
        return True

    def note_call_error(self, code: str) -> None:
        self._counters.call_error(code)

    def serve(self, request: RequestHandler) -> None:
        """Answer one HTTP request."""
        length = request.headers.get("Content-Length")
        if length is None:
            request.respond(411, b"", "text/plain")
            request.close_connection = True
            return
        body = request.rfile.read(int(length))
        if self.refuses_connections():
            request.reset()
            return
        target = request.headers.get("X-Amz-Target", "")
        try:  # CloudWatch's calls come here too, signed for its own service
            signer = self._verifier.verify("POST", request.path, request.headers.items(), body,
                                           "kinesis" if target.startswith(_TARGET_PREFIX) else "monitoring")
        except SignatureRejected as rejected:
            self._fail(request, ApiError(rejected.status, rejected.code, rejected.message))
            return
        if signer.session_token is not None:
            with self._tokens_lock:
                self._session_tokens.setdefault(target[len(_TARGET_PREFIX):], {})[signer.session_token] = None
        kinesis_call = target.startswith(_TARGET_PREFIX)
        # Counted by Kinesis's operation name, CloudWatch's calls by their action (cloudwatch:PutMetricData).
        operation = target[len(_TARGET_PREFIX):] if kinesis_call else cloudwatch_action(target, request.path, body)
        self._counters.call(operation)
        try:
            self._policy.check("kinesis:" + operation if kinesis_call else operation, signer.access_key_id, body)
        except ApiError as denied:
            self._fail(request, denied, operation)
            return
        if not kinesis_call:
            self._answer_other(request)
            return
        fault = self._faults.call_fault(operation, body)
        if fault.latency:
            time.sleep(fault.latency)
        if fault.reset:
            self._counters.call_error("ConnectionReset")
            request.reset()
        elif fault.http_status == 503:
            self._fail(request, ApiError(503, "ServiceUnavailable", "Service Unavailable"), operation)
        elif fault.http_status == 500:
            self._fail(request, ApiError(500, "InternalFailure", "Internal service failure."), operation)
        elif fault.limit_exceeded:
            self._fail(request, ApiError(400, LIMIT_EXCEEDED, f"Rate exceeded for {operation}."), operation)
        else:
            try:
                answer = self._api.call(operation, body, request.headers.get("User-Agent", ""))
            except ApiError as error:
                self._fail(request, error, operation)
                return
            request.respond(200, answer if isinstance(answer, bytes) else json.dumps(answer).encode())

    def _fail(self, request: RequestHandler, error: ApiError, operation: Optional[str] = None) -> None:
        self._counters.call_error(error.code, operation)
        request.respond_error(error)

    def _answer_other(self, request: RequestHandler) -> None:
        """CloudWatch's PutMetricData (JSON, CBOR or query protocol) or anything else: accept, ignore."""
        if "json" in request.headers.get("Content-Type", ""):
            request.respond(200, b"{}", "application/x-amz-json-1.0")
        else:
            request.respond(200, _PUT_METRIC_DATA_ANSWER, "text/xml")
