"""What the commands share: the consoles, the `--debug` switch, option types and small helpers."""

from __future__ import annotations

import os
import threading
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

INFRASTRUCTURE_EXIT = 3  # the run's samples failed for reasons outside the agent (2: bad input)

debug = {"on": False}
_consoles: dict[bool, Console] = {}
_consoles_lock = threading.Lock()  # one console each, even when threads first print at once


def console(stderr: bool = False) -> Console:
    """The console of standard output or of standard error, made on first use: importing rich costs
    about 0.1 s, which `daharness --help` does not need."""
    with _consoles_lock:
        if stderr not in _consoles:
            from rich.console import Console

            _consoles[stderr] = Console(stderr=stderr, soft_wrap=True)
        return _consoles[stderr]


def __getattr__(name: str) -> Console:
    # `out` and `err` (`from daharness.cli.options import out` inside a command), made on first use
    if name == "out":
        return console(stderr=False)
    if name == "err":
        return console(stderr=True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _set_debug(value: bool) -> None:
    if value:
        debug["on"] = True


DebugOption = Annotated[
    bool,
    typer.Option(
        "--debug",
        help="Show a Python traceback with an error.",
        callback=_set_debug,
        is_eager=True,
        expose_value=False,
    ),
]
SuiteOption = Annotated[
    str,
    typer.Option("--suite", "-s", help="Built-in suite name, or FORMAT:PATH (dabench:QUESTIONS.jsonl, ...)."),
]
JsonOption = Annotated[Path | None, typer.Option("--json", help="Write the figures as JSON.")]
ScoringSandboxOption = Annotated[
    str,
    typer.Option(
        "--sandbox",
        help="Where the agents' files are read while scoring: 'bwrap' (a confined worker, default) or "
        "'unsafe-local' (unconfined, for files you trust).",
    ),
]


class CacheMode(StrEnum):
    on = "on"
    off = "off"
    refresh = "refresh"


def id_list(ids: str | None) -> list[str] | None:
    # `--ids ""` or `--ids ,` is an empty list, which select_tasks refuses (never "every task")
    return None if ids is None else [i.strip() for i in ids.split(",") if i.strip()]


def default_cache_path() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "daharness" / "responses.sqlite"


BUILTIN_EXECUTORS = ("local", "ray")


def check_cheap_options(argv: list[str]) -> None:
    """Option values that need no family, checked before the families are imported to add their options
    (seconds on a busy machine): a mistyped `run --backend` answers at once. An executor a plugin may
    register is left to the full check."""
    from daharness.core.errors import UserError

    if next((arg for arg in argv if not arg.startswith("-")), None) != "run":
        return
    backend = _value_of("--backend", argv)
    if backend is None or backend in BUILTIN_EXECUTORS:
        return
    from importlib.metadata import entry_points

    from daharness.core.registry import ENTRY_POINT_GROUP

    if not entry_points(group=ENTRY_POINT_GROUP):
        raise UserError(f"--backend: unknown executor {backend!r}; known: {', '.join(BUILTIN_EXECUTORS)}")


def start_run_early(argv: list[str]) -> None:
    """For `run` on this machine's bwrap sandboxes (as its options say, read here without the families),
    start the kernel template before anything else: it imports numpy and pandas on the other core (about
    0.7 s) while this process imports the families and loads the suite, which is a one-sample run's
    critical path. `run` itself stops it where its parsed options say it is not used."""
    words = [arg for arg in argv if not arg.startswith("-")]
    if words[:1] != ["run"] or "--help" in argv or "-h" in argv:
        return
    backend, sandbox = _value_of("--backend", argv), _value_of("--sandbox", argv)
    if backend not in (None, "local") or sandbox not in (None, "bwrap"):
        return
    from daharness.core.limits import Limits
    from daharness.sandbox.template import start_kernel_template

    memory = _value_of("--memory-mb", argv)
    start_kernel_template(int(memory) if memory and memory.isdigit() else Limits().memory_mb)


def _value_of(option: str, argv: list[str]) -> str | None:
    """The last value given to `option` (`--option VALUE` or `--option=VALUE`)."""
    value = None
    for index, arg in enumerate(argv):
        if arg == option and index + 1 < len(argv):
            value = argv[index + 1]
        elif arg.startswith(option + "="):
            value = arg.split("=", 1)[1]
    return value


def error_line(message: str) -> None:
    """An error as one line (`error: ...`), whatever its length and the terminal's width."""
    from rich.markup import escape

    console(stderr=True).print(
        f"[red]error[/]: {escape(' '.join(message.split()))}", highlight=False, soft_wrap=True
    )


def print_warnings(warnings: list[str]) -> None:
    from rich.markup import escape

    for warning in warnings:
        console(stderr=True).print(f"[yellow]warning[/]: {escape(warning)}")


def scoring_confined(sandbox: str) -> bool:
    """Whether `--sandbox` confines the scoring of agents' files (refused when bwrap cannot work)."""
    from daharness.core.errors import UserError
    from daharness.sandbox import UNSAFE_BACKEND, check_backend

    if sandbox not in ("bwrap", UNSAFE_BACKEND):
        raise UserError(f"--sandbox: choose 'bwrap' or '{UNSAFE_BACKEND}', not {sandbox!r}")
    check_backend(sandbox)
    if sandbox == UNSAFE_BACKEND:
        console(stderr=True).print(
            "[bold red]warning: --sandbox unsafe-local reads the agents' files unconfined[/]"
        )
    return sandbox == "bwrap"
