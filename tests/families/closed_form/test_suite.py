"""The built-in `closed-form` suite: its shape, and every reference solution reproduces its labels."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from daharness.suites import builtin_suites, load_suite

CONCEPTS = {
    "Summary Statistics",
    "Feature Engineering",
    "Correlation Analysis",
    "Machine Learning",
    "Distribution Analysis",
    "Outlier Detection",
    "Comprehensive Data Preprocessing",
}


@pytest.fixture(scope="module")
def suite():  # type: ignore[no-untyped-def]
    return load_suite("closed-form")


def test_suite_shape(suite) -> None:  # type: ignore[no-untyped-def]
    tasks = suite.tasks
    assert len(tasks) >= 40
    assert len({task.files[0].path for task in tasks}) >= 8
    assert {c for task in tasks for c in task.metadata.concepts} == CONCEPTS
    assert Counter(task.metadata.level for task in tasks).keys() == {"easy", "medium", "hard"}
    for task in tasks:
        assert 1 <= len(task.gold.answers) <= 8, task.id
        assert set(task.metadata.concepts) <= CONCEPTS, task.id
        assert task.reference is not None, task.id
        assert task.warnings == [], task.warnings
        for name, _ in task.gold.answers:
            assert f"@{name}[" in task.answer_format.text, (task.id, name)


def test_every_table_has_a_documented_source() -> None:
    sources = (builtin_suites()["closed-form"].parent / "README.md").read_text()  # its Data section
    for table in (builtin_suites()["closed-form"] / "tables").glob("*.csv"):
        assert f"`{table.name}`" in sources, table.name


def test_every_reference_solution_reproduces_its_labels(suite, closed_form_reference_run: Path) -> None:  # type: ignore[no-untyped-def]
    records = [
        json.loads(line) for line in (closed_form_reference_run / "samples.jsonl").read_text().splitlines()
    ]
    wrong = {r["id"]: r["score"]["details"]["sub_answers"] for r in records if r["score"]["value"] != 1.0}
    assert wrong == {}
    assert len(records) == len(suite.tasks)


def test_score_command_rescores_responses_for_a_builtin_suite(suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    responses = tmp_path / "responses.jsonl"
    lines = []
    for index, task in enumerate(suite.tasks):
        answers = " ".join(f"@{name}[{value}]" for name, value in task.gold.answers)
        if index == 0:
            answers = answers.replace("[", "[9", 1)  # one wrong sub-answer in the first question
        lines.append(json.dumps({"id": int(task.id), "response": f"Final Answer: {answers}"}))
    responses.write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--suite", "closed-form", "--responses", str(responses),
         "--mode", "strict", "--json", str(tmp_path / "out.json")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads((tmp_path / "out.json").read_text())
    n = len(suite.tasks)
    assert figures["main_results"]["Accuracy by Question"] == round((n - 1) / n, 4)
