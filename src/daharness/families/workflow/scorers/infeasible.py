"""Spider2-V's `infeasible` evaluator: a task that cannot be done is solved by saying so."""

from __future__ import annotations

from daharness.core.registry import scorer
from daharness.core.score import Check, Score
from daharness.core.scoring import ScoringContext
from daharness.families.workflow.scorers.inputs import LAST_ACTION, EvaluatorOptions, gave_up


@scorer("spider2v.infeasible", options=EvaluatorOptions)
def infeasible(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 exactly when the agent's last action is FAIL (the release's `DesktopEnv.evaluate` for `func:
    infeasible`): an agent that did anything else last, or did nothing, scores 0. The last action is the
    one the desktop agent's loop ran last (see `inputs.gave_up` for a computer_13 FAIL)."""
    passed = gave_up(context)
    last = context.submission.evidence.get(LAST_ACTION)
    why = (
        "the agent said FAIL"
        if passed
        else f"the task cannot be done, and the agent's last action was {last!r:.200}"
    )
    return Score(
        value=float(passed),
        explanation=why,
        checks=[Check(name="infeasible", passed=passed, explanation=why)],
    )
