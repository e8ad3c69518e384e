"""`daharness agents`: the registered agents, and one agent's options."""

from __future__ import annotations

from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption


@app.command()
def agents(
    name: Annotated[str | None, typer.Argument(help="An agent: show its options.")] = None,
    debug: DebugOption = False,
) -> None:
    """List the available agents.

    With an agent's name: its options (flag, type, default, help), which `run` takes as flags or as
    `-A NAME=VALUE`."""
    from rich.markup import escape

    from daharness.agents import agent_summaries
    from daharness.cli.options import out

    if name is None:
        for agent, description in agent_summaries().items():
            out.print(f"{agent}: {escape(description)}")
        return
    _print_options(name)


def _print_options(name: str) -> None:
    """The agent's summary and a table of its options: flag (also -A NAME=VALUE), type, default, help."""
    from rich.markup import escape
    from rich.table import Table

    from daharness.cli.options import out
    from daharness.cli.typed_options import option_rows
    from daharness.core.registry import agents

    entry = agents.get(name)  # an unknown name: one line listing the agents
    out.print(f"{name}: {escape(entry.summary)}")
    rows = option_rows(entry.options)
    if not rows:
        out.print("no options of its own")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("option", "type", "default", "help"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    out.print(table)
    out.print(f"`daharness run --agent {escape(name)}` takes each as --OPTION VALUE, or as -A NAME=VALUE")
