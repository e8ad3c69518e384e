"""The kinds of step: Python in the persistent namespace, a Bash command, a SQL query, a file write, and
pyautogui code on the desktop's screen.

Each returns a dict with `error` (name, value, traceback) and, where it applies, `exit_status` and
`timed_out`; the server adds the captured output.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import contextlib
import importlib.machinery
import linecache
import os
import select
import signal
import subprocess
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

KERNEL_PID = os.getpid()
_KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))


class StepTimeout(BaseException):
    """Raised in user code when a step's time is up (a BaseException so `except Exception` can't eat it)."""


def run_python(namespace: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    code, timeout = request["code"], float(request.get("timeout", 60))
    linecache.cache["<cell>"] = (len(code), None, code.splitlines(keepends=True), "<cell>")
    try:
        body, last = _split_last_expression(code)
    except (SyntaxError, ValueError):  # ValueError: source code with a NUL byte
        return {"error": _exception_error(*sys.exc_info()[:2], None)}
    signal.signal(signal.SIGALRM, _raise_timeout)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        exec(body, namespace)
        if last is not None:
            value = eval(last, namespace)
            if value is not None:
                print(repr(value))
    except StepTimeout:
        return {
            "error": error("TimeoutError", f"step exceeded {timeout:g} s and was interrupted"),
            "timed_out": True,
        }
    except BaseException as exc:  # user code may raise anything, SystemExit included
        if os.getpid() != KERNEL_PID:
            os._exit(1)
        return {"error": _exception_error(type(exc), exc, exc.__traceback__)}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if os.getpid() != KERNEL_PID:  # a fork of the kernel must never answer
            os._exit(0)
        sys.stdout.flush()
        sys.stderr.flush()
    return {}


def run_pyautogui(request: dict[str, Any]) -> dict[str, Any]:
    """pyautogui code as the paper's agents write it: pyautogui and time come imported, and each action
    runs in a namespace of its own (nothing is shared between actions). The fail-safe is off, as in the
    official controller: a move to a corner of the screen is an action like any other."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    try:
        import pyautogui

        pyautogui.FAILSAFE = False
    except Exception as exc:  # no display, or the package is missing
        return {"error": error(type(exc).__name__, f"pyautogui is not usable here: {exc}")}
    import time

    namespace.update(pyautogui=pyautogui, time=time)
    return run_python(namespace, request)


def run_bash(request: dict[str, Any]) -> dict[str, Any]:
    timeout = float(request.get("timeout", 60))
    try:
        process = subprocess.Popen(
            ["/bin/bash", "-c", request["command"]], stdin=subprocess.DEVNULL, start_new_session=True
        )
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the command
        return {"error": error(type(exc).__name__, str(exc)), "exit_status": None}
    if not _ended_within(process.pid, timeout):
        _kill_group(process.pid)
        process.wait()
        return _command_timed_out(timeout)
    return {"exit_status": process.wait()}


def run_script(request: dict[str, Any]) -> dict[str, Any]:
    """`python PATH ARGS...` as a fork of this kernel, which has its libraries imported already: the
    script runs as `__main__` with its folder first on the import path, in a session of its own, and
    ends as a Python process does (its exit status, a traceback and status 1 for an exception). The
    host asks for it only while the kernel has run no code of the agent's (see kernel_client)."""
    timeout = float(request.get("timeout", 60))
    path, args = str(request["path"]), [str(arg) for arg in request.get("args", [])]
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os._exit(_script_in_fork(path, args))
    timed_out = not _ended_within(pid, timeout)
    if timed_out:
        _kill_group(pid)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return _command_timed_out(timeout)
    return {"exit_status": os.waitstatus_to_exitcode(status)}


