"""Spider2-V's evaluator functions over the browser's state on the sample's screen (written here from the
official functions' semantics). What they read was taken from the live browser right after the agent,
before anything it left running stopped (`families/workflow/screen.py`, `collect_screen`)."""

from __future__ import annotations

import re
from typing import Any

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workflow.scorers.inputs import EvaluatorOptions, evaluate


@scorer("spider2v.is_expected_url_pattern_match", options=EvaluatorOptions)
def is_expected_url_pattern_match(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the active tab's URL matches every pattern of the rule's `expected` (regular expressions)."""

    def metric(result: Any, rules: Any) -> tuple[float, str]:
        url = str(result.get("url", "")) if isinstance(result, dict) else str(result or "")
        unmatched = [pattern for pattern in rules.get("expected", []) if not re.search(pattern, url)]
        if unmatched:
            return 0.0, f"the active tab {url!r} does not match {unmatched}"
        return 1.0, f"the active tab {url!r} matches every pattern"

    return evaluate(context, options, metric)
