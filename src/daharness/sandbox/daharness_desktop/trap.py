"""The official VM's DevTools ports, held by the controller so that a connection to them is seen.

The browser has no debugging port here (its DevTools is a pipe of the controller's), so an honest agent
has no reason to connect to one; code that looks for the harness's browser where the official VM has it
(1337, and 9222 where its setup forwards it) is counted, and the harness flags the sample. Holding the
ports also keeps agent code from serving a made-up endpoint there. Each connection is closed at once.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class PortTrap:
    def __init__(self, ports: list[int]) -> None:
        self.connections: dict[int, int] = {port: 0 for port in ports}
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        for port in ports:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", port))
            listener.listen(64)
            self._sockets.append(listener)
            threading.Thread(target=self._accept, args=(listener, port), daemon=True).start()

    def _accept(self, listener: socket.socket, port: int) -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # closed
                return
            with self._lock:
                self.connections[port] += 1
            with contextlib.suppress(OSError):
                connection.close()

    def counts(self) -> dict[int, int]:
        with self._lock:
            return {port: count for port, count in self.connections.items() if count}

    def close(self) -> None:
        for listener in self._sockets:
            with contextlib.suppress(OSError):
                listener.close()
