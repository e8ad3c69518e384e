"""The options the registered families and agents declare, on the commands that take them.

Each family with a scoring mode group has a switch (`FamilyBase.mode_option`: `--mode`,
`--workspace-mode`, `--interactive-mode`, ...), the suite formats a family loads have their options
(`FamilyBase.format_options`: `--labels`, `--instruction`, ...), a family's rescoring its options
(`FamilyBase.rescoring`: `--responses`, `--dacode-eval`, ...), and each agent its typed options
(`@agent(name, options=...)`: `--memory-window`, `--observation`, ...). A command asks for them with
`@takes_family_options(...)` and a parameter `families: FamilyChoices | None = None`, where they then
stand in its help. They are added when that command runs (`install`), so that the other commands, and
`daharness --help`, import no family. `installs(word)` registers other additions the same way (the
subcommands of `generate`).
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

from daharness.cli.typed_options import Given, flag, typed_parameters

if TYPE_CHECKING:  # imported when a command runs, not for `daharness --help`
    from daharness.core.family import FamilyBase, FormatOption
    from daharness.core.runlog import ScoringSettings

PARAMETER = "families"
AGENT_PANEL = "Agent"  # the panel of `run --help` that holds the agents' options
Formats = Literal["all", "data", "none"]
Modes = tuple[str, ...] | Callable[["FamilyBase"], bool] | None


@dataclass
class FamilyChoices:
    """What the command line chose: a mode per mode group, the format options given, and the agents' and
    the rescorings' typed options given (checked by the chosen one's model)."""

    modes: dict[str, str] = field(default_factory=dict)
    formats: dict[str, Any] = field(default_factory=dict)
    owners: list[FamilyBase] = field(default_factory=list)  # the families with a mode group, in order
    ordered: list[FamilyBase] = field(default_factory=list)  # every registered family, in order
    agent_options: Given = field(default_factory=Given)
    rescoring: Given = field(default_factory=Given)

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

    def check_modes_used(self, used: set[str], suites: str) -> None:
        """Refuse a mode switch set to other than its default when no task of the run (of `suites`) is
        scored in its group: `--workspace-mode compat` on the closed-form suite would change nothing."""
        from daharness.core.errors import UserError

        for family in self.owners:
            group = family.modes
            assert group is not None
            if self.modes[group.name] != group.default and group.name not in used:
                raise UserError(
                    f"{mode_flag(family)} {self.modes[group.name]}: no task of {suites} is scored in "
                    f"{group.name} modes (it applies to {family.title or group.name} tasks)"
                )

    def format_options(self) -> dict[str, Any]:
        """The format options given (the others are left out, so formats that lack them never see them)."""
        return {name: value for name, value in self.formats.items() if value is not None}

    def mode_of(self, family: FamilyBase) -> str:
        """The mode chosen for the family's scoring modes ("" without them)."""
        return self.modes.get(family.modes.name, family.modes.default) if family.modes is not None else ""


@dataclass
class _Taker:
    path: tuple[str, ...]  # the command's words: ("run",), ("suites", "check")
    function: Callable[..., Any]
    command: Callable[..., Any]
    modes: Modes  # the mode groups it takes (None: every one; or the families that pass a test)
    formats: Formats
    agents: bool  # the agents' typed options
    rescoring: bool  # the options of the families' rescorings
    # the added parameters: name -> (kind, what): ("mode", group), ("format", option), ("agent", None),
    # ("rescoring", None); filled by `install`
    added: dict[str, tuple[str, Any]] = field(default_factory=dict)
    owners: list[FamilyBase] = field(default_factory=list)
    ordered: list[FamilyBase] = field(default_factory=list)

    def choices(self, given: dict[str, Any]) -> FamilyChoices:
        """The added parameters' values, taken out of `given`."""
        choices = FamilyChoices(owners=self.owners, ordered=self.ordered)
        for name, (kind, what) in self.added.items():
            value = given.pop(name)
            if kind == "mode":
                choices.modes[what] = str(value.value)
            elif kind == "format":
                choices.formats[what.name] = _format_value(what, value)
            elif value is not None:
                (choices.agent_options if kind == "agent" else choices.rescoring).add(name, value, flag(name))
        return choices


_TAKERS: list[_Taker] = []
_INSTALLERS: dict[str, Callable[[], None]] = {}


