"""The workspace family's mode group: one run-level switch between DA-Code's official rules and ours."""

from daharness.core.scoring import ModeGroup

WORKSPACE_MODES = ModeGroup(
    "workspace",
    ("corrected", "compat"),
    default="corrected",
    help="'compat' reproduces DA-Code's official evaluator, defects included; 'corrected' fixes them.",
)
