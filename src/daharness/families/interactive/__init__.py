"""The interactive family (Tapilot-Crossing): one turn of an analysis dialogue, with its history run first.

Importing it registers the `interactive` and `tapilot` suite formats (`loader`, `tapilot`), the `interactive_code` and `choice`
scorers (`scorers/`), the `base`, `cot`, `react-mc` and `air` agents (`agent`), the release's prompt settings
`tapilot-base`, `tapilot-cot`, `tapilot-air` (`release_agents`) and the family's
figures and hooks (`family`). Its public face is below; the rest is its own.
"""

from daharness.families.interactive import agent, loader, release_agents, scorers, tapilot  # noqa: F401
from daharness.families.interactive.family import InteractiveFamily
from daharness.families.interactive.generate import Settings as DialogueSettings
from daharness.families.interactive.generate import generate_interactive
from daharness.families.interactive.generate import summary as dialogue_summary
from daharness.families.interactive.rescore import print_rescored_responses, rescore_tapilot

__all__ = [
    "DialogueSettings",
    "InteractiveFamily",
    "dialogue_summary",
    "generate_interactive",
    "print_rescored_responses",
    "rescore_tapilot",
]
