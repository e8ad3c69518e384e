"""The controller's DevTools connection to Chromium: the pipe the browser was started with
(`--remote-debugging-pipe`: it reads commands on its descriptor 3 and writes answers and events on 4, each
message JSON ended by a NUL byte). No port, no socket: only the controller and the browser hold the pipe's
ends, and both run under the desktop's user id, which agent code can neither trace nor read the
descriptors of. Every call has a time limit: a page that never answers (a script in an endless loop, a
page too large to serialise) costs one call's limit, never the controller.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
import time
from collections.abc import Callable
from typing import Any

CALL_TIMEOUT_S = 10.0
# the browser's descriptors 3 and 4 are made from the pipe ends it is handed (moved above 9 first, so that
# no end is overwritten by the other's dup2), then the browser is executed in place
_LAUNCH = (
    "import fcntl, os, sys\n"
    "ends = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]]\n"
    "os.dup2(ends[0], 3); os.dup2(ends[1], 4)\n"
    "[os.close(fd) for fd in (*ends, *map(int, sys.argv[1:3])) if fd > 4]\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)


class BrowserGone(RuntimeError):
    """No browser answers: it was closed, or it exited."""


class NotAnswering(RuntimeError):
    """A call got no answer within its time limit (the browser stays connected)."""


class BrowserPipe:
    """The two ends of a browser's DevTools pipe, from before it starts until it is connected."""

    def __init__(self) -> None:
        self.commands_in, self.commands = os.pipe()  # the browser reads commands_in
        self.answers, self.answers_out = os.pipe()  # the browser writes answers_out

    def launch_command(self, browser: list[str]) -> tuple[list[str], tuple[int, int]]:
        """The command that starts `browser` with the pipe as its descriptors 3 and 4, and the descriptors
        to pass to it."""
        ends = (self.commands_in, self.answers_out)
        return [sys.executable, "-c", _LAUNCH, *map(str, ends), *browser], ends

    def connect(self, on_event: Callable[[dict[str, Any]], None]) -> DevTools:
        """The controller's side, once the browser holds its ends (they are closed here)."""
        for fd in (self.commands_in, self.answers_out):
            os.close(fd)
        return DevTools(self.commands, self.answers, on_event)

    def close(self) -> None:
        for fd in (self.commands_in, self.commands, self.answers, self.answers_out):
            with contextlib.suppress(OSError):
                os.close(fd)


class DevTools:
    """Calls over the pipe, one at a time; events that come between answers go to `on_event`."""

    def __init__(self, commands: int, answers: int, on_event: Callable[[dict[str, Any]], None]) -> None:
        self._commands: int | None = commands
        self._answers = answers
        self._on_event = on_event
        self._buffer = b""
        self._next_id = 0

    @property
    def open(self) -> bool:
        return self._commands is not None

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = CALL_TIMEOUT_S,
    ) -> Any:
        """The call's result; NotAnswering after `timeout` seconds without its answer (a late answer is
        skipped when it comes), BrowserGone when the browser has closed the pipe, RuntimeError for the
        protocol's error answer."""
        if self._commands is None:
            raise BrowserGone("not connected to the browser")
        self._next_id += 1
        wanted = self._next_id
        message: dict[str, Any] = {"id": wanted, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        except OSError:
            self.close()
            raise BrowserGone("the browser stopped reading its commands") from None
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next_message(deadline, method, timeout)
            if answer.get("id") == wanted:
                break
            if "method" in answer:
                self._on_event(answer)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error'].get('message', answer['error'])}")
        return answer.get("result", {})

    def _next_message(self, deadline: float, method: str, timeout: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise NotAnswering(f"{method}: the browser or its page did not answer in {timeout:g} s")
            ready, _, _ = select.select([self._answers], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                self.close()
                raise BrowserGone("the browser closed its DevTools pipe")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\0")
        try:
            message = json.loads(line)
        except ValueError:
            message = {}
        return message if isinstance(message, dict) else {}

    def close(self) -> None:
        commands, self._commands = self._commands, None
        if commands is not None:
            for fd in (commands, self._answers):
                with contextlib.suppress(OSError):
                    os.close(fd)
