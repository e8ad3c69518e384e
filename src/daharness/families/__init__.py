"""Families: what each benchmark family reports and does around a sample. Importing registers them."""

from daharness.families import closed_form, interactive, workflow, workspace  # noqa: F401  (registration)
