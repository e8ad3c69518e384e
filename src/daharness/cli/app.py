"""The `daharness` application: its commands register here (one module each), and `main` runs it with
errors as one line."""

from __future__ import annotations

import functools
import inspect
import re
import sys
import traceback
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup
from typer.models import CommandInfo

from daharness.cli.families import install
from daharness.cli.options import (
    DebugOption,
    check_cheap_options,
    console,
    debug,
    error_line,
    start_run_early,
)
from daharness.core.collector import collector_paused
from daharness.core.errors import PYDANTIC_WORDS, UserError


class PlainHelpGroup(TyperGroup):
    """The root command, whose help (`daharness --help`, `daharness`) is laid out by click rather than by
    rich: typer's boxed layout imports rich's markdown, syntax and traceback modules, about 0.2 s, more
    than the rest of that help. Each command's own help keeps the boxed layout and its panels."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**{**settings, "rich_markup_mode": None})

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(self.commands)  # the names alone: typer's version builds every command

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:
        # each command's whole first paragraph, as the boxed layout shows it (click's cuts it at the width)
        rows = []
        for name in self.list_commands(ctx):
            hidden, text = _help_of(self.commands, name)
            if not hidden:
                summary = inspect.cleandoc(text).split("\n\n")[0]
                rows.append((name, " ".join(summary.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class LazyCommands(MutableMapping[str, Any]):
    """The root's commands by name, in the order they registered, each built by typer (its options, their
    types and checks) when it is first looked up: building all 15 at start took about 70 ms, which a
    command pays for the 14 it does not run and `daharness --help`, which needs their summaries only."""

    def __init__(
        self, infos: dict[str, CommandInfo], built: dict[str, Any], build: Callable[..., Any]
    ) -> None:
        self.infos = infos
        self._built = built
        self._build = build

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = self._build(self.infos[name])  # a KeyError for a name never registered
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if self.infos.pop(name, None) is None or name in self._built:
            del self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self.infos, *self._built]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self.infos, *self._built]))

    def is_built(self, name: str) -> bool:
        return name in self._built


def _help_of(commands: MutableMapping[str, Any], name: str) -> tuple[bool, str]:
    """Whether the command is hidden, and its short help or help, as typer would give its command,
    without building it when it is not built yet."""
    if not isinstance(commands, LazyCommands) or commands.is_built(name):
        command = commands[name]
        return command.hidden, command.short_help or command.help or ""
    info = commands.infos[name]
    text = inspect.cleandoc(info.help) if info.help is not None else inspect.getdoc(info.callback)
    return info.hidden, info.short_help or text or ""


app = typer.Typer(
    cls=PlainHelpGroup,
    help="Run, score and compare data-analysis agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
suites_app = typer.Typer(help="List and check suites.", no_args_is_help=True)
app.add_typer(suites_app, name="suites")


@app.callback()
def _main_options(debug: DebugOption = False) -> None:
    """Run, score and compare data-analysis agents."""


def root_command() -> PlainHelpGroup:
    """`app` as typer makes it, but with its commands built when looked up (`LazyCommands`)."""
    infos = app.registered_commands
    app.registered_commands = []  # typer builds the group, its options and its sub-apps, around no command
    try:
        group = typer.main.get_command(app)
    finally:
        app.registered_commands = infos
    assert isinstance(group, PlainHelpGroup)
    build = functools.partial(
        typer.main.get_command_from_info,
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )
    named = {info.name or typer.main.get_command_name(info.callback.__name__): info for info in infos}  # type: ignore[union-attr]
    group.commands = LazyCommands(named, dict(group.commands), build)
    return group


# typer's base of usage errors (from click, which newer typers vendor): found through a public subclass
_UsageProblem = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    try:
        with collector_paused():  # the families' modules and models live as long as the process
            check_cheap_options(sys.argv[1:])
            start_run_early(sys.argv[1:])
            install(sys.argv[1:])  # the families' options, on the command that takes them
        code = root_command()(standalone_mode=False)
    except UserError as exc:
        if debug["on"]:
            traceback.print_exc()
        error_line(str(exc))
        sys.exit(2)
    except _UsageProblem as exc:  # a bad option or value: one line, like ours
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()
        else:
            error_line(plain_usage_message(exc))
        sys.exit(exc.exit_code)
    except typer.Abort:
        console(stderr=True).print("aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


# the parser's wording (pydantic's, in newer typers) and ours
_PLAIN_WORDS = (
    (re.compile(r"^Value error, "), ""),
    (re.compile(r"^'(.*)' is not one of (.*?)\.?$"), lambda m: f"choose {_either(m[2])}, not '{m[1]}'"),
    *PYDANTIC_WORDS,
)


def plain_usage_message(exc: Exception) -> str:
    """A usage error as `--option: what is wrong` (an argument by its command: `daharness schema: ...`),
    in our words rather than the parser's."""
    message = exc.format_message()  # type: ignore[attr-defined]
    found = re.match(r"^Invalid value for '?([^':]+)'?(?: / '[^']*')*: (.*)$", message, re.DOTALL)
    if found is None:
        return message
    name, problem = found[1], found[2].strip()
    for pattern, words in _PLAIN_WORDS:
        problem = pattern.sub(words, problem)
    param, ctx = getattr(exc, "param", None), getattr(exc, "ctx", None)
    if param is not None and getattr(param, "param_type_name", "") == "argument" and ctx is not None:
        words = []
        while ctx.parent is not None:  # the root's name is how Python was called: `daharness` instead
            words.insert(0, ctx.info_name)
            ctx = ctx.parent
        name = " ".join(["daharness", *words])
    return f"{name}: {problem}"


def _either(choices: str) -> str:
    names = [choice.strip().strip("'") for choice in choices.split(",")]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
