"""Errors meant for the user: the CLI prints them as one line, without a traceback."""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """Bad input or configuration: a one-line message that names the file, line or field."""


def located(path: Path | str, message: str, line: int | None = None) -> UserError:
    where = f"{path}:{line}" if line is not None else str(path)
    return UserError(f"{where}: {message}")
