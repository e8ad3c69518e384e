"""The `interactive_code` scorer: a code-generation turn of an analysis dialogue, scored by execution.

The interactive family's after-hook (``daharness/families/interactive/family.py``) runs, in two fresh sandboxes,
the dialogue's earlier code and then the reference code, and the same earlier code and then the agent's
code; it keeps what each left (its results file and plots, unread: ``record.py``) in
``submission.evidence["interactive"]``. This scorer reads them, in the scoring worker, and never reads
the agent's code as an answer: it compares those records.

Rules (Tapilot-Crossing, section 4.2 and Appendix H):

* Each intent is compared by its result type (``interactive_values`` for data, ``interactive_plots`` for
  plots). Acc is 1 only when every intent is right. Code that crashes or times out, or leaves no result
  for an intent, is wrong, and the reason is kept per intent.
* With a private library, AccR = Acc x recall of the library functions the reference code calls among
  those the agent's code calls (``interactive_private``). In ``corrected`` mode a call counts only if it
  also ran (the after-hook records the library's functions where the code cannot reach the record), so
  calls in dead code do not count; in ``official`` mode the syntax tree alone decides, as the paper's
  AST rule. In both, code that tampered with the record of its calls (``evidence["agent"]["tampering"]``)
  gets a recall of 0. Recall has no precision term (as in the paper): calling every library function,
  even inside ``try``/``except`` and with its result thrown away, earns full recall.

The score's value is Acc; ``details`` holds AccR, the recall, the per-intent verdicts, and the turn's
mode, action and result types (the family's report reads them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from daharness.core.registry import scorer
from daharness.core.score import Check, Score
from daharness.core.scoring import GoldProblem, ModeGroup, ScorerOptions, ScoringContext
from daharness.core.submission import UserTurn
from daharness.families.interactive.scorers.plots import compare_plot
from daharness.families.interactive.scorers.private import called_functions, recall
from daharness.families.interactive.scorers.record import read_record
from daharness.families.interactive.scorers.values import Verdict, compare_value

INTERACTIVE_MODES = ModeGroup(
    "interactive",
    ("corrected", "official"),
    default="corrected",
    help="'official' reproduces Tapilot-Crossing's released evaluation; 'corrected' fixes its unfair cases.",
)
RESULT_TYPES = ("dataframe", "series", "scalar", "list", "dict", "tuple", "plot", "model")
ResultType = Literal["dataframe", "series", "scalar", "list", "dict", "tuple", "plot", "model"]
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)


class Intent(ScorerOptions):
    """One result the turn asks for: a variable (`name`) or, for plots, an image file (`file`)."""

    type: ResultType
    name: str | None = Field(default=None, description="The variable holding the result.")
    file: str | None = Field(default=None, description="Plots: the image file the code saves.")
    expression: str | None = Field(
        default=None, description="Evaluated instead of `name` (models: a probe such as predictions)."
    )
    tolerance: float = Field(default=1e-4, gt=0, lt=1, description="Relative tolerance of numbers.")
    ignore_row_order: bool = False

    @model_validator(mode="after")
    def _target(self) -> Intent:
        if self.type == "plot" and not self.file:
            raise ValueError("a plot intent needs 'file'")
        if self.type != "plot" and not self.name:
            raise ValueError(f"a {self.type} intent needs 'name'")
        if self.type == "model" and not self.expression:
            raise ValueError("a model intent needs 'expression' (a probe whose value is compared)")
        return self

    def label(self) -> str:
        return self.file if self.type == "plot" else str(self.name)


class InteractiveCodeOptions(ScorerOptions):
    intents: list[Intent] = Field(min_length=1)
    library: str | None = Field(default=None, description="The private library's import name.")
    library_functions: list[str] = Field(default_factory=list)
    reference_calls: list[str] = Field(
        default_factory=list, description="Library functions the reference code calls (AccR's denominator)."
    )


def extract_code(reply: str | None) -> str:
    """The code of a reply: its longest fenced block (as the released tool does), else the reply itself."""
    text = reply or ""
    blocks = _FENCE.findall(text)
    return max(blocks, key=len).strip("\n") if blocks else text.strip()


def clarification_counts(context: ScoringContext) -> dict[str, int]:
    """Questions the agent asked the (simulated) user, and how many got an answer."""
    turns = [e for e in context.submission.trajectory if isinstance(e, UserTurn) and e.source == "simulator"]
    return {
        "asked": sum(turn.question is not None for turn in turns),
        "answered": sum(turn.question is not None and bool(turn.content.strip()) for turn in turns),
    }


def turn_details(context: ScoringContext) -> dict[str, Any]:
    """What the family's report needs of every interactive turn, whatever its answer type."""
    meta = context.task.metadata
    return {
        "mode": meta.category or "normal",
        "action": meta.subcategory,
        "private": bool(context.task.libraries),
        "clarification": clarification_counts(context),
    }


