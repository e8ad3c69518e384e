"""What every agent of a run shares, from which each registered agent builds itself together with its own
typed options (`@agent(name, options=Model)`): the model, where further models are found, the response
cache and the per-sample limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daharness.agents.budget import SampleLimits
from daharness.core.errors import UserError
from daharness.models import ModelClient, ModelSettings, ResponseCache


@dataclass
class AgentSettings:
    model: ModelSettings | None = None
    # how a model named by an agent's option (react's reformat model, the user simulator) is found: as
    # --model is, with the run's endpoint options
    models_file: Path | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    cache_mode: str = "off"
    cache_path: Path | None = None
    limits: SampleLimits = field(default_factory=SampleLimits)
    # the models agents' options named (resolved by `named_model`), which the run checks before its first sample
    named_models: list[ModelSettings] = field(default_factory=list)

    def client(self, settings: ModelSettings | None, agent: str) -> ModelClient:
        """A model client for `settings`, sharing the run's response cache."""
        if settings is None:
            raise UserError(
                f"--agent {agent} needs a model: --model NAME (and --base-url for a local server)"
            )
        cache = ResponseCache(self.cache_path) if self.cache_mode != "off" and self.cache_path else None
        return ModelClient(settings, cache=cache, cache_mode=self.cache_mode)  # type: ignore[arg-type]

    def named_model(self, name: str | None, **sampling: Any) -> ModelSettings | None:
        """The settings of the model `name` (an id, or a name in the models file) with the run's endpoint
        options and these sampling options; None when no name is given. A missing API key is said now,
        before any sample, not after every one's retries."""
        from daharness.models import resolve_model

        if not name:
            return None
        endpoint = {
            "config_file": self.models_file,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
        }
        settings = resolve_model(name, **endpoint, overrides=sampling)
        if missing := settings.missing_key():
            raise UserError(missing)
        self.named_models.append(settings)
        return settings
