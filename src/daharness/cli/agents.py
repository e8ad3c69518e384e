"""`daharness agents`: the registered agents."""

from __future__ import annotations

from daharness.cli.app import app
from daharness.cli.options import DebugOption


@app.command()
def agents(debug: DebugOption = False) -> None:
    """List the available agents."""
    from rich.markup import escape

    from daharness.agents import agent_summaries
    from daharness.cli.options import out

    for name, description in agent_summaries().items():
        out.print(f"{name}: {escape(description)}")
