"""The harness's egress proxy: the only way out of a cloud task's sandbox (issue 44).

A sandbox has nothing but its own loopback. A cloud task's sandbox also gets, mounted read-only, a folder
of the host holding this proxy's unix socket, and a forwarder of its own (`standins/egress_forwarder.py`)
listening on 127.0.0.1: HTTPS_PROXY, and the emulators' ports when the accounts are emulated. Every
connection reaches this proxy as an HTTP CONNECT request and is allowed only to the hosts and ports of the
task's applications (`applications.py`), named per application; anything else gets 403 with the reason,
and a plain-HTTP request 405. A host on the internet must resolve to a public address (a name that
resolves to the host's loopback or private network is refused); a route to a local address exists only
for an emulator the settings name. Every decision is kept (`decisions`) for tests and doctor.

One proxy per policy (the tasks' applications and the settings), started on first use and kept for the
process's life, as the sandboxes of a run come and go.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import ipaddress
import socket
import socketserver
import threading
from dataclasses import dataclass
from pathlib import Path

from daharness.sandbox.once import computed_once
from daharness.sandbox.scratch import process_scratch

SOCKET_NAME = "egress.sock"
_HEAD_LIMIT = 8192
_CONNECT_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Route:
    """One destination a sandbox may reach: `host` (a name, or `*.domain`) and `port`, for `application`;
    `target` is where it is served when it is local (an emulator), None for the host itself."""

    application: str
    host: str
    port: int
    target: tuple[str, int] | None = None

    def matches(self, host: str, port: int) -> bool:
        return port == self.port and fnmatch.fnmatchcase(host.lower(), self.host.lower())


@dataclass(frozen=True)
class EgressPolicy:
    routes: tuple[Route, ...]

    def route(self, host: str, port: int) -> Route | None:
        return next((route for route in self.routes if route.matches(host, port)), None)

    @property
    def local_ports(self) -> dict[int, str]:
        """The emulators' ports, each listened on inside the sandbox as outside: port -> host:port."""
        return {route.port: f"{route.host}:{route.port}" for route in self.routes if route.target}


@dataclass(frozen=True)
class Decision:
    host: str
    port: int
    allowed: bool
    reason: str


class EgressProxy:
    """The proxy of one policy: a unix socket in a folder of its own, served by a thread."""

    def __init__(self, policy: EgressPolicy, folder: Path) -> None:
        self.policy = policy
        self.folder = folder
        self.decisions: list[Decision] = []
        self._lock = threading.Lock()
        folder.mkdir(mode=0o755, exist_ok=True)
        folder.chmod(0o755)  # the sandbox's user crosses it to reach the socket
        self.socket_path = folder / SOCKET_NAME
        self.socket_path.unlink(missing_ok=True)
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy.handle(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(str(self.socket_path), Handler)
        self._server.daemon_threads = True
        self.socket_path.chmod(0o666)  # connecting to a unix socket needs write permission on it
        threading.Thread(target=self._server.serve_forever, daemon=True, name="daharness-egress").start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.socket_path.unlink(missing_ok=True)

    def _decide(self, host: str, port: int, allowed: bool, reason: str) -> None:
        with self._lock:
            self.decisions.append(Decision(host, port, allowed, reason))

    def handle(self, client: socket.socket) -> None:
        head = _read_head(client)
        request = head.split(b"\r\n", 1)[0].decode("latin-1", "replace").split()
        if len(request) < 2 or request[0].upper() != "CONNECT":
            _answer(client, 405, "daharness egress proxy: only CONNECT host:port is served")
            return
        host, _, port_text = request[1].rpartition(":")
        host = host.strip("[]")
        if not host or not port_text.isdigit():
            _answer(client, 400, f"daharness egress proxy: {request[1]!r} is not host:port")
            return
        port = int(port_text)
        route = self.policy.route(host, port)
        if route is None:
            named = ", ".join(sorted({r.application for r in self.policy.routes})) or "none"
            reason = f"{host}:{port} is not a host of this task's applications ({named})"
            self._decide(host, port, False, reason)
            _answer(client, 403, f"daharness egress proxy: {reason}")
            return
        try:
            upstream = _open(route, host, port)
        except (OSError, PermissionError) as exc:
            self._decide(host, port, False, str(exc))
            _answer(
                client, 502 if not isinstance(exc, PermissionError) else 403, f"daharness egress proxy: {exc}"
            )
            return
        self._decide(host, port, True, route.application)
        with upstream:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            _relay(client, upstream)


def _read_head(client: socket.socket) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
        data = client.recv(1)  # byte by byte: what follows the head belongs to the tunnel
        if not data:
            break
        head += data
    return head


def _answer(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 405: "Method Not Allowed", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    client.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)


def _open(route: Route, host: str, port: int) -> socket.socket:
    """A connection to the route's destination: its local target, or the host on the internet (which
    must resolve to a public address: a name pointed at this machine's services is refused)."""
    if route.target is not None:
        return socket.create_connection(route.target, timeout=_CONNECT_TIMEOUT_S)
    for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        if not ipaddress.ip_address(address[0]).is_global:
            raise PermissionError(f"{host} resolves to {address[0]}, which is not a public address")
        connection = socket.socket(family, kind, proto)
        connection.settimeout(_CONNECT_TIMEOUT_S)
        try:
            connection.connect(address)
        except OSError:
            connection.close()
            continue
        return connection
    raise OSError(f"cannot reach {host}:{port}")


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    client.settimeout(None)
    upstream.settimeout(None)

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (sink, source):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
    back.start()
    pipe(client, upstream)
    back.join()


@computed_once
def proxy_for(policy: EgressPolicy) -> EgressProxy:
    """The process's proxy for `policy` (started on first use)."""
    digest = hashlib.sha256(repr(policy).encode()).hexdigest()[:12]
    return EgressProxy(policy, process_scratch() / f"egress-{digest}")
