"""The interactive family (Tapilot-Crossing). Importing it registers its loader, scorers, agents and figures."""

from daharness.families.interactive import agent, family, loader, scorers  # noqa: F401  (registration)
