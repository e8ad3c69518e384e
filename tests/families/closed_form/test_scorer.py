"""The closed-form scorer: `strict` is the official rule, `normalized` fixes its unfair parts."""

from __future__ import annotations

import pytest
from helpers import closed_task

from daharness.families.closed_form.scorer import (
    equal_normalized,
    equal_strict,
    extract_balanced,
    extract_strict,
    score_closed_form,
)


def test_strict_extraction_last_occurrence_wins() -> None:
    response = "first @mean[1.00] then corrected: @mean[2.00] and @std[0.5]"
    assert extract_strict(response) == {"mean": "2.00", "std": "0.5"}


def test_strict_extraction_is_non_greedy_and_cuts_nested_brackets() -> None:
    # The official regex stops at the first ']' so a bracketed list loses its tail.
    assert extract_strict("@ids[[1, 2], [3]]") == {"ids": "[1, 2"}
    assert extract_balanced("@ids[[1, 2], [3]]") == {"ids": "[1, 2], [3]"}


def test_prose_with_other_brackets_is_ignored_by_both() -> None:
    response = "The list [a, b] (see note [1]) gives @count[3] and email me@x[y]"
    assert extract_strict(response)["count"] == "3"
    assert extract_balanced(response)["count"] == "3"
    # `me@x[y]` also matches the pattern; that is the official behaviour and we keep it.
    assert extract_strict(response)["x"] == "y"


@pytest.mark.parametrize(
    ("predicted", "label", "strict", "normalized"),
    [
        ("34.65", "34.65", True, True),
        ("34.650", "34.65", True, True),  # trailing zero: equal as floats in both
        ("34.6500001", "34.65", True, True),  # within 1e-6
        ("34.6", "34.65", False, False),  # less precise than the label: wrong in both
        ("34.654", "34.65", False, True),  # right at the label's precision
        (" 34.65 ", "34.65", True, True),  # float() strips whitespace, so strict accepts numbers
        (" linear", "linear", False, True),  # ... but not strings
        ("Linear", "linear", False, True),  # case
        ('"linear"', "linear", False, True),  # quotes
        ("314,577", "314, 577", False, True),  # list with other spacing
        ("[314, 577]", "314, 577", False, True),  # bracketed list
        ("577, 314", "314, 577", False, False),  # order matters
        ("1, 2, 3", "1, 2", False, False),  # length matters
        ("0.0629, 1.00", "0.06290, 1.0", False, True),  # element-wise numbers
        ("{'a': 7.170, 'B': 1}", "{'a': 7.17, 'b': 1}", False, True),  # mapping, keys case-free
        ("1.2e-10", "0.0000", True, True),
        ("0.0000002", "0.0000001", True, False),  # strict's 1e-6 is wider than the label itself
        ("0", "1.2e-10", True, False),
        ("0.30000000000000004", "0.3", True, True),
        ("0.3", "0.30000000000000004", True, True),  # a label written with float noise
        ("0.0001", "0.0000", False, False),
        (None, "1", False, False),
        ("", "", True, True),
        ("no", "yes", False, False),
    ],
)
def test_sub_answer_rules(predicted: str | None, label: str, strict: bool, normalized: bool) -> None:
    assert equal_strict(predicted, label) is strict
    assert equal_normalized(predicted, label) is normalized


def test_strict_excludes_a_missing_response_and_normalized_counts_it_wrong() -> None:
    task = closed_task([("mean", "1.00")])
    strict = score_closed_form(task, None, mode="strict")
    assert strict.excluded and strict.value == 0.0
    assert score_closed_form(task, "", mode="strict").excluded
    normalized = score_closed_form(task, None, mode="normalized")
    assert not normalized.excluded and normalized.value == 0.0
    assert normalized.details["correct"] == 0 and normalized.details["total"] == 1


