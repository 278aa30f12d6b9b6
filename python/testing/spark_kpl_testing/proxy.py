"""A small HTTP CONNECT proxy on loopback, for testing the KPL's Proxy* properties for real.

It opens tunnels only to 127.0.0.1 (so nothing routed through it can leave the machine), records
the user name each CONNECT gave (Basic credentials, if any) and counts the tunnels it opened::

    with ConnectProxy() as proxy:
        ...  # ProxyHost=127.0.0.1, ProxyPort=proxy.port, ProxyUserName=user
        assert proxy.tunnels > 0

It asks for no password: the sink refuses the KPL's ``ProxyPassword``, which the KPL would put on
its daemon's command line.
"""

from __future__ import annotations

import base64
import socket
import threading
from typing import List, Optional

from spark_kpl_testing.lifecycle import Service
from spark_kpl_testing.net import LOOPBACK


class ConnectProxy(Service):
    def __init__(self) -> None:
        #: The user names CONNECTs gave in their Proxy-Authorization, in order.
        self.users: List[str] = []
        self._server: Optional[socket.socket] = None
        self._sockets: List[socket.socket] = []
        self._lock = threading.Lock()
        self.tunnels = 0
        #: CONNECTs refused: a target off loopback.
        self.refused = 0

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return self._server.getsockname()[1]

    def _start(self) -> None:
        self._server = socket.create_server((LOOPBACK, 0))
        threading.Thread(target=self._accept, name="connect-proxy", daemon=True).start()

    def _stop(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
            server, self._server = self._server, None
        for sock in sockets + ([server] if server else []):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)

    def _accept(self) -> None:
        server = self._server
        while server is not None:
            try:
                client, _ = server.accept()
            except OSError:  # stopped
                return
            self._track(client)
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            request, _, rest = head.partition(b"\r\n\r\n")
            lines = request.decode("latin-1").split("\r\n")
            method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
            headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
            host, _, port = target.rpartition(":")
            scheme, _, credentials = headers.get("proxy-authorization", "").partition(" ")
            if scheme == "Basic":
                with self._lock:
                    self.users.append(base64.b64decode(credentials).decode().partition(":")[0])
            if method != "CONNECT" or host != LOOPBACK or not port.isdigit():
                self._refuse(client, b"403 Forbidden", b"")
                return
            upstream = socket.create_connection((host, int(port)))
            self._track(upstream)
            with self._lock:
                self.tunnels += 1
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
            _pipe(client, upstream)
        except OSError:
            pass

    def _refuse(self, client: socket.socket, status: bytes, extra: bytes) -> None:
        with self._lock:
            self.refused += 1
        client.sendall(b"HTTP/1.1 " + status + b"\r\n" + extra + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        client.close()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    """Copy bytes one way until either side closes."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
