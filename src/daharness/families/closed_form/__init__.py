"""The closed-form family (InfiAgent-DABench): a question over one CSV, answered as `@name[value]`.

Importing it registers the `dabench` suite format (`loader`), the `closed_form` scorer (`scorer`), the
`react` agent (`agent`) and the family's figures and hooks (`family`). Its public face is below; the
rest is its own.
"""

from daharness.families.closed_form import agent, loader, scorer  # noqa: F401  (registration)
from daharness.families.closed_form.family import ClosedFormFamily
from daharness.families.closed_form.figures import figure_tables, official_analysis
from daharness.families.closed_form.generate import (
    CONCEPTS,
    JOURNAL,
    generate_closed_form,
    summary,
)
from daharness.families.closed_form.generate import Settings as GenerationSettings
from daharness.families.closed_form.rescore import rescore_dabench

__all__ = [
    "CONCEPTS",
    "JOURNAL",
    "ClosedFormFamily",
    "GenerationSettings",
    "figure_tables",
    "generate_closed_form",
    "official_analysis",
    "rescore_dabench",
    "summary",
]
