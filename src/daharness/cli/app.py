"""The `daharness` application: its commands register here (one module each), and `main` runs it with
errors as one line."""

from __future__ import annotations

import sys
import traceback

import typer
from rich.markup import escape

from daharness.cli.families import install
from daharness.cli.options import DebugOption, debug, err
from daharness.core.errors import UserError

app = typer.Typer(
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


# typer's base of usage errors (from click, which newer typers vendor): found through a public subclass
_UsageProblem = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    try:
        install(sys.argv[1:])  # the families' options, on the command that takes them
        code = app(standalone_mode=False)
    except UserError as exc:
        if debug["on"]:
            traceback.print_exc()
        _error_line(str(exc))
        sys.exit(2)
    except _UsageProblem as exc:  # a bad option or value: one line, like ours
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()
        else:
            _error_line(exc.format_message())
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _error_line(message: str) -> None:
    err.print(f"[red]error[/]: {escape(' '.join(message.split()))}", highlight=False, soft_wrap=True)