def _ended_within(pid: int, timeout: float) -> bool:
    """Whether the child `pid` ended within `timeout` seconds (it is left to be reaped). Its pidfd wakes
    us as it ends: Popen.wait's timeout polls with doubling sleeps, which made a 2 ms command a 5 ms step."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:  # a kernel before 5.3: look every millisecond
        deadline = time.monotonic() + timeout
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)
        return True
    try:
        watch = select.poll()  # not select.select: the agent's open files may push the pidfd past 1024
        watch.register(handle, select.POLLIN)
        return bool(watch.poll(max(timeout, 0.0) * 1000))
    finally:
        os.close(handle)


def _command_timed_out(timeout: float) -> dict[str, Any]:
    return {
        "error": error("TimeoutError", f"command exceeded {timeout:g} s and was killed"),
        "exit_status": None,
        "timed_out": True,
    }


def _script_in_fork(path: str, args: list[str]) -> int:
    code, full = 1, os.path.abspath(path)
    try:
        os.setsid()
        # as a process the kernel starts: standard descriptors only (never the kernel's own channels)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        signal.setitimer(signal.ITIMER_REAL, 0)
        for number in (signal.SIGALRM, signal.SIGTERM):
            signal.signal(number, signal.SIG_DFL)
        # a new process's seeds: two scripts must not draw the same "random" numbers (Python's `random`
        # reseeds at fork itself, numpy's global generator does not)
        if (numpy := sys.modules.get("numpy")) is not None:
            numpy.random.seed()
        sys.argv = [path, *args]  # as given; __file__, the import path and tracebacks say it in full
        sys.path.insert(0, os.path.dirname(full))
        main = types.ModuleType("__main__")
        main.__dict__.update(
            __file__=full, __cached__=None, __spec__=None, __package__=None, __builtins__=builtins,
            __loader__=importlib.machinery.SourceFileLoader("__main__", full),
        )  # fmt: skip
        sys.modules["__main__"] = main
        try:
            with open(full, "rb") as source:
                content = source.read()
        except OSError as exc:
            print(
                f"python: can't open file {full!r}: [Errno {exc.errno}] {exc.strerror}",
                file=sys.stderr,
            )
            return 2
        exec(compile(content, full, "exec"), main.__dict__)
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # as Python prints it: from the script's own frames on
        trace = exc.__traceback__
        while trace is not None and trace.tb_frame.f_code.co_filename != full:
            trace = trace.tb_next  # a SyntaxError has none of its frames: printed without a traceback
        traceback.print_exception(type(exc), exc, trace)
    finally:
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
    return code


def write_file(request: dict[str, Any]) -> dict[str, Any]:
    try:
        target = Path(request["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(request["content"], encoding="utf-8")
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        return {"error": error(type(exc).__name__, str(exc))}
    return {}


def run_sql(request: dict[str, Any]) -> dict[str, Any]:
    database, query, output = request["database"], request["query"], request.get("output")
    try:
        if not os.path.exists(database):
            return {"error": error("FileNotFoundError", f"database {database!r} does not exist")}
    except ValueError as exc:
        return {"error": error("ValueError", str(exc))}
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
            "error": error("TimeoutError", "query exceeded its time and was interrupted"),
            "timed_out": True,
        }
    except Exception as exc:
        return {"error": error(type(exc).__name__, str(exc))}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {}


def error(name: str, value: str, trace: str = "") -> dict[str, str]:
    return {"name": name, "value": value, "traceback": trace}


def _raise_timeout(signum: int, frame: Any) -> None:
    raise StepTimeout


def _split_last_expression(code: str) -> tuple[Any, Any]:
    """Compile code like a notebook cell: a final bare expression is evaluated and its repr printed."""
    tree = ast.parse(code, filename="<cell>", mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), "<cell>", "eval")
    return compile(tree, "<cell>", "exec"), last


def _exception_error(kind: Any, exc: BaseException | None, tb: Any) -> dict[str, str]:
    frames = traceback.extract_tb(tb) if tb is not None else []
    user_frames = [
        frame
        for frame in frames
        if frame.filename != "<string>" and not frame.filename.startswith(_KERNEL_DIR)
    ]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(user_frames)]
    lines += traceback.format_exception_only(kind, exc)
    return error(kind.__name__, str(exc), "".join(lines))


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
