"""The in-sandbox kernel: a persistent Python process that runs Python, Bash and SQL steps.

This file runs *inside* the sandbox as a standalone program (standard library only; daharness itself is
not importable there). The host talks to it with one JSON object per line on the kernel's original
stdin/stdout, which the kernel moves to private descriptors at start-up. Descriptors 1 and 2 then point
at pipes drained by reader threads that keep the head and tail of each step's output, so output written
by C code or child processes is captured as well and can never corrupt the protocol.

Requests: {"kind": "python", "code", "timeout"} | {"kind": "bash", "command", "timeout"} |
{"kind": "sql", "database", "query", "output", "timeout"}. Each gets one response with stdout, stderr,
error (name, value, traceback), truncated, exit_status and duration.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import linecache
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

_SENTINEL = f"\x00daharness-step-{uuid.uuid4().hex}\x00".encode()
_KERNEL_PID = os.getpid()
_KERNEL_FILES = {"<string>", globals().get("__file__", "<string>")}  # frames of the kernel itself
_LIMITS = {
    "memory_bytes": resource.RLIMIT_AS,
    "cpu_seconds": resource.RLIMIT_CPU,
    "processes": resource.RLIMIT_NPROC,
    "file_bytes": resource.RLIMIT_FSIZE,
}


class StepTimeout(BaseException):
    """Raised in user code when a step's time is up (a BaseException so `except Exception` can't eat it)."""


class CappedStream:
    """Drains one pipe in a thread; keeps the first and last `cap // 2` bytes of each step."""

    def __init__(self, read_fd: int, cap: int) -> None:
        self.read_fd, self.half = read_fd, max(cap // 2, 1)
        self.lock = threading.Lock()
        self.marker_seen = threading.Event()
        self._reset()
        threading.Thread(target=self._drain, daemon=True).start()

    def _reset(self) -> None:
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def _keep(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def _drain(self) -> None:
        carry = b""
        while chunk := os.read(self.read_fd, 1 << 16):
            data = carry + chunk
            while (index := data.find(_SENTINEL)) >= 0:
                with self.lock:
                    self._keep(data[:index])
                self.marker_seen.set()
                data = data[index + len(_SENTINEL) :]
            keep = len(_SENTINEL) - 1  # a marker may be split across reads
            with self.lock:
                self._keep(data[:-keep] if len(data) > keep else b"")
            carry = data[-keep:] if len(data) > keep else data

    def take(self) -> tuple[str, int]:
        """The step's text (head, cut notice, tail) and how many bytes were cut."""
        with self.lock:
            cut = self.total - len(self.head) - len(self.tail)
            text = self.head.decode("utf-8", "replace")
            if cut > 0:
                text += f"\n[... {cut:,} bytes of output cut ...]\n"
            text += self.tail.decode("utf-8", "replace")
            self._reset()
        return text, max(cut, 0)


