"""Spider2-V's general evaluator functions: script output rules, text, CSV and JSON files.

Each follows the official function of the same name in `desktop_env/evaluators/metrics/` (written here
from its semantics): a missing result scores 0.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workflow.modes import WORKFLOW_MODES
from daharness.families.workflow.scorers.inputs import EvaluatorOptions, evaluate, text_of


@scorer("spider2v.check_include_exclude", options=EvaluatorOptions, modes=WORKFLOW_MODES)
def check_include_exclude(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the result (a check script's output) holds every `include` string and no `exclude` string.
    Its mode is that of the browser getters it may read (`validate_correct_url`, `html_check`)."""

    def metric(result: Any, rules: Any) -> tuple[float, str]:
        text = text_of(result)
        missing = [s for s in rules.get("include", []) if s not in text]
        present = [s for s in rules.get("exclude", []) if s in text]
        passed = not missing and not present
        return float(
            passed
        ), "output matches" if passed else f"missing {missing}, unwanted {present}: {text[-300:]!r}"

    return evaluate(context, options, metric)


@scorer("spider2v.exact_match", options=EvaluatorOptions)
def exact_match(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the result equals the rule's `expected` value exactly."""

    def metric(result: Any, rules: Any) -> tuple[float, str]:
        value = text_of(result)
        passed = value == rules["expected"]
        return float(passed), "equal" if passed else f"got {value[-200:]!r}, expected {rules['expected']!r}"

    return evaluate(context, options, metric)


@scorer("spider2v.check_file_existence", options=EvaluatorOptions)
def check_file_existence(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the result file exists."""
    return evaluate(context, options, lambda result, _: (1.0, "the file exists"))


class CompareTextOptions(EvaluatorOptions):
    ignore_blanks: bool = False  # runs of whitespace count as one space, ends stripped
    ignore_case: bool = False


@scorer("spider2v.compare_text_file", options=CompareTextOptions)
def compare_text_file(context: ScoringContext, options: CompareTextOptions) -> Score:
    """1 when the result file's text equals the expected file's, optionally ignoring blanks and case."""

    def normal(text: str) -> str:
        if options.ignore_blanks:
            text = re.sub(r"\s+", " ", re.sub(r"[\t\n]", " ", text).strip())
        return text.lower() if options.ignore_case else text

    def metric(result: Any, expected: Any) -> tuple[float, str]:
        passed = normal(text_of(result)) == normal(text_of(expected))
        return float(passed), "same text" if passed else "the texts differ"

    return evaluate(context, options, metric)


@scorer("spider2v.diff_text_file", options=EvaluatorOptions)
def diff_text_file(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """The similarity ratio of the two files' lines (difflib), between 0 and 1."""

    def metric(result: Any, expected: Any) -> tuple[float, str]:
        ratio = difflib.SequenceMatcher(
            a=text_of(result).splitlines(), b=text_of(expected).splitlines()
        ).ratio()
        return ratio, f"line similarity {ratio:.3f}"

    return evaluate(context, options, metric)


@scorer("spider2v.compare_json_file", options=EvaluatorOptions)
def compare_json_file(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when both files hold the same JSON value."""

    def metric(result: Any, expected: Any) -> tuple[float, str]:
        passed = json.loads(text_of(result)) == json.loads(text_of(expected))
        return float(passed), "same JSON" if passed else "the JSON values differ"

    return evaluate(context, options, metric)


class CompareCsvOptions(EvaluatorOptions):
    strict: bool = True  # False: lines are compared with surrounding blanks stripped
    ignore_case: bool = False
    ignore_order: bool = False


@scorer("spider2v.compare_csv", options=CompareCsvOptions)
def compare_csv(context: ScoringContext, options: CompareCsvOptions) -> Score:
    """1 when the two CSV files have the same lines (as text), with the options' normalisations; bytes that
    are not UTF-8 are dropped, as the official `errors='ignore'` does."""

    def lines(value: Any) -> list[str]:
        found = text_of(value, errors="ignore").splitlines()
        if not options.strict:
            found = [line.strip() for line in found]
        if options.ignore_case:
            found = [line.lower() for line in found]
        return sorted(found) if options.ignore_order else found

    def metric(result: Any, expected: Any) -> tuple[float, str]:
        got, want = lines(result), lines(expected)
        if got == want:
            return 1.0, f"same {len(want)} lines"
        first = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want))
        )
        return 0.0, f"{len(got)} lines vs {len(want)} expected; first difference at line {first + 1}"

    return evaluate(context, options, metric)
