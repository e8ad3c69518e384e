"""The options the registered families declare, on the commands that take them.

Each family with a scoring mode group has a switch (`FamilyBase.mode_option`: `--mode`,
`--workspace-mode`, `--interactive-mode`, ...), and the suite formats a family loads have their options
(`FamilyBase.format_options`: `--labels`, `--instruction`, ...). A command asks for them with
`@takes_family_options(...)` and a parameter `families: FamilyChoices | None = None`, where they then
stand in its help. They are added when that command runs (`install`), so that the other commands, and
`daharness --help`, import no family.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

if TYPE_CHECKING:  # imported when a command runs, not for `daharness --help`
    from daharness.core.family import FamilyBase, FormatOption
    from daharness.core.runlog import ScoringSettings

PARAMETER = "families"
Formats = Literal["all", "data", "none"]


@dataclass
class FamilyChoices:
    """What the command line chose: a mode per mode group, and the format options given."""

    modes: dict[str, str] = field(default_factory=dict)
    formats: dict[str, Any] = field(default_factory=dict)
    owners: list[FamilyBase] = field(default_factory=list)  # the families with a mode group, in order

    def scoring(self, used: set[str] | None) -> ScoringSettings:
        """The run's modes: always those of families that ask for it (`always_record_mode`), else a
        group's mode when some task uses the group (`used`), or, with no tasks to ask (rescoring), when
        it is not the default; so run.json names the same modes as before the groups were declared."""
        from daharness.core.runlog import ScoringSettings

        modes: dict[str, str] = {}
        for family in self.owners:
            group = family.modes
            assert group is not None
            chosen = self.modes[group.name]
            wanted = chosen != group.default if used is None else group.name in used
            if family.always_record_mode or wanted:
                modes[group.name] = chosen
        return ScoringSettings(modes=modes)

    def format_options(self) -> dict[str, Any]:
        """The format options given (the others are left out, so formats that lack them never see them)."""
        return {name: value for name, value in self.formats.items() if value is not None}


@dataclass
class _Taker:
    path: tuple[str, ...]  # the command's words: ("run",), ("suites", "check")
    function: Callable[..., Any]
    command: Callable[..., Any]
    modes: tuple[str, ...] | None  # the mode groups it takes (None: every one)
    formats: Formats
    # the added parameters: name -> ("mode", group) or ("format", option); filled by `install`
    added: dict[str, tuple[str, Any]] = field(default_factory=dict)
    owners: list[FamilyBase] = field(default_factory=list)


_TAKERS: list[_Taker] = []


def takes_family_options(
    *path: str, modes: tuple[str, ...] | None = None, formats: Formats = "none"
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command (named by its words) that takes the families' mode switches (`modes`: these groups
    only) and format options (`formats`: all, or only those that say where a suite's files are)."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def command(**given: Any) -> Any:
            choices = FamilyChoices(owners=taker.owners)
            for name, (kind, what) in taker.added.items():
                value = given.pop(name)
                if kind == "mode":
                    choices.modes[what] = str(value.value)
                else:
                    choices.formats[what.name] = _format_value(what, value)
            return function(**given, **{PARAMETER: choices})

        taker = _Taker(path, function, command, modes, formats)
        command.__signature__ = _signature(function, [])  # type: ignore[attr-defined]
        _TAKERS.append(taker)
        return command

    return decorate


def install(argv: list[str]) -> None:
    """Add the family options to the command that `argv` runs (the words before its options)."""
    words = [arg for arg in argv if not arg.startswith("-")]
    for taker in _TAKERS:
        if tuple(words[: len(taker.path)]) == taker.path and not taker.added:
            _install(taker)


def _install(taker: _Taker) -> None:
    from daharness.core.registry import families

    ordered = [e.impl for _, e in sorted(families.items(), key=lambda item: (item[1].order, item[0]))]
    parameters: list[inspect.Parameter] = []
    for family in _with_modes(ordered, taker.modes):
        parameters.append(_mode_parameter(family))
        taker.added[parameters[-1].name] = ("mode", family.modes.name)  # type: ignore[union-attr]
        taker.owners.append(family)
    for option in _format_options(ordered, taker.formats):
        parameters.append(_format_parameter(option))
        taker.added[option.name] = ("format", option)
    taker.command.__signature__ = _signature(taker.function, parameters)  # type: ignore[attr-defined]


def _signature(function: Callable[..., Any], added: list[inspect.Parameter]) -> inspect.Signature:
    """The function's parameters with the family ones where its `families` parameter stands."""
    signature = inspect.signature(function, eval_str=True)
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        parameters += added if parameter.name == PARAMETER else [parameter]
    return signature.replace(parameters=parameters)


def _with_modes(ordered: list[FamilyBase], wanted: tuple[str, ...] | None) -> Iterator[FamilyBase]:
    seen: set[str] = set()
    for family in ordered:
        group = family.modes
        if group is not None and group.name not in seen and (wanted is None or group.name in wanted):
            seen.add(group.name)
            yield family


def _format_options(ordered: list[FamilyBase], formats: Formats) -> Iterator[FormatOption]:
    seen: set[str] = set()
    for family in ordered if formats != "none" else []:
        for option in family.format_options:
            if option.name not in seen and (formats == "all" or not option.variant):
                seen.add(option.name)
                yield option


def _mode_parameter(family: FamilyBase) -> inspect.Parameter:
    group = family.modes
    assert group is not None
    choices = StrEnum(f"{group.name}_modes", [(choice, choice) for choice in group.choices])  # type: ignore[misc]
    flag = family.mode_option or f"--{group.name.replace('_', '-')}-mode"
    return inspect.Parameter(
        f"{group.name}_mode",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=choices(group.default),
        annotation=Annotated[choices, typer.Option(flag, help=family.mode_help or group.help)],
    )


def _format_parameter(option: FormatOption) -> inspect.Parameter:
    kind: Any = {"path": Path | None, "flag": bool, "text": str | None}.get(option.kind)
    if option.kind == "choice":
        kind = StrEnum(option.name, [(choice, choice) for choice in option.choices]) | None  # type: ignore[misc]
    return inspect.Parameter(
        option.name,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=False if option.kind == "flag" else None,
        annotation=Annotated[kind, typer.Option(option.option, help=option.help)],
    )


def _format_value(option: FormatOption, value: Any) -> Any:
    if option.kind == "flag":
        return True if value else None
    if option.kind == "choice":
        return None if value is None else str(value.value)
    return value
