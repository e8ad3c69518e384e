"""The harness's side of a sandbox's desktop: it starts the controller inside the sandbox and asks it
what the screen shows.

The controller (`daharness_desktop`) is entered into the namespaces of the sandbox (mount, network,
PID, IPC, UTS: the same /tmp, loopback and process table as the agent's code) with `nsenter`, under a
user id leased for it alone, and joined to the sandbox's control groups, so its memory and processes
count against the sample's limits and it dies with the sandbox. It talks only over its own pipes.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from daharness.core.desktop import SCREEN_HEIGHT, SCREEN_WIDTH, DesktopUnavailable
from daharness.sandbox.daharness_desktop.services import A11Y_BUS, DISPLAY
from daharness.sandbox.namespaces import namespace_init
from daharness.sandbox.support import SANDBOX_KERNEL, kernel_command
from daharness.sandbox.uids import UidLease, acquire_uid

# the official VM's Chrome DevTools port and the one its setup forwards it to: here the browser's DevTools
# is a pipe of the controller's, and the controller holds these ports to see who connects (`trap.py`)
DEVTOOLS_PORTS = (1337, 9222)
_START_TIMEOUT_S = 90.0  # the display, then the browser (services.BROWSER_START_S)
_REQUEST_TIMEOUT_S = 60.0
# what the agent's code and the applications it opens need to reach the desktop
AGENT_ENV = {
    "DISPLAY": DISPLAY,
    "AT_SPI_BUS_ADDRESS": f"unix:path={A11Y_BUS}",
    "SAL_USE_VCLPLUGIN": "gtk3",  # LibreOffice's GTK front end: the one with an accessibility tree
}
# the desktop's processes (display, window manager, buses, Chromium's dozen) and the applications the agent
# opens (LibreOffice, JupyterLab and its kernels, a terminal) come on top of the agent's process limit
DESKTOP_PROCESSES = 96


class DesktopSession:
    """One desktop's controller, from the host. Started after the sandbox's kernel; stopped with it."""

    def __init__(self, *, browser: bool = False) -> None:  # True: Chromium starts with the desktop
        self.browser = browser
        self.timings: dict[str, float] = {}
        self._lease: UidLease | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._lock = threading.Lock()

    @property
    def uid(self) -> int | None:
        return self._lease.uid if self._lease else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, sandbox_pid: int, join: Callable[[list[str]], list[str]]) -> None:
        """Start the controller in the namespaces of the sandbox whose bwrap process is `sandbox_pid`
        (`join` puts a command into the sandbox's control groups) and wait until the desktop is up."""
        if self._lease is None:
            self._lease = acquire_uid()
        init = namespace_init(sandbox_pid)
        if init is None:
            raise DesktopUnavailable("the sandbox's namespaces were not found (is it running?)")
        uid = str(self._lease.uid)
        config = {
            "width": SCREEN_WIDTH,
            "height": SCREEN_HEIGHT,
            "trap_ports": list(DEVTOOLS_PORTS),
            "browser": self.browser,
        }
        command = ["nsenter", f"--target={init}", "--mount", "--net", "--pid", "--ipc", "--uts"]
        command += [f"--setuid={uid}", f"--setgid={uid}", "--"]
        controller, config_fd = kernel_command(
            sys.executable, SANDBOX_KERNEL, config, module="daharness_desktop.controller"
        )
        command += controller
        started = time.perf_counter()
        self._buffer = b""
        try:  # nsenter keeps the descriptor open for the controller, which reads and closes it
            self._process = subprocess.Popen(
                join(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                start_new_session=True,
                pass_fds=(config_fd,),
            )
        finally:
            os.close(config_fd)
        try:
            hello = self._read(time.monotonic() + _START_TIMEOUT_S)
        except DesktopUnavailable as exc:
            detail = self._stderr_tail()
            self.stop()
            raise DesktopUnavailable(
                f"the desktop did not start: {exc}{': ' + detail if detail else ''}"
            ) from None
        if not hello.get("ready"):
            self.stop()
            raise DesktopUnavailable(f"the desktop did not start: {hello.get('error', hello)}")
        self.timings = {**hello.get("timings", {}), "start_s": time.perf_counter() - started}

    def request(self, op: str, timeout: float = _REQUEST_TIMEOUT_S, **fields: Any) -> dict[str, Any]:
        """Ask the controller; its error answer becomes a RuntimeError, a silent one DesktopUnavailable."""
        with self._lock:
            process = self._process
            if process is None or process.poll() is not None or process.stdin is None:
                raise DesktopUnavailable("the desktop is not running")
            try:
                process.stdin.write(json.dumps({"op": op, **fields}).encode() + b"\n")
                process.stdin.flush()
            except OSError:
                raise DesktopUnavailable("the desktop stopped") from None
            try:
                answer = self._read(time.monotonic() + timeout)
            except DesktopUnavailable:
                # an answer that comes late would be taken for the next request's: no next request
                self.stop()
                raise
        if "error" in answer:
            error = answer["error"]
            raise RuntimeError(f"{error.get('name', 'Error')}: {error.get('value', '')}")
        return answer

    def observe(self, *, screenshot: bool, elements: bool) -> tuple[bytes | None, list[dict[str, Any]], dict]:
        answer = self.request("observe", screenshot=screenshot, elements=elements)
        image = base64.b64decode(answer["screenshot"]) if screenshot else None
        return image, answer.get("elements", []), answer.get("timings", {})

    def _read(self, deadline: float) -> dict[str, Any]:
        """One JSON line from the controller, within the deadline (it holds nothing the agent can write)."""
        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DesktopUnavailable("no answer from the desktop in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise DesktopUnavailable("the desktop stopped")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            raise DesktopUnavailable("the desktop sent an unreadable answer") from None
        if not isinstance(message, dict):
            raise DesktopUnavailable("the desktop sent an unreadable answer")
        return message

    def _stderr_tail(self) -> str:
        process = self._process
        if process is None or process.stderr is None or process.poll() is None:
            return ""
        return process.stderr.read().decode(errors="replace").strip()[-500:]

    def stop(self) -> None:
        """Stop the controller (its children die with the sandbox's processes, which the caller kills)."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def release(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None
