"""The workflow family's scorers: Spider2-V's evaluator functions over files, databases and notebooks."""

from daharness.families.workflow.scorers import (  # noqa: F401  (registration)
    browser,
    dbt,
    general,
    infeasible,
    notebook,
    xlsx,
)
