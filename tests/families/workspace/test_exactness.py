"""Corrected mode checks what the instruction fixes, as the task's scorer options state it: case and
surrounding whitespace of text values (and, with the scorers' own options, order and precision)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from daharness.core.task import ScorerSpec
from daharness.families.workspace.instruction_mutations import instruction_mutations
from daharness.families.workspace.scorers.database import score_database
from daharness.families.workspace.scorers.table import score_table
from daharness.families.workspace.scorers.text import score_text

GOLD = "date,weather,wind\n2012-01-01,rain,4.7\n2012-01-02,sun,3.15\n"


def table(tmp_path: Path, text: str, **options: object) -> float:
    gold, predicted = tmp_path / "gold.csv", tmp_path / "pred.csv"
    gold.write_text(GOLD)
    predicted.write_text(text)
    return score_table(predicted, gold, **options).value  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("written", "lenient", "exact"),
    [
        (GOLD, 1.0, 1.0),
        (GOLD.replace("rain", "Rain"), 1.0, 0.0),  # case
        (GOLD.replace("rain", " rain "), 1.0, 0.0),  # surrounding whitespace
        (GOLD.replace("sun", "SUN"), 1.0, 0.0),
    ],
)
def test_table_text_rules(tmp_path: Path, written: str, lenient: float, exact: float) -> None:
    assert table(tmp_path, written) == lenient
    assert table(tmp_path, written, case_sensitive=True, whitespace_sensitive=True) == exact
    # compat keeps the official rule (no case, no surrounding spaces), whatever the options say
    assert table(tmp_path, written, mode="compat", score_rule="all", case_sensitive=True) == lenient


def test_whitespace_and_case_rules_are_separate(tmp_path: Path) -> None:
    padded = GOLD.replace("rain", " rain ")
    assert table(tmp_path, padded, case_sensitive=True) == 1.0
    assert table(tmp_path, padded, whitespace_sensitive=True) == 0.0
    assert table(tmp_path, GOLD.replace("rain", "RAIN"), whitespace_sensitive=True) == 1.0


def test_order_and_precision_come_from_ignore_order_and_tolerance(tmp_path: Path) -> None:
    lines = GOLD.splitlines()
    shuffled = "\n".join([lines[0], lines[2], lines[1]]) + "\n"
    assert table(tmp_path, shuffled, ignore_order=True) == 1.0
    assert table(tmp_path, shuffled, ignore_order=False) == 0.0  # "sorted by date"
    rounded = GOLD.replace("3.15", "3.2")  # a median the instruction says not to round
    assert table(tmp_path, rounded, tolerance=0.1) == 1.0
    assert table(tmp_path, rounded, tolerance=1e-6) == 0.0


def test_text_rules_for_json_values() -> None:
    gold = {"month": "December", "label": "fog", "total_mm": 1232.8}
    answer = json.dumps({"Month": "december ", "label": "fog", "total_mm": 1232.8})
    assert score_text(gold, answer_text=answer).value == 1.0
    assert score_text(gold, answer_text=answer, case_sensitive=True).value == 0.0
    assert score_text(gold, answer_text=answer, whitespace_sensitive=True).value == 0.0
    # keys stay case-free: the rule is about values
    exact = json.dumps({"MONTH": "December", "label": "fog", "total_mm": 1232.8})
    assert score_text(gold, answer_text=exact, case_sensitive=True, whitespace_sensitive=True).value == 1.0
    assert score_text(gold, answer_text=answer, mode="compat", case_sensitive=True).value == 1.0  # official


def test_database_text_rules(tmp_path: Path) -> None:
    def database(name: str, firms: list[tuple[int, str]]) -> Path:
        path = tmp_path / name
        with sqlite3.connect(path) as connection:
            connection.execute("create table firm (firm_id integer, firm_name text)")
            connection.executemany("insert into firm values (?, ?)", firms)
        return path

    gold = database("gold.db", [(1, "General Motors"), (2, "US Steel")])
    shouted = database("pred.db", [(1, "GENERAL MOTORS"), (2, "US STEEL")])
    assert score_database(shouted, gold).value == 1.0
    assert score_database(shouted, gold, case_sensitive=True).value == 0.0


def test_instruction_mutations_follow_the_options(tmp_path: Path) -> None:
    spec = ScorerSpec(
        name="table",
        options={"file": "w.csv", "case_sensitive": True, "whitespace_sensitive": False, "ignore_order": False,
                 "tolerance": 1e-6},
    )  # fmt: skip
    mutations = {m.label: m for m in instruction_mutations(spec)}
    assert {label: m.forbidden for label, m in mutations.items()} == {
        "case changed in": True,
        "whitespace padded in": False,
        "order changed in": True,
        "rounded where it must not be in": True,
    }
    path = tmp_path / "w.csv"
    path.write_text(GOLD)
    assert mutations["case changed in"].change_file(path)
    assert path.read_text() == GOLD.replace("rain", "RAIN").replace("sun", "SUN")
    path.write_text(GOLD)
    assert mutations["rounded where it must not be in"].change_file(path)
    assert "3.15" not in path.read_text() and "4.7" in path.read_text()  # the finest forbidden rounding
    path.write_text("n,label\n1,7\n")  # no text, one row, integers only: nothing to change
    assert not any(m.change_file(path) for m in mutations.values())
    assert mutations["order changed in"].change_value({"a": [1, 2]}) == {"a": [2, 1]}


def test_every_builtin_workspace_task_states_what_its_instruction_requires() -> None:
    from daharness.suites import builtin_suites

    stated = ("case_sensitive", "whitespace_sensitive", "ignore_order", "tolerance")
    checked = 0
    for task_file in sorted((builtin_suites()["workspace"] / "tasks").glob("*/task.json")):
        for spec in json.loads(task_file.read_text())["scorers"]:
            if spec["name"] in ("table", "text", "database"):
                missing = [key for key in stated if key not in spec["options"]]
                assert not missing, f"{task_file.parent.name}: {spec['options'].get('file')} lacks {missing}"
                checked += 1
    assert checked == 22
