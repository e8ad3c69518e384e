"""The workspace family's scorers: tables, text, databases, ML predictions and charts (DA-Code)."""

from daharness.families.workspace.scorers import chart, database, ml, table, text  # noqa: F401  (registration)
