"""`daharness validate` on closed-form tasks: wrong answers made from the labels must score lower."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from daharness.core.runlog import ScoringSettings
from daharness.families.closed_form.damage import damaged_answers, written
from daharness.families.closed_form.scorer import score_closed_form
from daharness.runs.validate import validate_task
from daharness.suites import load_suite

RUNNABLE = Path(__file__).parents[2] / "fixtures" / "runnable"


def test_each_sub_answer_is_moved_rounded_replaced_or_left_out() -> None:
    labels = [("r", "0.9934"), ("n", "13"), ("mean", "2.00"), ("kind", "linear"), ("low", "-0.12")]
    damaged = dict(damaged_answers(labels))
    assert damaged["r moved by 5%"] == "@r[1.0431] @n[13] @mean[2.00] @kind[linear] @low[-0.12]"
    assert damaged["r rounded to one decimal fewer"].startswith("@r[0.993] @n[13]")
    assert damaged["n moved by 5%"].startswith("@r[0.9934] @n[14] ")  # at least one unit of the last digit
    assert "n rounded to one decimal fewer" not in damaged  # an integer has no decimal to drop
    assert "mean rounded to one decimal fewer" not in damaged  # 2.0 is the same number
    assert damaged["low moved by 5%"].endswith("@low[-0.11]")
    assert damaged["kind answered with other text"].endswith("@kind[not linear] @low[-0.12]")
    assert damaged["kind left out"] == "@r[0.9934] @n[13] @mean[2.00] @low[-0.12]"


@pytest.mark.parametrize("mode", ["strict", "normalized"])
def test_on_the_built_in_suite_the_labels_score_1_and_every_damaged_answer_0(mode: str) -> None:
    tasks = load_suite("closed-form").tasks
    checked = 0
    for task in tasks:
        labels = list(task.gold.answers)
        assert score_closed_form(task, written(labels), mode=mode).value == 1.0, task.id  # type: ignore[arg-type]
        for name, answer in damaged_answers(labels):
            assert score_closed_form(task, answer, mode=mode).value == 0.0, (task.id, name)  # type: ignore[arg-type]
            checked += 1
    assert checked >= 4 * len(tasks)


def test_validate_finds_a_label_the_official_rule_cannot_tell_from_a_wrong_one(tmp_path: Path) -> None:
    """The official rule accepts any number within 1e-6 of the label: for a label of 1e-7 a value
    moved by 5% (0.0000002) or rounded to 0 is right in strict mode. validate says so; normalized mode is fine."""
    suite = tmp_path / "suite"
    shutil.copytree(RUNNABLE, suite)
    question = {"id": 6, "question": "A tiny p-value", "concepts": ["Correlation Analysis"], "constraints": "",
                "format": "@p[p]", "file_name": "points.csv", "level": "hard"}  # fmt: skip
    with (suite / "questions.jsonl").open("a") as handle:
        handle.write(json.dumps(question) + "\n")
    with (suite / "labels.jsonl").open("a") as handle:
        handle.write(json.dumps({"id": 6, "common_answers": [["p", "0.0000001"]]}) + "\n")
    (suite / "solutions" / "6.py").write_text("print('@p[0.0000001]')\n")
    task = next(t for t in load_suite(f"dabench:{suite / 'questions.jsonl'}").tasks if t.id == "6")

    strict = validate_task(task, scoring=ScoringSettings(modes={"closed-form": "strict"}))
    assert strict.reference_score == 1.0
    assert strict.problems == [
        "damaged answer 'p moved by 5%' still scores 1.000",  # 0.0000002
        "damaged answer 'p rounded to one decimal fewer' still scores 1.000",  # 0.000000
    ]
    assert strict.mutations["p left out"] == 0.0
    normalized = validate_task(task, scoring=ScoringSettings(modes={"closed-form": "normalized"}))
    assert normalized.ok and set(normalized.mutations.values()) == {0.0} and len(normalized.mutations) == 3
