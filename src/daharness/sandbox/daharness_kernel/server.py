"""The kernel's main loop: apply the limits, take over the standard descriptors, answer requests.

Requests: {"kind": "python", "code", "timeout"} | {"kind": "bash", "command", "timeout"} |
{"kind": "sql", "database", "query", "output", "timeout"} | {"kind": "write_file", "path", "content"} |
{"kind": "pyautogui", "code", "timeout"} (an action on the desktop's screen, in a namespace of its own) |
{"kind": "python_script", "path", "args", "timeout"} (`python PATH ARGS` as a fork of the kernel).
Each gets one response with stdout, stderr, error (name, value, traceback), truncated, exit_status,
duration, the chart captures received during the step (`captures`, `captures_dropped`) and, in a
sandbox of its own, the number of processes.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import resource
import signal
import sys
import time
from typing import Any

from . import actions
from .captures import CaptureInbox
from .output import CappedStream
from .processes import peak_process_count, reap_untracked_zombies, track_popen_objects

_LIMITS = {
    "memory_bytes": resource.RLIMIT_AS,
    "cpu_seconds": resource.RLIMIT_CPU,
    "processes": resource.RLIMIT_NPROC,
    "file_bytes": resource.RLIMIT_FSIZE,
}


class Kernel:
    def __init__(self, config: dict[str, Any], captures: CaptureInbox | None = None) -> None:
        self.captures = captures
        self.namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        self.count_processes = bool(config.get("count_processes"))
        self.process_limit = int(config.get("limits", {}).get("processes") or 0)
        self.proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
        self.proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self.streams = []
        for fd in (1, 2):
            read_end, write_end = os.pipe()
            os.dup2(write_end, fd)
            os.close(write_end)
            self.streams.append(CappedStream(read_end, int(config.get("output_cap", 65536))))
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0, closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0, closefd=False), write_through=True)
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the kernel
        self.handlers = {
            "python": lambda request: actions.run_python(self.namespace, request),
            "bash": actions.run_bash,
            "sql": actions.run_sql,
            "write_file": actions.write_file,
            "pyautogui": actions.run_pyautogui,
            "python_script": actions.run_script,
        }

    def serve(self) -> None:
        self._send({"ready": True, "pid": os.getpid(), "uid": os.getuid()})
        for line in self.proto_in:
            started = time.perf_counter()
            reap_untracked_zombies()  # children of the last step that exited after it ended
            try:
                request = json.loads(line)
                handler = self.handlers.get(request.get("kind"))
            except ValueError as exc:
                request, handler = {}, None
                result = {"error": actions.error("ValueError", f"unreadable request: {exc}")}
            if handler is not None:
                result = handler(request)
            elif request:
                result = {
                    "error": actions.error("ValueError", f"unknown request kind {request.get('kind')!r}")
                }
            if os.getpid() != actions.KERNEL_PID:  # a fork of the kernel must never answer
                os._exit(0)
            reap_untracked_zombies()
            self._end_step(result, started)

    def _send(self, message: dict[str, Any]) -> None:
        self.proto_out.write(json.dumps(message) + "\n")
        self.proto_out.flush()

    def _end_step(self, result: dict[str, Any], started: float) -> None:
        for stream, fd in zip(self.streams, (1, 2), strict=True):
            stream.end_step(fd)
        for stream in self.streams:
            stream.marker_seen.wait(5)
        (stdout, cut_out), (stderr, cut_err) = (stream.take() for stream in self.streams)
        result.update(stdout=stdout, stderr=stderr, truncated=bool(cut_out or cut_err))
        result["duration_s"] = round(time.perf_counter() - started, 6)
        if self.captures is not None:
            result["captures"], result["captures_dropped"] = self.captures.take()
        if self.count_processes:  # only meaningful in the sandbox's own PID namespace
            result["processes"] = peak_process_count(self.process_limit)
        self._send(result)


def _apply_limits(config: dict[str, Any]) -> None:
    for key, which in _LIMITS.items():
        value = config.get("limits", {}).get(key)
        if value:
            resource.setrlimit(which, (int(value), int(value)))
    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None and os.getuid() == 0:  # root: become an unprivileged id so the limits bite
        os.setgroups([])
        os.setgid(int(gid if gid is not None else uid))
        os.setuid(int(uid))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-size write then fails with EFBIG instead


def _install_chart_capture(path: str | None) -> CaptureInbox | None:
    """Figures the agent saves or shows are captured as data for chart scoring and sent to the host
    through the capture channel (captures.py), from the kernel and from child Pythons alike."""
    if not path or not os.path.exists(path):
        return None
    import importlib.util

    try:
        inbox = CaptureInbox()
        inbox.start()
    except OSError:  # no Unix sockets: no captures, but the kernel still works
        return None
    try:
        spec = importlib.util.spec_from_file_location("chart_capture", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        module.install_from_env()
    except Exception:  # the hook must never keep the kernel from starting
        pass
    return inbox


def _seed_font_list(path: str | None) -> None:
    """Copy the harness's list of the system's fonts into this sandbox's (empty) matplotlib folder, so
    that matplotlib does not scan every font again; as the sandbox's user, who may change its copy."""
    folder = os.environ.get("MPLCONFIGDIR")
    if not path or not folder or not os.path.isfile(path):
        return
    target = os.path.join(folder, os.path.basename(path))
    try:
        os.makedirs(folder, exist_ok=True)
        if not os.path.exists(target):
            with open(path, "rb") as source, open(target, "wb") as copy:
                copy.write(source.read())
    except OSError:  # matplotlib then makes its own list
        pass


def main(config: dict[str, Any]) -> None:
    _apply_limits(config)
    _seed_font_list(config.get("font_list"))
    track_popen_objects()
    if config.get("workdir"):
        os.chdir(config["workdir"])
    sys.path.extend(config.get("python_path") or [])  # the task's private libraries (-I ignores PYTHONPATH)
    inbox = _install_chart_capture(config.get("chart_capture"))
    Kernel(config, inbox).serve()
