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
    return Score(value=0.0, explanation=f"no files were collected, so there is no {name} to score")
