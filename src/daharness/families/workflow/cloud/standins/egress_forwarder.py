"""The sandbox's way out (issue 44): TCP ports on the sandbox's own loopback whose connections go, each as
it is, through a unix socket that the harness mounted into the sandbox, to the harness's proxy on the
host, which decides where they may go. Standard library only: it runs with the sandbox's python3.

  python3 egress_forwarder.py SOCKET PROXY_PORT [LOCAL_PORT=HOST:PORT ...]

PROXY_PORT is an HTTP proxy (HTTPS_PROXY): its bytes go to the harness's proxy unchanged, which answers a
CONNECT itself (200 for an allowed host:port, 403 for any other). Each LOCAL_PORT is a fixed tunnel: the
forwarder asks the harness's proxy for CONNECT HOST:PORT and then passes the bytes (an emulator's
endpoint, http://127.0.0.1:9050, works inside as outside). Nothing here decides anything: a process of the
agent that talks to the socket itself gets the same answers.

It detaches (its own session, so that the step that started it may end) and exits 0 once every port
listens, 1 with the reason on stderr otherwise.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

_CHUNK = 65536


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (sink, source):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


def _upstream(path: str) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    return connection


def _tunnel(path: str, target: str) -> socket.socket | None:
    """A connection through the harness's proxy to `target`, or None when it refuses."""
    upstream = _upstream(path)
    upstream.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 8192:
        data = upstream.recv(1)
        if not data:
            break
        head += data
    if not head.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200")):
        upstream.close()
        return None
    return upstream


def _serve(listener: socket.socket, path: str, target: str | None) -> None:
    while True:
        client, _ = listener.accept()
        try:
            upstream = _tunnel(path, target) if target else _upstream(path)
        except OSError:
            upstream = None
        if upstream is None:
            client.close()
            continue
        threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, ports = argv[0], [(int(argv[1]), None)]
    for spec in argv[2:]:
        local, _, target = spec.partition("=")
        ports.append((int(local), target))
    listeners = []
    for port, target in ports:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind(("127.0.0.1", port))
        except OSError as exc:
            print(f"cannot listen on 127.0.0.1:{port}: {exc}", file=sys.stderr)
            return 1
        listener.listen(64)
        listeners.append((listener, target))
    ready_read, ready_write = os.pipe()
    if os.fork():  # the caller's step ends when every port listens (they already do)
        os.close(ready_write)
        os.read(ready_read, 1)
        return 0
    os.setsid()
    os.close(ready_read)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.write(ready_write, b"1")
    os.close(ready_write)
    threads = [
        threading.Thread(target=_serve, args=(listener, path, target), daemon=True)
        for listener, target in listeners
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
