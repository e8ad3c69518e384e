"""What the output-file scorers share: the options that name the agent's file and its gold file."""

from __future__ import annotations

from daharness.core.score import Score
from daharness.core.scoring import ScorerOptions


class OutputFileOptions(ScorerOptions):
    """`file`: the output the agent must write (a workspace path); `gold`: the gold file's name, when it
    differs from `file`."""

    file: str
    gold: str | None = None

    def gold_name(self) -> str:
        return self.gold or self.file


def nothing_collected(name: str | None) -> Score:
    """The agent left no regular file `name` (a link, a FIFO... is not collected: the record lists it)."""
    return Score(value=0.0, explanation=f"no regular file {name} was collected, so there is nothing to score")
