"""Typed options of what a plugin adds besides scorers: an agent's options (`@agent(name, options=...)`) and
a family's command options (rescoring, generation). Each is a pydantic model; the command line makes its
flags from the fields (`--memory-window` from `memory_window`, the field's description as the help), and
what the user gives is checked against the model before any work starts, as one line naming the option."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from daharness.core.errors import UserError, in_our_words, plain_message

T = TypeVar("T", bound=BaseModel)


class TypedOptions(BaseModel):
    """Base of typed options: an unknown key is an error naming it; the values are read only."""

    # built when first checked: registering the families defines models that most commands never use
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def option_name(field: str) -> str:
    """How a field is named where no command line spells it: `option 'memory_window'`."""
    return f"option {field!r}"


def parse_options(
    model: type[T], raw: Mapping[str, Any] | T, *, owner: str, spell: Callable[[str], str] = option_name
) -> T:
    """`raw` checked as `model`; what is wrong is a one-line UserError naming the option as `spell` writes
    it (`--memory-window`) and the `owner` (`agent 'react'`, `--dacode-eval`)."""
    if isinstance(raw, model):
        return raw
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise UserError(_problem(model, exc.errors(), owner, spell)) from None


def _problem(model: type[BaseModel], errors: list[Any], owner: str, spell: Callable[[str], str]) -> str:
    missing = [str(error["loc"][0]) for error in errors if error["type"] == "missing" and error["loc"]]
    if missing:
        return f"{owner} needs {_listed([spell(name) for name in missing])}"
    first = errors[0]
    if not first["loc"]:  # the model's own check across its fields: its message names them
        return f"{owner}: {plain_message(first)}"
    name = str(first["loc"][0])
    if first["type"] == "extra_forbidden":
        known = ", ".join(spell(field) for field in model.model_fields) or "none"
        return f"{spell(name)}: not an option of {owner} (its options: {known})"
    return f"{spell(name)}: {in_our_words(plain_message(first))} ({owner})"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
