"""The interactive family's scorers: a turn's code by what it leaves behind, and multiple choice."""

from daharness.families.interactive.scorers import choice, code, release  # noqa: F401  (registration)
