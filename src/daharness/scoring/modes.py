"""The mode groups of the built-in scorers: one run-level switch per benchmark's official rules."""

from daharness.core.scoring import ModeGroup

CLOSED_FORM_MODES = ModeGroup(
    "closed_form",
    ("normalized", "strict"),
    default="normalized",
    help="'strict' is InfiAgent-DABench's official rule; 'normalized' fixes its unfair cases.",
)
WORKSPACE_MODES = ModeGroup(
    "workspace",
    ("corrected", "compat"),
    default="corrected",
    help="'compat' reproduces DA-Code's official evaluator, defects included; 'corrected' fixes them.",
)