def test_all_sub_answers_must_be_right_for_the_question() -> None:
    task = closed_task([("mean", "1.00"), ("std", "0.50"), ("kind", "normal")])
    half = score_closed_form(task, "@mean[1.00] @std[0.49] @kind[normal]", mode="normalized")
    assert half.value == 0.0 and half.details["correct"] == 2
    full = score_closed_form(task, "@mean[1.0001] @std[0.50] @kind[Normal]", mode="normalized")
    assert full.value == 1.0
    # strict rejects the case difference and the extra digits
    assert score_closed_form(task, "@mean[1.0001] @std[0.50] @kind[Normal]", mode="strict").value == 0.0


def test_duplicate_label_names_last_wins_in_both_modes() -> None:
    task = closed_task([("x", "1"), ("x", "2")])
    assert score_closed_form(task, "@x[2]", mode="strict").value == 1.0
    assert score_closed_form(task, "@x[1]", mode="strict").value == 0.0
    assert score_closed_form(task, "@x[2]", mode="normalized").details["total"] == 1


def test_empty_label_list_is_correct_in_strict_and_unscorable_in_normalized() -> None:
    task = closed_task([])
    assert score_closed_form(task, "anything", mode="strict").value == 1.0  # all({}) is True officially
    assert score_closed_form(task, "anything", mode="normalized").excluded


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown closed-form mode"):
        score_closed_form(closed_task([("x", "1")]), "@x[1]", mode="loose")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("predicted", "label", "normalized"),
    [
        ("37", "37", True),
        ("37.0", "37", True),  # integral, written as a float
        ("37.4", "37", False),  # an integer label is not rounded to
        ("4.5", "5", False),
        ("36.9999", "37", False),
        ("1,232.8", "1232.8", True),  # thousands separators
        ("1,232,000", "1232000", True),
        ("12,32.8", "1232.8", False),  # not groups of three: not a number
        ("\u22120.12", "-0.12", True),  # the Unicode minus
        ("\u22120.12", "0.12", False),
        ("3.23%", "3.23", False),  # a % on a label that is not in percent
        ("3.23%", "3.23%", True),  # a label written in percent
        ("3.23", "3.23%", True),
    ],
)
def test_normalized_number_notation(predicted: str, label: str, normalized: bool) -> None:
    assert equal_normalized(predicted, label) is normalized


def test_a_label_in_percent_accepts_a_trailing_percent_sign_and_nothing_else() -> None:
    task = closed_task([("peak_year", "1982"), ("peak_unemp", "10.7"), ("share_pct", "3.23"), ("r", "0.5")])
    task.answer_format.text = (
        '@peak_year[year], @peak_unemp[rate], @share_pct[share], @r[r] where "year" is a four-digit '
        'integer, "rate" is the unemployment rate in percent, rounded to one decimal place; "r" is a float.'
    )
    right = score_closed_form(task, "@peak_year[1982] @peak_unemp[10.7%] @share_pct[3.23 %] @r[0.5]")
    assert right.value == 1.0
    converted = score_closed_form(task, "@peak_year[1982] @peak_unemp[10.7] @share_pct[0.0323] @r[50%]")
    assert converted.details["correct"] == 2  # 0.0323 is not 3.23 %, and r is not in percent


def test_several_values_for_one_answer_are_a_hedge() -> None:
    task = closed_task([("n", "37"), ("kind", "linear")])
    hedged = "@n[36] or @n[38] or @n[37] @kind[linear]"
    assert score_closed_form(task, hedged, mode="strict").value == 1.0  # the official last-wins rule
    normalized = score_closed_form(task, hedged, mode="normalized")
    assert normalized.value == 0.0
    assert normalized.details["sub_answers"]["n"]["hedged"] == ["36", "38", "37"]
    repeated = score_closed_form(task, "@n[37] ... so @n[37.0] and @kind[Linear] @kind[linear]")
    assert repeated.value == 1.0  # the same value said twice is no hedge
    assert score_closed_form(task, "@n[37.4] @kind[linear]", mode="strict").value == 0.0