def _intent_verdict(
    intent: Intent, expected: dict[str, Any], actual: dict[str, Any] | None, mode: str
) -> tuple[Verdict, dict[str, Any]]:
    if "missing" in expected:
        raise GoldProblem(f"the reference leaves no result for {intent.label()}: {expected['missing']}")
    if actual is None:
        return Verdict(False, "no result"), {}
    if intent.type == "plot":
        if "missing" in actual:
            return Verdict(False, actual["missing"]), {}
        png = actual.get("png")
        return compare_plot(
            Path(expected["png"]),
            Path(png) if png else None,
            expected.get("capture"),
            actual.get("capture"),
            mode=mode,
        )
    if "missing" in actual:
        return Verdict(False, actual["missing"]), {}
    verdict = compare_value(
        intent.type, expected["value"], actual["value"], tolerance=intent.tolerance, mode=mode,
        ignore_row_order=intent.ignore_row_order,
    )  # fmt: skip
    if (
        verdict.right
        and intent.type == "model"
        and mode != "official"
        and expected.get("class") != actual.get("class")
    ):
        return Verdict(False, f"a {actual.get('class')}, expected a {expected.get('class')}"), {}
    return verdict, {}


@scorer("interactive_code", options=InteractiveCodeOptions, modes=INTERACTIVE_MODES)
def interactive_code(context: ScoringContext, options: InteractiveCodeOptions) -> Score:
    """Every intent's result of the agent's code equals the reference's (Acc); AccR with private code."""
    details: dict[str, Any] = {
        **turn_details(context),
        "answer_type": "code",
        "result_types": [intent.type for intent in options.intents],
    }
    evidence = context.submission.evidence.get("interactive")
    if evidence is None:
        return Score(
            value=0.0,
            explanation="no execution evidence (the interactive family's after-hook did not run this code)",
            details={**details, "acc": 0.0, "accr": 0.0},
        )
    reference = read_record(evidence["reference"])
    if reference["error"]:
        raise GoldProblem(f"the reference's results cannot be read: {reference['error']}")
    agent = read_record(evidence["agent"])
    failure = agent.get("error")
    checks: list[Check] = []
    intents: list[dict[str, Any]] = []
    for index, intent in enumerate(options.intents):
        if failure:
            verdict, extra = Verdict(False, failure), {}
        else:
            found = agent["results"][index] if index < len(agent.get("results") or []) else None
            verdict, extra = _intent_verdict(intent, reference["results"][index], found, context.mode)
        checks.append(
            Check(name=f"{intent.type} {intent.label()}", passed=verdict.right, explanation=verdict.reason)
        )
        intents.append(
            {
                "type": intent.type,
                "target": intent.label(),
                "right": verdict.right,
                "reason": verdict.reason,
                **extra,
            }
        )
    acc = float(all(check.passed for check in checks))
    details.update(acc=acc, intents=intents)
    if options.library:
        written = called_functions(evidence.get("code", ""), options.library, options.library_functions)
        ran = set(agent.get("private_calls") or [])
        tampering = list(agent.get("tampering") or [])
        used = set() if tampering else written if context.mode == "official" else written & ran
        share = recall(set(options.reference_calls), used)
        details.update(
            recall=round(share, 4), reference_calls=sorted(options.reference_calls), agent_calls=sorted(used),
            written_calls=sorted(written), executed_calls=sorted(ran), tampering=tampering,
        )  # fmt: skip
        details["accr"] = acc * share
    else:
        details["accr"] = acc
    wrong = [f"{c.name}: {c.explanation}" for c in checks if not c.passed]
    explanation = f"all {len(checks)} intents right" if not wrong else "; ".join(wrong)
    if options.library and acc:
        explanation += f"; private-function recall {details['recall']:.2f}"
    if options.library and details["tampering"]:
        explanation += "; no private-function recall: the code " + "; ".join(details["tampering"])
    return Score(
        value=acc,
        explanation=explanation,
        checks=checks,
        details=json.loads(json.dumps(details, default=str)),
    )
