"""The workflow family (Spider2-V): a data-engineering project set up in a home folder, checked afterwards.

Importing it registers the `spider2v` suite format (`loader`), the `spider2v.*` scorers (`scorers/`),
the `workflow` agent (`agent`), the `desktop` agent (Spider2-V's baseline, `baseline/`) and the family's figures, hooks and states validation (`family`,
`validate`). Its public face is below; the rest is its own.
"""

from daharness.families.workflow import agent, loader, scorers  # noqa: F401  (registration)
from daharness.families.workflow.baseline import agent as baseline_agent  # noqa: F401  (registration)
from daharness.families.workflow.family import WorkflowFamily
from daharness.families.workflow.tools import tools_dir

__all__ = ["WorkflowFamily", "tools_dir"]
