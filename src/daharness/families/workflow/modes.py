"""The workflow family's mode group: Spider2-V's official reading of workbooks, or the sound one."""

from daharness.core.scoring import ModeGroup

WORKFLOW_MODES = ModeGroup(
    "workflow",
    ("corrected", "compat"),
    default="corrected",
    help="'compat' reads workbook cells and the browser getters' results as Spider2-V's official evaluator "
    "does (its defects included); 'corrected' reads what the cell shows, and an empty part of a URL check "
    "fails.",
)
