"""Agent figures of a run: completion, steps, executable code, self-debug (DABench SDSR), usage.

SDSR follows DABench Table 6: a sample "self-debugs" when a Traceback appeared during it; SDSR =
#passed with self-debug / (#passed with self-debug + #failed with self-debug). Samples that ended in
an infrastructure error are not agent failures and are left out here; the report counts them apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from daharness.core.record import SampleRecord


def self_debug_table(outcomes: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """From (passed, saw_traceback) pairs: the four counts of DABench Table 6 and the SDSR."""
    counts = Counter(outcomes)
    passed_debug, failed_debug = counts[(True, True)], counts[(False, True)]
    attempts = passed_debug + failed_debug
    return {
        "passed_with_debug": passed_debug,
        "passed_without_debug": counts[(True, False)],
        "failed_with_debug": failed_debug,
        "failed_without_debug": counts[(False, False)],
        "sdsr": round(passed_debug / attempts, 4) if attempts else None,
    }


def agent_figures(records: Sequence[SampleRecord]) -> dict[str, Any]:
    scored = [r for r in records if r.status == "scored" and r.score is not None and not r.score.excluded]
    metrics = [r.agent_metrics for r in scored if r.agent_metrics]
    n = len(metrics)
    actions = sum(m.get("code_actions", 0) for m in metrics)
    failed_actions = sum(m.get("code_errors", 0) for m in metrics)
    usage = Counter()
    for m in metrics:
        usage.update({k: v for k, v in m.get("usage", {}).items() if isinstance(v, int | float)})
    outcomes = [
        (r.score.value >= 1.0, bool(r.agent_metrics.get("saw_traceback"))) for r in scored if r.agent_metrics
    ]  # type: ignore[union-attr]
    return {
        "samples": n,
        "completion_rate": round(sum(bool(m.get("completed")) for m in metrics) / n, 4) if n else None,
        "average_steps": round(sum(m.get("steps", 0) for m in metrics) / n, 2) if n else None,
        "code_actions": actions,
        "executable_code_rate": round((actions - failed_actions) / actions, 4) if actions else None,
        "self_debug": self_debug_table(outcomes),
        "stop_reasons": dict(Counter(m.get("stop_reason", "?") for m in metrics)),
        "reformat_used": any(m.get("reformatted") for m in metrics),
        "usage": {
            "calls": int(usage.get("calls", 0)),
            "prompt_tokens": int(usage.get("prompt_tokens", 0)),
            "completion_tokens": int(usage.get("completion_tokens", 0)),
            "cost_usd": round(float(usage.get("cost_usd", 0.0)), 6),
            "retries": int(usage.get("retries", 0)),
            # None for runs made before cache hits were recorded: how many there were is unknown
            "cached_calls": int(usage["cached_calls"])
            if any("cached_calls" in m.get("usage", {}) for m in metrics)
            else None,
        },
    }


def cost_text(usage: dict[str, Any]) -> str:
    """'$0.0123', and how many replies came from the response cache when any did: they cost nothing, so a
    cost of $0 says nothing about what the run would cost without them."""
    text = f"${usage['cost_usd']:.4f}"
    cached = usage.get("cached_calls")
    if cached:
        text += f" ({cached}/{usage['calls']} {'reply' if usage['calls'] == 1 else 'replies'} cached)"
    return text
