"""Agents by name, and the options that build them from the command line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from daharness.agents.base import Agent, InfrastructureError, Submission
from daharness.agents.budget import SampleLimits
from daharness.errors import UserError
from daharness.models import ModelClient, ModelSettings, ResponseCache

AGENTS = {
    "reference": "runs each task's own reference solution",
    "react": "InfiAgent-DABench ReAct loop with a Python sandbox tool (needs --model)",
    "da-agent": "DA-Code action agent: Bash, Python files, SQL, Terminate (needs --model)",
    "replay": "re-runs the actions saved in an earlier run (needs --replay-from)",
}


@dataclass
class AgentOptions:
    model: ModelSettings | None = None
    reformat_model: ModelSettings | None = None
    cache_mode: str = "on"
    cache_path: Path | None = None
    limits: SampleLimits = field(default_factory=SampleLimits)
    dabench_compat: bool = False
    memory_window: int = 15
    replay_from: Path | None = None


def make_agent(name: str, options: AgentOptions | None = None) -> Agent:
    options = options or AgentOptions()
    if name == "reference":
        from daharness.agents.reference import ReferenceAgent

        return ReferenceAgent()
    if name == "replay":
        if options.replay_from is None:
            raise UserError("--agent replay needs --replay-from RUN_DIR (the run whose actions to repeat)")
        from daharness.agents.replay import ReplayAgent

        return ReplayAgent(options.replay_from)
    if name in ("react", "da-agent"):
        client = _client(options.model, options, name)
        if name == "react":
            from daharness.agents.react import ReactAgent

            reformat = _client(options.reformat_model, options, name) if options.reformat_model else None
            return ReactAgent(
                client, options.limits, dabench_compat=options.dabench_compat, reformat_model=reformat
            )
        from daharness.agents.da_agent import DaAgent

        return DaAgent(client, options.limits, memory_window=options.memory_window)
    raise UserError(f"unknown agent {name!r}; available: {', '.join(AGENTS)}")


def _client(settings: ModelSettings | None, options: AgentOptions, agent: str) -> ModelClient:
    if settings is None:
        raise UserError(f"--agent {agent} needs a model: --model NAME (and --base-url for a local server)")
    cache = ResponseCache(options.cache_path) if options.cache_mode != "off" and options.cache_path else None
    return ModelClient(settings, cache=cache, cache_mode=options.cache_mode)  # type: ignore[arg-type]


__all__ = [
    "AGENTS",
    "Agent",
    "AgentOptions",
    "InfrastructureError",
    "SampleLimits",
    "Submission",
    "make_agent",
]
