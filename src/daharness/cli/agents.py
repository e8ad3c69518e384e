"""`daharness agents`: the registered agents."""

from __future__ import annotations

from rich.markup import escape

from daharness.cli.app import app
from daharness.cli.options import DebugOption, out


@app.command()
def agents(debug: DebugOption = False) -> None:
    """List the available agents."""
    from daharness.agents import agent_summaries

    for name, description in agent_summaries().items():
        out.print(f"{name}: {escape(description)}")
