"""The command line's agent options, from which every registered agent builds itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from daharness.agents.budget import SampleLimits
from daharness.core.errors import UserError
from daharness.models import ModelClient, ModelSettings, ResponseCache


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
    simulator_model: ModelSettings | None = None  # interactive agents: the LLM user simulator
    clarify: bool = False  # interactive agents: may ask the (simulated) user one question per code turn
    extra: dict[str, object] = field(default_factory=dict)  # options of agents registered by plugins

    def client(self, settings: ModelSettings | None, agent: str) -> ModelClient:
        """A model client for `settings`, sharing the run's response cache."""
        if settings is None:
            raise UserError(
                f"--agent {agent} needs a model: --model NAME (and --base-url for a local server)"
            )
        cache = ResponseCache(self.cache_path) if self.cache_mode != "off" and self.cache_path else None
        return ModelClient(settings, cache=cache, cache_mode=self.cache_mode)  # type: ignore[arg-type]
