"""HTTP/1.1 over TLS on 127.0.0.1: one thread per keep-alive connection, a fresh self-signed certificate,
answers written in one piece, and a TCP reset when a fault asks for one."""

from __future__ import annotations

import http.server
import itertools
import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import traceback
from typing import Any, Protocol, Set, Tuple

from spark_kpl_testing.endpoint.errors import ApiError, KinesisEndpointError
from spark_kpl_testing.net import LOOPBACK

__all__ = ["JSON_TYPE", "RequestHandler", "Service", "TlsServer", "self_signed_certificate"]

JSON_TYPE = "application/x-amz-json-1.1"
_IDLE_TIMEOUT = 300.0  # an idle keep-alive connection is closed after this long
STOP_JOIN_TIMEOUT = 5.0
_LINGER_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a TCP RST


class Service(Protocol):
    """What the server serves: each request, and whether a new connection is refused (an outage, which
    the service counts)."""

    def serve(self, request: "RequestHandler") -> None: ...

    def refuses_connections(self) -> bool: ...

    def note_call_error(self, code: str) -> None: ...


class RequestHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the KPL's HTTP client expects
    server_version = "spark-kpl-endpoint"
    sys_version = ""
    server: "TlsServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (quiet)
        pass

    def do_POST(self) -> None:
        try:
            self.server.service.serve(self)
        except (OSError, ValueError):
            raise  # the connection broke: TlsServer closes it quietly
        except Exception as e:  # a bug here must not look like an injected fault
            traceback.print_exc()
            self.server.service.note_call_error("EndpointError")
            self.close_connection = True
            self.respond_error(ApiError(500, "InternalFailure", f"KinesisEndpoint bug: {e!r}"))

    def do_GET(self) -> None:
        self.respond(200, b"{}")  # a health check

    def respond(self, status: int, body: bytes, content_type: str = JSON_TYPE, extra: str = "") -> None:
        """Status line, headers and body in one write (no Nagle stall between them)."""
        request_id = next(self.server.request_ids)
        head = (f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}\r\n"
                f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                f"x-amzn-RequestId: {request_id:08x}-0000-4000-8000-000000000000\r\n"
                f"Date: {self.date_time_string()}\r\n{extra}"
                f"{'Connection: close' + chr(13) + chr(10) if self.close_connection else ''}\r\n")
        self.wfile.write(head.encode("latin-1") + body)

    def respond_error(self, error: ApiError) -> None:
        body = json.dumps({"__type": error.code, "message": error.message}).encode()
        self.respond(error.status, body, extra=f"x-amzn-ErrorType: {error.code}:\r\n")

    def reset(self) -> None:
        """Close the connection with a TCP reset and no answer."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
        except OSError:
            pass


class TlsServer(http.server.HTTPServer):
    """One thread per connection, TLS handshake on that thread; tracks its threads and sockets."""

    request_queue_size = 128
    allow_reuse_address = False

    def __init__(self, service: Service) -> None:
        self.service = service
        self.context = _self_signed_context()
        self.request_ids = itertools.count(1)
        self._conn_lock = threading.Lock()
        self._threads: Set[threading.Thread] = set()
        self._sockets: Set[socket.socket] = set()
        self._closing = False
        super().__init__((LOOPBACK, 0), RequestHandler)
        self.port: int = self.server_address[1]

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self._connection, args=(request, client_address),
                                  name=f"kinesis-endpoint-{self.port}-conn", daemon=True)
        with self._conn_lock:
            if self._closing:
                request.close()
                return
            # A thread stays tracked until it has ended, so that stop() joins one still closing its socket.
            self._threads = {t for t in self._threads if t.is_alive()}
            self._threads.add(thread)
        thread.start()

    def _connection(self, raw: socket.socket, client_address: Any) -> None:
        conn: socket.socket = raw
        try:
            if self.service.refuses_connections():
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
                return
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            raw.settimeout(_IDLE_TIMEOUT)
            # Wrapping detaches ``raw``: track the TLS socket, before its handshake can block.
            conn = self.context.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
            with self._conn_lock:
                if self._closing:
                    return
                self._sockets.add(conn)
            conn.do_handshake()
            self.finish_request(conn, client_address)
        except (OSError, ValueError, ssl.SSLError):
            pass  # the client went away, or stop() shut the socket
        finally:
            with self._conn_lock:
                self._sockets.discard(conn)
            try:
                conn.close()
            except OSError:
                pass

    def close_connections(self) -> None:
        """Wake every connection thread (shut its socket) and join them."""
        with self._conn_lock:
            self._closing = True
            sockets, threads = list(self._sockets), list(self._threads)
        for sock in sockets:
            try:
                # The plain socket's shutdown: SSLSocket.shutdown would race its reading thread.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + STOP_JOIN_TIMEOUT
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def self_signed_certificate(folder: str) -> Tuple[str, str]:
    """Write a fresh self-signed P-256 certificate for 127.0.0.1 and its key into ``folder``.

    Returns the paths of the certificate and the key (PEM); a client that trusts the certificate file
    verifies a server on 127.0.0.1 that uses them. Needs the ``openssl`` command.
    """
    openssl = shutil.which("openssl")
    if openssl is None:
        raise KinesisEndpointError("the `openssl` command is needed to make a certificate")
    key, cert = os.path.join(folder, "key.pem"), os.path.join(folder, "cert.pem")
    done = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "7", "-subj", f"/CN={LOOPBACK}",
         "-addext", f"subjectAltName=IP:{LOOPBACK}"],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    if done.returncode != 0:
        raise KinesisEndpointError(f"openssl could not make a certificate: {done.stderr.decode(errors='replace')}")
    return cert, key


def _self_signed_context() -> ssl.SSLContext:
    """A server context with a fresh self-signed certificate for 127.0.0.1."""
    folder = tempfile.mkdtemp(prefix="spark-kpl-endpoint-")
    try:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(*self_signed_certificate(folder))  # read into memory: the files can go
        return context
    finally:
        shutil.rmtree(folder, ignore_errors=True)
