"""Errors that cross package borders: what the user did wrong, and what failed outside the agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class UserError(Exception):
    """Bad input or configuration: a one-line message that names the file, line or field."""


def located(path: Path | str, message: str, line: int | None = None) -> UserError:
    where = f"{path}:{line}" if line is not None else str(path)
    return UserError(f"{where}: {message}")


class InfrastructureError(Exception):
    """The harness, not the agent, failed (a crashed reference solution, a missing file, an API outage).

    Recorded as `error`, reported apart from wrong answers, and retried when the run resumes. The
    trajectory so far (a list of event dicts) travels with it so that nothing the agent did is lost.
    """

    def __init__(self, message: str, trajectory: list[Any] | None = None) -> None:
        super().__init__(message)
        self.trajectory = trajectory or []
