"""The text/JSON scorer: DA-Code's compare_text rules in `compat`, its defects fixed in `corrected`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daharness.families.workspace.scorers.text import score_text, values_equal

MODES = ("corrected", "compat")


@pytest.mark.parametrize("mode", MODES)
def test_nested_objects(mode: str) -> None:
    gold = {"summary": {"mean": 2.5, "top": "Paris"}}
    assert values_equal({"summary": {"mean": 2.5, "top": "paris"}}, gold, mode=mode)
    assert not values_equal({"summary": {"mean": 2.6, "top": "Paris"}}, gold, mode=mode)
    # A nested object is a value: an extra key makes it wrong (the top level allows extras).
    assert not values_equal({"summary": {"mean": 2.5, "top": "Paris", "n": 3}}, gold, mode=mode)
    assert values_equal({"summary": {"mean": 2.5, "top": "Paris"}, "note": "x"}, gold, mode=mode)


def test_nested_keys_ignore_case_in_corrected_only() -> None:
    gold = {"summary": {"Mean": 2.5}}
    assert values_equal({"SUMMARY": {"mean": 2.5}}, gold)
    assert not values_equal({"summary": {"mean": 2.5}}, gold, mode="compat")  # nested keys exact officially


@pytest.mark.parametrize("mode", MODES)
def test_top_level_keys_ignore_case_and_space(mode: str) -> None:
    score = score_text({"Total Sales": 10}, answer_text='{" total sales ": 10}', mode=mode)
    assert score.value == 1.0
    score = score_text({"Total Sales": 10}, answer_text='{"total_sales": 10}', mode=mode)
    assert score.value == 0.0 and score.details["keys"] == {"total sales": False}


@pytest.mark.parametrize("mode", MODES)
def test_number_tolerance(mode: str) -> None:
    assert values_equal({"x": 1.235}, {"x": 1.23}, mode=mode)
    assert not values_equal({"x": 1.25}, {"x": 1.23}, mode=mode)
    assert values_equal({"x": 1.25}, {"x": 1.23}, mode=mode, tolerance=0.05)


def test_tolerance_boundary_absorbs_float_rounding_in_corrected() -> None:
    # |1.24 - 1.23| is 0.010000000000000009 in binary floating point.
    assert values_equal(1.24, 1.23)
    assert not values_equal({"x": 1.24}, {"x": 1.23}, mode="compat")


def test_numbers_in_corrected_ignore_int_float_and_numeric_strings() -> None:
    assert values_equal({"n": [1.0, 2]}, {"n": [1, 2.0]})
    assert values_equal("3.50", 3.5)
    assert not values_equal(3.9, 3)
    assert not values_equal("three", 3)


def test_compat_number_defects() -> None:
    assert values_equal({"n": 3.9}, {"n": 3}, mode="compat")  # int(3.9) == 3
    assert not values_equal({"n": [1.0, 2.0]}, {"n": [1, 2]}, mode="compat")  # nested types must match
    assert values_equal({"n": "3.5"}, {"n": 3.5}, mode="compat")  # top level converts


@pytest.mark.parametrize("mode", MODES)
def test_strings_ignore_case_and_surrounding_space(mode: str) -> None:
    assert values_equal({"city": "  new YORK "}, {"city": "New York"}, mode=mode)
    assert not values_equal({"city": "NewYork"}, {"city": "New York"}, mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_list_order(mode: str) -> None:
    gold = {"top": ["a", "b", "c"]}
    shuffled = {"top": ["c", "a", "b"]}
    assert values_equal({"top": ["a", "b", "c"]}, gold, mode=mode)
    assert not values_equal(shuffled, gold, mode=mode)
    assert values_equal(shuffled, gold, mode=mode, ignore_order=True)
    assert not values_equal({"top": ["a", "b"]}, gold, mode=mode, ignore_order=True)
    assert not values_equal({"top": ["a", "b", "b"]}, gold, mode=mode, ignore_order=True)


def test_order_free_lists_pair_elements_properly_in_corrected_only() -> None:
    gold, answer = {"names": ["a", "B"]}, {"names": ["b", "A"]}
    assert values_equal(answer, gold, ignore_order=True)
    assert not values_equal(answer, gold, ignore_order=True, mode="compat")  # sorted by str, case-sensitive
    assert values_equal([1.004, 2.0], [2.0, 1.0], ignore_order=True)


def test_booleans_corrected() -> None:
    assert score_text({"is_significant": True}, answer_text='{"is_significant": true}').value == 1.0
    assert score_text({"is_significant": True}, answer_text='{"is_significant": false}').value == 0.0
    assert values_equal("True", True) and not values_equal(1, True)
    assert values_equal({"flags": [True, False]}, {"flags": [True, False]})
    assert values_equal(None, None) and not values_equal("None", None)


def test_booleans_crash_the_official_evaluator_and_score_zero_in_compat() -> None:
    score = score_text({"is_significant": True}, answer_text='{"is_significant": true}', mode="compat")
    assert score.value == 0.0 and "crashes" in score.explanation and "calculate_bool" in score.explanation
    nested = score_text({"flags": [True, False]}, answer_text='{"flags": [true, false]}', mode="compat")
    assert nested.value == 0.0 and "crashes" in nested.explanation
    assert not values_equal({"flag": True}, {"flag": True}, mode="compat")
    # A missing key is simply wrong, not a crash.
    missing = score_text({"flag": True, "n": 1}, answer_text='{"n": 1}', mode="compat")
    assert missing.value == 0.0 and "crashes" not in missing.explanation


def test_one_element_list_equals_its_scalar() -> None:
    assert values_equal({"month": ["Jan 2021"]}, {"month": "Jan 2021"})
    assert values_equal({"a": {"b": 5}}, {"a": {"b": [5]}})
    assert values_equal([[1, 2]], [1, 2])
    assert not values_equal({"a": [5, 6]}, {"a": 5})
    # Officially only top-level values are unwrapped.
    assert values_equal({"month": ["Jan 2021"]}, {"month": "Jan 2021"}, mode="compat")
    assert not values_equal({"a": {"b": 5}}, {"a": {"b": [5]}}, mode="compat")
    assert not values_equal({"a": [[5]]}, {"a": [5, 6]}, mode="compat")


def test_empty_containers() -> None:
    assert values_equal({"a": []}, {"a": []})
    assert not values_equal({"a": []}, {"a": []}, mode="compat")
    score = score_text({}, answer_text='{"a": 1}')
    assert score.excluded and score.value == 0.0
    assert score_text({}, answer_text='{"a": 1}', mode="compat").value == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_score_rule_all_or_fraction(mode: str) -> None:
    gold = {"a": 1, "b": "x", "c": 2.5, "d": [1, 2]}
    answer = '{"a": 1, "b": "X", "c": 9, "d": [1, 2]}'
    assert score_text(gold, answer_text=answer, mode=mode).value == 0.0
    fraction = score_text(gold, answer_text=answer, mode=mode, score_rule="fraction")
    assert fraction.value == 0.75 and fraction.details["keys"]["c"] is False
    perfect = '{"a": 1, "b": "x", "c": 2.5, "d": [1, 2]}'
    assert score_text(gold, answer_text=perfect, mode=mode, score_rule="fraction").value == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_answer_from_a_json_file(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "answer.json"
    path.write_text(json.dumps({"Mean": 4.0, "extra": 1}), encoding="utf-8")
    assert score_text({"mean": 4}, answer_file=path, mode=mode).value == 1.0
    path.write_text(json.dumps([{"mean": 5}]), encoding="utf-8")  # a list: its object is read
    assert score_text({"mean": 4}, answer_file=path, mode=mode).value == 0.0
    path.write_text(json.dumps([{"mean": 4}]), encoding="utf-8")
    assert score_text({"mean": 4}, answer_file=path, mode=mode).value == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_answer_file_takes_precedence_and_missing_file_scores_zero(tmp_path: Path, mode: str) -> None:
    score = score_text({"mean": 4}, answer_text='{"mean": 4}', answer_file=tmp_path / "none.json", mode=mode)
    assert score.value == 0.0 and "not found" in score.explanation


@pytest.mark.parametrize("mode", MODES)
def test_answer_from_text(mode: str) -> None:
    text = 'The result is:\n{"count": 12, "label": "High"}\nDone.'
    assert score_text({"count": 12, "label": "high"}, answer_text=text, mode=mode).value == 1.0
    assert score_text({"count": 13, "label": "high"}, answer_text=text, mode=mode).value == 0.0
    empty = score_text({"count": 12}, answer_text="   ", mode=mode)
    assert empty.value == 0.0 and "no answer" in empty.explanation
    no_object = score_text({"count": 12}, answer_text="twelve", mode=mode)
    assert no_object.value == 0.0


def test_corrected_reads_json5ish_text_fences_and_bare_scalars() -> None:
    assert score_text({"a": "x"}, answer_text="{'a': 'x',}").value == 1.0
    assert score_text([1, 2], answer_text="```json\n[1, 2]\n```").value == 1.0
    assert score_text(42, answer_text="42.004").value == 1.0
    assert score_text(42, answer_text="43").value == 0.0
    assert score_text("Paris", answer_text=" paris ").value == 1.0
    assert score_text("Paris", answer_text="London").value == 0.0
    assert score_text(True, answer_text="true").value == 1.0
    assert score_text(["a", "b"], answer_text='Answer: ["b", "a"]', ignore_order=True).value == 1.0


def test_unknown_mode_raises() -> None:
    with pytest.raises(ValueError):
        score_text(1, answer_text="1", mode="strict")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        values_equal(1, 1, mode="strict")  # type: ignore[arg-type]
