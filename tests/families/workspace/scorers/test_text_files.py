"""Text answers that name files (DA-Agent's `Terminate(output="result.json")`) and tasks with several
acceptable answers, through the registered `text` scorer as a run or a rescoring calls it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.task import AnswerFormat, ScorerSpec, Task
from daharness.sandbox.workspace import folder_snapshot
from daharness.scoring import score_submission

GOLD = {"highest country": ["Monaco"], "lowest country": ["Mongolia"]}


def task(**options: Any) -> Task:
    return Task(
        id="di-text-x",
        suite="test",
        family="workspace",
        instructions=["Which countries?"],
        answer_format=AnswerFormat(kind="text"),
        scorers=[ScorerSpec(name="text", options={"expected": GOLD, **options})],
    )


def score(folder: Path, answer: str, mode: str, **options: Any) -> float:
    settings = ScoringSettings(modes={"workspace": mode})
    return score_submission(
        task(**options), Submission(answers=[answer]), folder_snapshot(folder), settings
    ).value


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    (tmp_path / "result.json").write_text(json.dumps(GOLD), encoding="utf-8")
    (tmp_path / "wrong.json").write_text(json.dumps({**GOLD, "lowest country": ["Chad"]}), encoding="utf-8")
    (tmp_path / "answer.txt").write_text(json.dumps(GOLD), encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "nested.json").write_text(json.dumps(GOLD), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("mode", ["compat", "corrected"])
def test_an_answer_naming_a_json_file_is_read_from_it(outputs: Path, mode: str) -> None:
    assert score(outputs, "result.json", mode) == 1.0
    assert score(outputs, "wrong.json", mode) == 0.0
    assert score(outputs, "missing.json", mode) == 0.0
    assert score(outputs, json.dumps(GOLD), mode) == 1.0  # the answer itself


def test_several_names_are_averaged(outputs: Path) -> None:
    assert score(outputs, "result.json, wrong.json", "compat") == 0.5
    assert score(outputs, "result.json, wrong.json", "corrected") == 0.5


def test_compat_reads_only_json_files_by_their_base_name(outputs: Path) -> None:
    assert score(outputs, "answer.txt", "compat") == 0.0  # officially only .json files are read
    assert score(outputs, "answer.txt", "corrected") == 1.0
    # officially the directory is dropped: out/nested.json is looked for at the top of the outputs
    assert score(outputs, "/workspace/out/nested.json", "compat") == 0.0
    assert score(outputs, "out/nested.json", "corrected") == 1.0
    # any text that ends like a file name is read as file names: "see result.json" -> result.json
    assert score(outputs, "The answer is in result.json", "compat") == 1.0
    assert score(outputs, "The answer is in result.json", "corrected") == 0.0  # not only file names
    assert score(outputs, ".json", "compat") == 0.0  # ends like a file name, names none


@pytest.mark.parametrize("mode", ["compat", "corrected"])
def test_the_best_of_several_acceptable_answers_counts(tmp_path: Path, mode: str) -> None:
    alternatives = [{"answer": ["10k"]}, {"answer": ["B"]}]
    for answer, expected in (
        ('{"answer": ["B"]}', 1.0),
        ('{"answer": ["10k"]}', 1.0),
        ('{"answer": ["C"]}', 0.0),
    ):
        value = score(tmp_path, answer, mode, expected=alternatives, alternatives=True)
        assert value == expected, (answer, mode)


def test_a_text_scorer_without_a_gold_value_is_an_error_when_the_task_is_loaded() -> None:
    from daharness.core.errors import UserError
    from daharness.core.registry import scorers

    entry = scorers.get("text")
    assert entry.parse_options({"expected": None}, "task t").expected is None  # an explicit null counts
    assert entry.parse_options({"gold": "answer.json"}, "task t").gold == "answer.json"
    with pytest.raises(UserError, match=r"task t: scorer 'text': .*needs 'expected' or 'gold'"):
        entry.parse_options({"file": "answer.json"}, "task t")