class Kernel:
    def __init__(self, config: dict[str, Any]) -> None:
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

    # ---- protocol -----------------------------------------------------------------------------------

    def serve(self) -> None:
        self._send({"ready": True, "pid": os.getpid(), "uid": os.getuid()})
        for line in self.proto_in:
            request = json.loads(line)
            started = time.perf_counter()
            _reap_untracked_zombies()  # children of the last step that exited after it ended
            handlers = {
                "python": self._python,
                "bash": self._bash,
                "sql": self._sql,
                "write_file": self._write_file,
            }
            handler = handlers.get(request.get("kind"))
            if handler is None:
                result = {"error": _error("ValueError", f"unknown request kind {request.get('kind')!r}")}
            else:
                result = handler(request)
            if os.getpid() != _KERNEL_PID:  # a fork of the kernel must never answer
                os._exit(0)
            _reap_untracked_zombies()
            self._end_step(result, started)

    def _send(self, message: dict[str, Any]) -> None:
        self.proto_out.write(json.dumps(message) + "\n")
        self.proto_out.flush()

    def _end_step(self, result: dict[str, Any], started: float) -> None:
        for stream, fd in zip(self.streams, (1, 2), strict=True):
            stream.marker_seen.clear()
            os.write(fd, _SENTINEL)
        for stream in self.streams:
            stream.marker_seen.wait(5)
        (stdout, cut_out), (stderr, cut_err) = (stream.take() for stream in self.streams)
        result.update(stdout=stdout, stderr=stderr, truncated=bool(cut_out or cut_err))
        result["duration_s"] = round(time.perf_counter() - started, 6)
        if self.count_processes:  # only meaningful in the sandbox's own PID namespace
            result["processes"] = _peak_process_count(self.process_limit)
        self._send(result)

    # ---- actions ------------------------------------------------------------------------------------

    def _python(self, request: dict[str, Any]) -> dict[str, Any]:
        code, timeout = request["code"], float(request.get("timeout", 60))
        linecache.cache["<cell>"] = (
            len(code),
            None,
            code.splitlines(keepends=True),
            "<cell>",
        )  # source in tracebacks
        try:
            body, last = _split_last_expression(code)
        except SyntaxError:
            return {"error": _exception_error(*sys.exc_info()[:2], None)}
        signal.signal(signal.SIGALRM, _raise_timeout)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            exec(body, self.namespace)
            if last is not None:
                value = eval(last, self.namespace)
                if value is not None:
                    print(repr(value))
        except StepTimeout:
            return {
                "error": _error("TimeoutError", f"step exceeded {timeout:g} s and was interrupted"),
                "timed_out": True,
            }
        except BaseException as exc:  # user code may raise anything, SystemExit included
            if os.getpid() != _KERNEL_PID:
                os._exit(1)
            return {"error": _exception_error(type(exc), exc, exc.__traceback__)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if os.getpid() != _KERNEL_PID:
                os._exit(0)
            sys.stdout.flush()
            sys.stderr.flush()
        return {}

    def _bash(self, request: dict[str, Any]) -> dict[str, Any]:
        timeout = float(request.get("timeout", 60))
        try:
            process = subprocess.Popen(
                ["/bin/bash", "-c", request["command"]], stdin=subprocess.DEVNULL, start_new_session=True
            )
        except OSError as exc:
            return {"error": _error(type(exc).__name__, str(exc)), "exit_status": None}
        try:
            status = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            process.wait()
            return {
                "error": _error("TimeoutError", f"command exceeded {timeout:g} s and was killed"),
                "exit_status": None,
                "timed_out": True,
            }
        return {"exit_status": status}

    def _write_file(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            target = Path(request["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(request["content"], encoding="utf-8")
        except OSError as exc:
            return {"error": _error(type(exc).__name__, str(exc))}
        return {}

    def _sql(self, request: dict[str, Any]) -> dict[str, Any]:
        database, query, output = request["database"], request["query"], request.get("output")
        if not os.path.exists(database):
            return {"error": _error("FileNotFoundError", f"database {database!r} does not exist")}
        signal.signal(signal.SIGALRM, _raise_timeout)
        signal.setitimer(signal.ITIMER_REAL, float(request.get("timeout", 60)))
        try:
            columns, rows = _run_query(database, query)
            if output:
                _write_csv(output, columns, rows)
                print(f"{len(rows)} rows written to {output}")
            elif columns:
                print(_format_table(columns, rows))
            else:
                print("query executed successfully without output")
        except StepTimeout:
            return {
                "error": _error("TimeoutError", "query exceeded its time and was interrupted"),
                "timed_out": True,
            }
        except Exception as exc:
            return {"error": _error(type(exc).__name__, str(exc))}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return {}


def _reap_untracked_zombies() -> None:
    """Reap exited children that no Popen or multiprocessing object will wait for (e.g. after a fork
    bomb): a zombie keeps its process slot, and the process limit would stay used up for the sample."""
    zombies = []
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state == "Z":
                zombies.append(int(pid))
    if not zombies:
        return
    import gc
    import multiprocessing.process

    tracked = {o.pid for o in gc.get_objects() if isinstance(o, subprocess.Popen)}
    tracked |= {child.pid for child in getattr(multiprocessing.process, "_children", set())}
    for pid in zombies:
        if pid not in tracked:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def _peak_process_count(limit: int) -> int:
    """Processes in the sandbox; when they crowd the limit, the peak of a few looks, since a fork bomb's
    processes keep exiting and being replaced."""
    peak = sum(name.isdigit() for name in os.listdir("/proc"))
    if limit and peak >= limit // 2:
        for _ in range(10):
            time.sleep(0.003)
            peak = max(peak, sum(name.isdigit() for name in os.listdir("/proc")))
    return peak


def _raise_timeout(signum: int, frame: Any) -> None:
    raise StepTimeout


def _split_last_expression(code: str) -> tuple[Any, Any]:
    """Compile code like a notebook cell: a final bare expression is evaluated and its repr printed."""
    tree = ast.parse(code, filename="<cell>", mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), "<cell>", "eval")
    return compile(tree, "<cell>", "exec"), last


def _error(name: str, value: str, trace: str = "") -> dict[str, str]:
    return {"name": name, "value": value, "traceback": trace}


def _exception_error(kind: Any, exc: BaseException | None, tb: Any) -> dict[str, str]:
    frames = traceback.extract_tb(tb) if tb is not None else []
    user_frames = [frame for frame in frames if frame.filename not in _KERNEL_FILES]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(user_frames)]
    lines += traceback.format_exception_only(kind, exc)
    return _error(kind.__name__, str(exc), "".join(lines))


def _run_query(database: str, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    if database.endswith((".duckdb", ".ddb")):
        import duckdb

        with duckdb.connect(database) as connection:
            cursor = connection.execute(query)
            columns = [d[0] for d in cursor.description] if cursor.description else []
            return columns, cursor.fetchall() if columns else []
    import sqlite3

    connection = sqlite3.connect(database)
    try:
        cursor = connection.executescript(query) if query.count(";") > 1 else connection.execute(query)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        rows = cursor.fetchall() if columns else []
        connection.commit()
        return columns, rows
    finally:
        connection.close()


def _write_csv(path: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)


def _format_table(columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    cells = [columns, *[["NULL" if v is None else str(v) for v in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = [
        " | ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)) for row in cells
    ]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return "\n".join(lines) + f"\n({len(rows)} rows)"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


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


def _install_chart_capture(path: str | None) -> None:
    """Figures the agent saves or shows are also written as data (<image>.json) for chart scoring."""
    if not path or not os.path.exists(path):
        return
    import importlib.util

    try:
        spec = importlib.util.spec_from_file_location("chart_capture", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        module.install_from_env()
    except Exception:  # the hook must never keep the kernel from starting
        pass


def main() -> None:
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    _apply_limits(config)
    if config.get("workdir"):
        os.chdir(config["workdir"])
    _install_chart_capture(config.get("chart_capture"))
    Kernel(config).serve()


if __name__ == "__main__":
    main()
