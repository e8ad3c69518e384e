"""The release's metrics that only its cloud tasks use (`desktop_env/evaluators/metrics/general.py` and
`snowflake.py`: read there, written here), as `spider2v.<name>` scorers."""

from __future__ import annotations

from typing import Any

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workflow.modes import WORKFLOW_MODES
from daharness.families.workflow.scorers.inputs import EvaluatorOptions, evaluate


@scorer("spider2v.is_not_in_list", options=EvaluatorOptions, modes=WORKFLOW_MODES)
def is_not_in_list(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the rule's `exclude` value is not among the result's items (a dataset the agent deleted).
    The release's tasks give `exclude` as a list (`["customer_orders"]`), which the official function
    looks for as one item, never found: the untouched project scores 1. `compat` does so; `corrected`
    (the default) wants none of the list's items in the result."""

    def metric(result: Any, rules: Any) -> tuple[float, str]:
        if not isinstance(result, list | tuple | set):  # a getter lists names; text would match substrings
            return 0.0, f"the result is not a list of names but {type(result).__name__}"
        excluded = rules["exclude"]
        if isinstance(excluded, list) and context.mode != "compat":
            present = [item for item in excluded if item in result]
        else:
            present = [excluded] if excluded in result else []
        return float(
            not present
        ), f"{present!r} still in {list(result)[:20]}" if present else f"{excluded!r} not in the result"

    return evaluate(context, options, metric)


class LiteralMatchOptions(EvaluatorOptions):
    type: str = "str"  # or "list"
    ignore_case: bool = False
    ignore_order: bool = False


@scorer("spider2v.literal_match", options=LiteralMatchOptions)
def literal_match(context: ScoringContext, options: LiteralMatchOptions) -> Score:
    """1 when the result equals the expected value as text (`type: str`) or as a list of texts of the
    same length (`type: list`, optionally in any order), optionally ignoring case."""

    def texts(value: Any) -> list[str]:
        found = [str(item) for item in value]
        found = [item.lower() for item in found] if options.ignore_case else found
        return sorted(found) if options.ignore_order else found

    def metric(result: Any, expected: Any) -> tuple[float, str]:
        if options.type == "list":
            if (
                not isinstance(result, (list, tuple))
                or not isinstance(expected, (list, tuple))
                or len(result) != len(expected)
            ):
                return 0.0, f"got {result!r}, expected a list like {expected!r}"
            passed = texts(result) == texts(expected)
        elif options.type == "str":
            got, want = str(result), str(expected)
            passed = got.lower() == want.lower() if options.ignore_case else got == want
        else:
            raise ValueError(f"literal_match type {options.type!r} is not str or list")
        return float(passed), "equal" if passed else f"got {result!r}, expected {expected!r}"

    return evaluate(context, options, metric)


@scorer("spider2v.check_snowflake_log_message", options=EvaluatorOptions)
def check_snowflake_log_message(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the log record has the rule's `severity` and `message`."""

    def metric(result: Any, expected: Any) -> tuple[float, str]:
        passed = (
            result.get("severity") == expected["severity"] and result.get("message") == expected["message"]
        )
        return float(passed), "the log record matches" if passed else f"got {result!r}, expected {expected!r}"

    return evaluate(context, options, metric)
