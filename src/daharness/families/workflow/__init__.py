"""The workflow family (Spider2-V). Importing it registers its loader, scorers, agent and figures."""

from daharness.families.workflow import agent, family, loader, scorers  # noqa: F401  (registration)