def takes_family_options(
    *path: str, modes: Modes = None, formats: Formats = "none", agents: bool = False, rescoring: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command (named by its words) that takes the families' mode switches (`modes`: these groups, or
    the groups of the families that pass this test, only), format options (`formats`: all, or only those
    that say where a suite's files are), the agents' typed options (`agents`, in the Agent panel) and the
    options of the families' rescorings (`rescoring`)."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def command(**given: Any) -> Any:
            choices = taker.choices(given)  # takes the added parameters out of `given`
            return function(**given, **{PARAMETER: choices})

        taker = _Taker(path, function, command, modes, formats, agents, rescoring)
        command.__signature__ = _signature(function, [])  # type: ignore[attr-defined]
        _TAKERS.append(taker)
        return command

    return decorate


def installs(word: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Run the function before the command `word` (its subcommands too) is built: it adds what the
    registered families declare (each family's `generate` subcommand)."""

    def register(function: Callable[[], None]) -> Callable[[], None]:
        _INSTALLERS[word] = function
        return function

    return register


def install(argv: list[str]) -> None:
    """Add the family options to the command that `argv` runs (the words before its options)."""
    words = [arg for arg in argv if not arg.startswith("-")]
    for taker in _TAKERS:
        if tuple(words[: len(taker.path)]) == taker.path and not taker.added:
            _install(taker)
    if words and (installer := _INSTALLERS.pop(words[0], None)) is not None:
        installer()


def install_all() -> None:
    """Add what the families and agents declare to every command (for a reference of all the commands)."""
    for taker in _TAKERS:
        if not taker.added:
            _install(taker)
    for word in list(_INSTALLERS):
        _INSTALLERS.pop(word)()


def ordered_families() -> list[FamilyBase]:
    from daharness.core.registry import families

    return [e.impl for _, e in sorted(families.items(), key=lambda item: (item[1].order, item[0]))]


def _install(taker: _Taker) -> None:
    taker.ordered += ordered_families()
    parameters: list[inspect.Parameter] = []
    for family in _with_modes(taker.ordered, taker.modes):
        parameters.append(_mode_parameter(family))
        taker.added[parameters[-1].name] = ("mode", family.modes.name)  # type: ignore[union-attr]
        taker.owners.append(family)
    for option in _format_options(taker.ordered, taker.formats):
        parameters.append(_format_parameter(option))
        taker.added[option.name] = ("format", option)
    # typed options: a flag per field, unless the command has a parameter of that name
    taken = {*inspect.signature(taker.function).parameters, *taker.added}
    if taker.agents:
        parameters += _typed(taker, "agent", typed_parameters(_agent_options(), taken, AGENT_PANEL, True))
    if taker.rescoring:
        parameters += _typed(taker, "rescoring", typed_parameters(_rescoring_options(taker.ordered), taken))
    taker.command.__signature__ = _signature(taker.function, parameters)  # type: ignore[attr-defined]


def _typed(taker: _Taker, kind: str, parameters: list[inspect.Parameter]) -> list[inspect.Parameter]:
    taker.added.update((param.name, (kind, None)) for param in parameters)
    return parameters


def _agent_options() -> dict[str, Any]:
    """Each registered agent's options model, by agent (a flag's help names the agents that have it)."""
    from daharness.core.registry import agents

    return {name: entry.options for name, entry in agents.items()}


def _rescoring_options(ordered: list[FamilyBase]) -> dict[str, Any]:
    return {family.rescoring.selected_by: family.rescoring.options for family in ordered if family.rescoring}


def _signature(function: Callable[..., Any], added: list[inspect.Parameter]) -> inspect.Signature:
    """The function's parameters with the family ones where its `families` parameter stands (and of
    its kind: keyword-only after a `*`)."""
    signature = inspect.signature(function, eval_str=True)
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if parameter.name == PARAMETER:
            parameters += [param.replace(kind=parameter.kind) for param in added]
        else:
            parameters.append(parameter)
    return signature.replace(parameters=parameters)


def _with_modes(ordered: list[FamilyBase], wanted: Modes) -> Iterator[FamilyBase]:
    seen: set[str] = set()
    for family in ordered:
        group = family.modes
        chosen = wanted is None or (wanted(family) if callable(wanted) else group and group.name in wanted)
        if group is not None and group.name not in seen and chosen:
            seen.add(group.name)
            yield family


def _format_options(ordered: list[FamilyBase], formats: Formats) -> Iterator[FormatOption]:
    seen: set[str] = set()
    for family in ordered if formats != "none" else []:
        for option in family.format_options:
            if option.name not in seen and (formats == "all" or not option.variant):
                seen.add(option.name)
                yield option


def mode_flag(family: FamilyBase) -> str:
    """The switch of the family's scoring modes (`--mode`, `--workspace-mode`)."""
    assert family.modes is not None
    return family.mode_option or f"--{family.modes.name.replace('_', '-')}-mode"


def _mode_parameter(family: FamilyBase) -> inspect.Parameter:
    group = family.modes
    assert group is not None
    choices = StrEnum(f"{group.name.replace('-', '_')}_modes", [(choice, choice) for choice in group.choices])  # type: ignore[misc]
    flag = mode_flag(family)
    return inspect.Parameter(
        f"{group.name.replace('-', '_')}_mode",  # a group's name may hold '-' (closed-form)
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
