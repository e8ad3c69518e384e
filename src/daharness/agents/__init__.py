"""Agents by name: `make_agent` builds one. Importing this package registers the agents that serve every
family (reference, replay, DA-Agent); a family's own agents register with the family."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from daharness.agents import da_agent, reference, replay  # noqa: F401  (registration)
from daharness.agents.budget import SampleLimits
from daharness.agents.options import AgentSettings
from daharness.core.agent import Agent, AgentOptions
from daharness.core.registry import agents


def make_agent(
    name: str, settings: AgentSettings | None = None, options: Mapping[str, Any] | AgentOptions | None = None
) -> Agent:
    """The agent `name` built for a run: its `options` (a mapping, or its options model) checked first, a
    bad one a one-line UserError naming the agent and the option."""
    entry = agents.get(name)
    return entry.build(settings or AgentSettings(), entry.parse_options(options or {}))  # type: ignore[no-any-return]


def agent_needs_desktop(name: str) -> bool:
    """Whether the named agent works on a screen, so that every sample it runs gets a desktop."""
    return agents.get(name).needs_desktop


def agent_summaries() -> dict[str, str]:
    return {name: entry.summary for name, entry in agents.items()}


__all__ = ["AgentSettings", "SampleLimits", "agent_needs_desktop", "agent_summaries", "make_agent"]
