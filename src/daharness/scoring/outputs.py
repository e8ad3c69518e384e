"""What the output-file scorers share: the options that name the agent's file and its gold file, and
readers of agent files that never run what the file says (an .npy's pickle, a DuckDB view's SQL on
other files)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from daharness.core.score import Score
from daharness.core.scoring import ScorerOptions

if TYPE_CHECKING:
    import duckdb
    import numpy as np


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
    import numpy as np

    try:
        return np.load(path, allow_pickle=False)
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise ValueError(
                f"{path.name} holds an object array, which would be read by unpickling it (code the file "
                "chooses); it is not read"
            ) from None
        raise


# A DuckDB view is SQL its author wrote, run when the table is read: it could read any host file
# (read_csv('/etc/...'), the task's gold) or load an extension. Agent files are opened without that.
_NO_EXTERNAL_ACCESS = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
}


def duckdb_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only DuckDB connection that reads nothing but this file: no other file, no network, no
    extension (a view reaching out fails with DuckDB's permission error)."""
    import duckdb  # imported when used: the families register cheaply

    return duckdb.connect(str(path), read_only=True, config=_NO_EXTERNAL_ACCESS)
