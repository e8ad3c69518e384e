"""What the commands share: the consoles, the `--debug` switch, option types and small helpers."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
debug = {"on": False}


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


class CacheMode(StrEnum):
    on = "on"
    off = "off"
    refresh = "refresh"


def id_list(ids: str | None) -> list[str] | None:
    # `--ids ""` or `--ids ,` is an empty list, which select_tasks refuses (never "every task")
    return None if ids is None else [i.strip() for i in ids.split(",") if i.strip()]


def default_cache_path() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "daharness" / "responses.sqlite"


def print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        err.print(f"[yellow]warning[/]: {escape(warning)}")
