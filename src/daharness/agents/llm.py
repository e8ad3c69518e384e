"""What every LLM agent shares: the model client, the sample's budget, and recording model calls."""

from __future__ import annotations

from typing import Any

from daharness.agents.budget import Budget, SampleLimits
from daharness.core.agent import AgentOptions, NoAgentOptions
from daharness.core.errors import InfrastructureError
from daharness.core.submission import ModelCall, Submission, dump_events
from daharness.models import ModelClient, ModelUnavailableError


class StopSample(Exception):
    """A per-sample limit is used up: the agent stops and hands in what it has."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ModelAgent:
    """Base of the LLM agents; subclasses implement `solve` with `self.ask`, and read their typed options
    (`@agent(name, options=Model)`) as `self.options`."""

    name = "model-agent"
    default_max_steps = 10

    def __init__(
        self, model: ModelClient, limits: SampleLimits | None = None, options: AgentOptions | None = None
    ) -> None:
        self.model = model
        self.limits = limits or SampleLimits()
        self.options = options or NoAgentOptions()

    @property
    def max_steps(self) -> int:
        return self.limits.max_steps or self.default_max_steps

    def describe(self) -> dict[str, Any]:
        settings = self.model.settings
        return {
            "name": self.name,
            "model": settings.model,
            "base_url": settings.base_url,
            "sampling": {
                k: getattr(settings, k) for k in ("temperature", "top_p", "max_tokens", "stop", "seed")
            },
            "limits": {
                "max_steps": self.max_steps,
                **{k: v for k, v in vars(self.limits).items() if k != "max_steps"},
            },
            **self.options.model_dump(mode="json"),
        }

    def request_settings(self) -> dict[str, Any]:
        """How requests are bounded (kept in run.json apart from the agent: they change no result)."""
        settings = self.model.settings
        return {
            "timeout_s": settings.timeout_s,
            "max_retries_per_call": settings.max_retries,
            "max_retries_per_run": settings.max_run_retries,
        }

    def ask(
        self,
        messages: list[dict[str, str]],
        budget: Budget,
        submission: Submission,
        *,
        stop: list[str] | None = None,
        check_limits: bool = True,
    ) -> str:
        """One model call, charged to the budget and recorded in the trajectory."""
        if check_limits and (reason := budget.exceeded()):
            raise StopSample(reason)
        try:
            deadline = budget.deadline() if check_limits else None
            completion = self.model.complete(messages, stop=stop, deadline=deadline)
        except ModelUnavailableError as exc:
            if check_limits and (reason := budget.exceeded()):
                raise StopSample(reason) from None  # the sample's own time ran out during the call
            raise InfrastructureError(
                f"model unavailable: {exc}", dump_events(submission.trajectory), unreachable=exc.unreachable
            ) from None
        budget.charge(completion.usage)
        submission.usage = budget.usage.to_dict()
        submission.trajectory.append(
            ModelCall(
                messages=[dict(m) for m in messages],
                reply=completion.text,
                usage=completion.usage.to_dict(),
                cached=completion.cached,
                latency_s=round(completion.latency_s, 4),
                finish_reason=completion.finish_reason,
            )
        )
        return completion.text


def truncate(text: str, limit: int) -> str:
    """Keep the head and tail of an observation that is too long for the prompt."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"
