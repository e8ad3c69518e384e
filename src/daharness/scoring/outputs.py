"""What the output-file scorers share: the options that name the agent's file and its gold file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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


def read_npy(path: Path) -> np.ndarray:
    """An .npy file's array, never unpickled: an object array (which NumPy can only read by running
    pickle, i.e. code the file's author chose) raises ValueError saying so, as does an unreadable file."""
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise ValueError(
                f"{path.name} holds an object array, which would be read by unpickling it (code the file "
                "chooses); it is not read"
            ) from None
        raise
