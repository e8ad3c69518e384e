"""`daharness score` on official-layout files: strict reproduces the official figures, normalized differs.

The expected numbers are worked out by hand in the comments from the fixture in fixtures/dabench_mini.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from daharness.families.closed_form.rescore import rescore_dabench

MINI = Path(__file__).parent / "fixtures" / "dabench_mini"


def _figures(mode: str) -> dict:
    figures, _ = rescore_dabench(
        MINI / "responses.jsonl",
        questions=MINI / "questions.jsonl",
        labels=MINI / "labels.jsonl",
        suite=None,
        mode=mode,  # type: ignore[arg-type]
    )
    return figures


def test_strict_figures_match_the_official_rule() -> None:
    figures = _figures("strict")
    # counted: 0 (right), 7 (count right via last-wins, ids "4,5,9" != "4, 5, 9"), 12 ("no" != "No"),
    # 20 (right), 25 (empty labels: all({}) is True); 3 has an empty response and is excluded.
    assert figures["main_results"] == {
        "Accuracy by Question": 0.6,  # 3 of 5
        "Accuracy Proportional by Sub-Question": 0.6,  # (1 + .5 + .5 + 1 + 0) / 5
        "Accuracy by Sub-Question": 0.7143,  # 5 of 7
    }
    assert figures["concept_accuracy_analysis"] == {
        "Summary Statistics": 1.0,
        "Outlier Detection": 0.0,
        "Distribution Analysis": 0.0,
        "Feature Engineering": 0.5,
        "Machine Learning": 1.0,
        "Comprehensive Data Preprocessing": 1.0,
    }
    assert figures["concept_count_accuracy_analysis"] == {"1": 0.6667, "2": 0.0, "3": 1.0}
    assert figures["two_or_more_concepts_accuracy"] == 0.5
    assert figures["by_level"] == {"easy": 1.0, "hard": 0.3333}  # 7 F, 12 F, 20 T
    assert figures["counts"]["excluded"] == 1


def test_normalized_figures_differ_where_strict_is_unfair() -> None:
    figures = _figures("normalized")
    # 3 now counts as wrong, 12 becomes right, 25 (no labels) is excluded as unscorable; 7 gives two
    # counts ("First @count[2], rechecked: @count[3]"), a hedge, so its ids (now read as a list) are
    # right but the question is not.
    assert figures["main_results"] == {
        "Accuracy by Question": 0.6,  # 3 of 5
        "Accuracy Proportional by Sub-Question": 0.7,  # (1 + 0 + .5 + 1 + 1) / 5
        "Accuracy by Sub-Question": 0.6667,  # 6 of 9
    }
    assert figures["concept_accuracy_analysis"]["Correlation Analysis"] == 0.0
    assert figures["concept_accuracy_analysis"]["Summary Statistics"] == 0.5
    assert figures["concept_accuracy_analysis"]["Outlier Detection"] == 0.0  # question 7
    assert figures["concept_count_accuracy_analysis"] == {"1": 0.5, "2": 0.5, "3": 1.0}
    assert figures["two_or_more_concepts_accuracy"] == 0.6667
    assert figures["by_level"] == {"easy": 1.0, "medium": 0.0, "hard": 0.6667}


def test_score_cli_writes_the_official_json_layout(tmp_path: Path) -> None:
    target = tmp_path / "analysis.json"
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--questions", str(MINI / "questions.jsonl"),
         "--labels", str(MINI / "labels.jsonl"), "--responses", str(MINI / "responses.jsonl"),
         "--mode", "strict", "--json", str(target)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "60.00%" in done.stdout
    written = json.loads(target.read_text())
    assert list(written) == [
        "main_results",
        "concept_accuracy_analysis",
        "concept_count_accuracy_analysis",
        "two_or_more_concepts_accuracy",
        "by_level",
    ]
    assert written["main_results"]["Accuracy by Sub-Question"] == 0.7143
    assert "task 20: label 'note' has unbalanced brackets" in done.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": 0, "response": "@mean[1]"}\nnot json\n', "responses.jsonl:2: not valid JSON"),
        ('{"id": 0, "reply": "x"}\n', "responses.jsonl:1: missing field 'response'"),
        ('{"id": 999, "response": "@mean[1]"}\n', "responses.jsonl: no response id names a question"),
    ],
)
def test_bad_response_files_give_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    responses = tmp_path / "responses.jsonl"
    responses.write_text(content)
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--questions", str(MINI / "questions.jsonl"),
         "--labels", str(MINI / "labels.jsonl"), "--responses", str(responses)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_score_refuses_a_suite_that_is_not_closed_form(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--suite", "workspace", "--responses", str(MINI / "responses.jsonl")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --suite workspace: not a closed-form suite; --responses rescoring needs @name[value] answers"
    )


def test_responses_naming_no_question_are_listed_as_a_warning(tmp_path: Path) -> None:
    responses = tmp_path / "responses.jsonl"
    responses.write_text((MINI / "responses.jsonl").read_text() + '{"id": 999, "response": "@mean[1]"}\n')
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--questions", str(MINI / "questions.jsonl"),
         "--labels", str(MINI / "labels.jsonl"), "--responses", str(responses), "--mode", "strict"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "60.00%" in done.stdout  # the figures of the matching responses are unchanged
    assert "responses naming no question (2): 99, 999" in done.stderr  # the fixture has one of its own


def test_rescoring_dacode_outputs_from_a_folder_that_is_not_there_is_refused(tmp_path: Path) -> None:
    tasks, evals = tmp_path / "tasks.jsonl", tmp_path / "eval.jsonl"
    tasks.write_text(""), evals.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--dacode-tasks", str(tasks), "--dacode-eval", str(evals),
         "--gold", str(tmp_path), "--outputs", str(tmp_path / "no-such-outputs")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: --outputs {tmp_path / 'no-such-outputs'}: not a folder"
