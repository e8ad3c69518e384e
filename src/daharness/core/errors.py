"""Errors that cross package borders: what the user did wrong, and what failed outside the agent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the command line imports this module before it needs pydantic
    from pydantic import ValidationError


class UserError(Exception):
    """Bad input or configuration: a one-line message that names the file, line or field."""


def located(path: Path | str, message: str, line: int | None = None) -> UserError:
    where = f"{path}:{line}" if line is not None else str(path)
    return UserError(f"{where}: {message}")


def first_problem(exc: ValidationError) -> str:
    """A pydantic error as one line naming the field: `field 'scorers.0.name': Field required`."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"field {where!r}: {plain_message(first)}" if where else plain_message(first)


def plain_message(error: Any) -> str:
    """A pydantic error's message in our words: a validator's own text without pydantic's
    "Value error, " in front of it."""
    message = str(error["msg"])
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


# pydantic's wording and ours (the command line's usage errors, in newer typers pydantic's, say the same)
PYDANTIC_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Input should be greater than or equal to (.*)$"), r"must be at least \1"),
    (re.compile(r"^Input should be less than or equal to (.*)$"), r"must be at most \1"),
    (re.compile(r"^Input should be greater than (.*)$"), r"must be more than \1"),
    (re.compile(r"^Input should be less than (.*)$"), r"must be less than \1"),
    (re.compile(r"^Input should be a valid integer.*$"), "must be a whole number"),
    (re.compile(r"^Input should be a valid number.*$"), "must be a number"),
    (re.compile(r"^Input should be a valid boolean.*$"), "must be true or false"),
    (re.compile(r"^Input should be ('.*)$"), r"choose \1"),  # a Literal's values
)


def in_our_words(message: str) -> str:
    for pattern, words in PYDANTIC_WORDS:
        message = pattern.sub(words, message)
    return message


class InfrastructureError(Exception):
    """The harness, not the agent, failed (a crashed reference solution, a missing file, an API outage).

    Recorded as `error`, reported apart from wrong answers, and retried when the run resumes. The
    trajectory so far (a list of event dicts) travels with it so that nothing the agent did is lost.
    """

    def __init__(
        self, message: str, trajectory: list[Any] | None = None, *, unreachable: bool = False
    ) -> None:
        super().__init__(message)
        self.trajectory = trajectory or []
        self.unreachable = unreachable  # a model endpoint that could not be connected to at all


class AgentFailure(Exception):
    """The agent's own code broke the sample: its kernel died or answered garbage and no fresh kernel
    would take over, or its files could not be collected. A wrong answer, not an infrastructure error:
    the sample is scored 0 with this reason and is not retried, so breaking the harness on purpose
    cannot turn a wrong answer into an `error` that the accuracy leaves out."""

    def __init__(self, message: str, trajectory: list[Any] | None = None) -> None:
        super().__init__(message)
        self.trajectory = trajectory or []
