"""The workflow family's mode group: Spider2-V's official reading of workbooks, or the sound one."""

from daharness.core.scoring import ModeGroup

WORKFLOW_MODES = ModeGroup(
    "workflow",
    ("corrected", "compat"),
    default="corrected",
    help="'compat' reads workbook cells and styles, database names and the browser getters' results as "
    "Spider2-V's official evaluator does (its defects and failures included); 'corrected' reads what the cell "
    "shows, quotes names, and an empty part of a URL check fails.",
)
