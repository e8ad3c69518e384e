"""The workspace family (DA-Code): a folder of files and a request; the files the agent leaves are scored.

Importing it registers the `workspace` and `dacode` suite formats (`loader`, `dacode`), the `table`,
`text`, `database`, `ml` and `chart` scorers (`scorers/`) and the family's figures and hooks
(`family`). Its public face is below; the rest is its own.
"""

from daharness.families.workspace import dacode, loader, scorers  # noqa: F401  (registration)
from daharness.families.workspace.family import WorkspaceFamily
from daharness.families.workspace.rescore import print_rescored_outputs, rescore_dacode

__all__ = ["WorkspaceFamily", "print_rescored_outputs", "rescore_dacode"]
