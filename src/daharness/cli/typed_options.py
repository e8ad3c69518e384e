"""Flags made from typed options (`core/options.py`): an agent's options on `run`, a family's rescoring
options on `score`, its generation options on `generate <name>`.

Each field is a flag named after it (`memory_window` -> `--memory-window`), a bool field a switch
(`--clarify/--no-clarify`). The flag takes the value as text and leaves its default unset, so that what
the user gave is known, and the model checks it: one rule says what is wrong with any of them, naming the
option as it was given."""

from __future__ import annotations

import inspect
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import typer

from daharness.core.errors import UserError

if TYPE_CHECKING:  # pydantic is imported by the families, not for `daharness --help`
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

T = TypeVar("T", bound="BaseModel")
_METAVARS = {int: "<int>", float: "<float>", Path: "<path>", str: "<str>"}  # as typer shows its own


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _bare(annotation: Any) -> Any:
    """`X | None` -> X."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def is_switch(info: FieldInfo) -> bool:
    return _bare(info.annotation) is bool


def type_name(info: FieldInfo) -> str:
    """The value a field takes, as help shows it: <int>, <path>, <pyautogui|json>."""
    bare = _bare(info.annotation)
    if bare is bool:
        return "<bool>"
    if get_origin(bare) is Literal:
        return "<" + "|".join(str(choice) for choice in get_args(bare)) + ">"
    return _METAVARS.get(bare, "<str>")


def default_text(info: FieldInfo) -> str:
    """The default as help shows it; "" for none (a required field, or None)."""
    if info.is_required() or info.default is None:
        return ""
    return str(info.default)


def described(info: FieldInfo) -> str:
    text = info.description or ""
    default = default_text(info)
    return f"{text} (default: {default})" if default and not is_switch(info) else text


def parameter(name: str, info: FieldInfo, help: str, panel: str | None = None) -> inspect.Parameter:
    """The command's parameter for the field `name`: no value unless given."""
    if is_switch(info):
        kind: Any = bool | None
        option = typer.Option(f"{flag(name)}/--no-{flag(name)[2:]}", help=help, rich_help_panel=panel)
    else:
        kind = str | None
        option = typer.Option(flag(name), help=help, metavar=type_name(info), rich_help_panel=panel)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[kind, option]
    )


@dataclass
class Given:
    """Typed options as the command line gave them: their values, and how each was given (`--history`,
    `-A history`), so that an error names what the user typed."""

    values: dict[str, Any] = field(default_factory=dict)
    spelled: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, value: Any, spelled: str) -> None:
        if name in self.values:
            raise UserError(f"{spelled}: given twice (also as {self.spelled[name]})")
        self.values[name], self.spelled[name] = value, spelled

    def add_pairs(self, pairs: list[str], option: str) -> None:
        """`KEY=VALUE` pairs (`-A history=5`); a key may be written with dashes (`memory-window`)."""
        for pair in pairs:
            key, equals, value = pair.partition("=")
            if not equals or not key.strip():
                raise UserError(f"{option} {pair!r}: give KEY=VALUE, e.g. {option} memory_window=10")
            self.add(key.strip().replace("-", "_"), value.strip(), f"{option} {key.strip()}")

    def spell(self, name: str) -> str:
        return self.spelled.get(name, flag(name))

    def parsed(self, model: type[T], owner: str, only: Mapping[str, Any] | None = None) -> T:
        """The given values (or `only` these) checked as `model`; a one-line UserError naming the option."""
        from daharness.core.options import parse_options

        values = self.values if only is None else only
        return parse_options(model, values, owner=owner, spell=self.spell)


def typed_parameters(
    models: Mapping[str, type[BaseModel]], taken: set[str], panel: str | None = None, prefix: bool = False
) -> list[inspect.Parameter]:
    """One parameter per field of the models (by owner), in order; a field that several declare stands
    once (its help names them all with `prefix`); a field named like one of the command's own parameters
    (`taken`) stands on no flag."""
    owners: dict[str, list[str]] = {}
    infos: dict[str, FieldInfo] = {}
    for owner, model in models.items():
        for name, info in model.model_fields.items():
            if name not in taken:
                owners.setdefault(name, []).append(owner)
                infos.setdefault(name, info)
    return [
        parameter(name, infos[name], f"{'/'.join(owners[name])}: " * prefix + described(infos[name]), panel)
        for name in owners
    ]


def given_of(parameters: list[inspect.Parameter], values: dict[str, Any], into: Given) -> None:
    """Move the typed parameters' values that were given out of `values` into `into`."""
    for param in parameters:
        value = values.pop(param.name)
        if value is not None:
            into.add(param.name, value, flag(param.name))


def option_rows(model: type[BaseModel]) -> list[tuple[str, str, str, str]]:
    """(flag, type, default, help) per field, for `daharness agents NAME`."""
    rows = []
    for name, info in model.model_fields.items():
        default = (
            "required" if info.is_required() else ("none" if info.default is None else str(info.default))
        )
        rows.append((flag(name), type_name(info), default, info.description or ""))
    return rows
