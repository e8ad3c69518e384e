"""The workflow family's scorers: Spider2-V's evaluator functions over files, databases and notebooks."""

from daharness.families.workflow.scorers import browser, dbt, general, notebook, xlsx  # noqa: F401  (registration)
