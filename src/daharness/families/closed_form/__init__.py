"""The closed-form family (InfiAgent-DABench). Importing it registers its loader, scorer, agent and figures."""

from daharness.families.closed_form import agent, family, loader, scorer  # noqa: F401  (registration)
