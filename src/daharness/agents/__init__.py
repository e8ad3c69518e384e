"""Agents by name."""

from __future__ import annotations

from daharness.agents.base import Agent, InfrastructureError, Submission
from daharness.agents.reference import ReferenceAgent
from daharness.errors import UserError

AGENTS = {"reference": ReferenceAgent}


def make_agent(name: str) -> Agent:
    try:
        return AGENTS[name]()
    except KeyError:
        raise UserError(f"unknown agent {name!r}; available: {', '.join(AGENTS)}") from None


__all__ = ["AGENTS", "Agent", "InfrastructureError", "Submission", "make_agent"]
