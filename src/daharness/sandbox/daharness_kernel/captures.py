"""The chart-capture channel: captures reach the host through the kernel, never through the workspace.

The kernel listens on an abstract Unix socket (a name, no file: nothing in the workspace or /tmp can
stand in for it) and puts its address in ``DAHARNESS_CHART_CAPTURE``, so the hook in the kernel and in
every child Python (installed by the sitecustomize on PYTHONPATH) sends each capture there and waits for
the acknowledgement. The kernel hands the captures received during a step to the host with that step's
reply; the host keeps them in a folder of its own. A file the agent writes is never read as a capture.

The socket is private to the sandbox's network namespace (bwrap) and its name is random (unsafe-local).
Code that runs in the sandbox can still connect to it: see docs/scoring-integrity.md for what an agent
that tampers with its own processes can do.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
from typing import Any

ENV_VARIABLE = "DAHARNESS_CHART_CAPTURE"
MAX_CAPTURE_BYTES = 64 << 20  # one capture; a bigger one is dropped and noted
MAX_PENDING = 256  # captures kept between two replies; more are dropped and noted
_ACK = b"ok\n"
_CLIENT_TIMEOUT_S = 30.0


class CaptureInbox:
    """Receives captures on an abstract socket; `take()` returns (and forgets) those received so far."""

    def __init__(self) -> None:
        self.address = f"daharness-capture-{secrets.token_hex(16)}"
        self._items: list[dict[str, Any]] = []
        self._dropped: list[str] = []
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind("\0" + self.address)
        self._server.listen(16)

    def start(self) -> None:
        """Accept captures in a thread and tell child processes where to send theirs."""
        os.environ[ENV_VARIABLE] = "@" + self.address
        threading.Thread(target=self._serve, daemon=True, name="daharness-captures").start()

    def take(self) -> tuple[list[dict[str, Any]], list[str]]:
        with self._lock:
            items, dropped = self._items, self._dropped
            self._items, self._dropped = [], []
        return items, dropped

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                continue
            threading.Thread(target=self._receive, args=(connection,), daemon=True).start()

    def _receive(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(_CLIENT_TIMEOUT_S)
            data = bytearray()
            try:
                while chunk := connection.recv(1 << 20):
                    data += chunk
                    if len(data) > MAX_CAPTURE_BYTES:
                        self._drop(f"a capture larger than {MAX_CAPTURE_BYTES >> 20} MB was dropped")
                        return
                capture = json.loads(data)
            except (OSError, ValueError):
                self._drop("an unreadable capture was dropped")
                return
            if not isinstance(capture, dict):
                self._drop("a capture that is not an object was dropped")
                return
            with self._lock:
                if len(self._items) >= MAX_PENDING:
                    self._dropped.append(f"more than {MAX_PENDING} captures in one step: the rest dropped")
                else:
                    self._items.append(capture)
            with contextlib.suppress(OSError):
                connection.sendall(_ACK)

    def _drop(self, reason: str) -> None:
        with self._lock:
            self._dropped.append(reason)
