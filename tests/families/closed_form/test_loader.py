"""Loading official InfiAgent-DABench files: defects become warnings, broken input one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from daharness.core.errors import UserError
from daharness.families.closed_form.loader import load_dabench
from daharness.suites import load_suite

MINI = Path(__file__).parent / "fixtures" / "dabench_mini"


def _write(path: Path, rows: list[dict] | str) -> Path:
    text = rows if isinstance(rows, str) else "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(text)
    return path


def _question(qid: int, fmt: str = "@a[x]", file_name: str = "small.csv") -> dict:
    return {"id": qid, "question": "Q?", "concepts": ["Summary Statistics"], "constraints": "",
            "format": fmt, "file_name": file_name, "level": "easy"}  # fmt: skip


def test_official_fields_map_onto_the_task_model() -> None:
    tasks = load_dabench(MINI / "questions.jsonl", MINI / "labels.jsonl", MINI / "tables", suite="mini")
    assert [t.id for t in tasks] == ["0", "3", "7", "12", "20", "25"]  # ids are not contiguous
    task = tasks[1]
    assert task.family == "closed-form"
    assert task.instruction == "Question 3?"
    assert task.constraints == "Round to 2 places."
    assert task.answer_format.names == ["r", "kind"]
    assert task.gold.answers == [("r", "0.21"), ("kind", "linear")]
    assert task.metadata.concepts == ["Correlation Analysis", "Summary Statistics"]
    assert task.metadata.level == "medium" and task.metadata.source_id == 3
    assert task.files[0].path == "small.csv" and task.files[0].source.is_file()


def test_label_defects_are_warnings_naming_the_id(tmp_path: Path) -> None:
    questions = _write(
        tmp_path / "questions.jsonl", [_question(i, "@a[x] @b[y]") for i in (1, 2, 3, 4, 5, 6)]
    )
    labels = _write(
        tmp_path / "labels.jsonl",
        [
            {"id": 1, "common_answers": [["a", "["]]},
            {"id": 2, "common_answers": [["a", "1"], ["a", "2"]]},
            {"id": 3, "common_answers": [["a", '"linear"']]},
            {"id": 4, "common_answers": []},
            {"id": 5, "common_answers": [["a", "/mnt/data/out.csv"]]},
            {"id": 6, "common_answers": [["a", "1"], ["b", "2"]]},
        ],
    )
    tasks = load_dabench(questions, labels, MINI / "tables", suite="t")
    warnings = {t.id: " ".join(t.warnings) for t in tasks}
    assert "task 1: label 'a' has unbalanced brackets" in warnings["1"]
    assert "task 2: duplicate answer name 'a'" in warnings["2"]
    assert "task 3: label 'a' has literal quotes" in warnings["3"]
    assert "task 4: empty answer list" in warnings["4"]
    assert "task 5: label 'a' holds an absolute path" in warnings["5"]
    assert warnings["6"] == ""


def test_suites_check_lists_defective_tasks_and_exits_1() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "suites", "check", f"dabench:{MINI / 'questions.jsonl'}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert (
        "task 20: label 'note' has unbalanced brackets: '['" in done.stdout
    )  # brackets are text, not markup
    assert "task 25: empty answer list" in done.stdout
    assert "6 tasks, 2 with defects" in done.stdout


@pytest.mark.parametrize(
    ("questions", "labels", "message"),
    [
        ('{"id": 1, "question": "Q"\n', None, "questions.jsonl:1: not valid JSON"),
        (json.dumps({"id": 1, "question": "Q", "file_name": "small.csv"}) + "\n", None,
         "questions.jsonl:1: missing field 'format'"),
        (json.dumps(_question(1, file_name="nope.csv")) + "\n", None,
         "questions.jsonl:1: question 1: table 'nope.csv' not found"),
        (json.dumps(_question(1)) + "\n" + json.dumps(_question(1)) + "\n", None, "questions.jsonl:2: duplicate question id 1"),
        (json.dumps(_question(1)) + "\n" + json.dumps(_question(2)) + "\n", '{"id": 1, "common_answers": []}\n',
         "questions.jsonl:2: question 2 has no labels"),
        (json.dumps(_question(1)) + "\n", '{"id": 1, "common_answers": []}\n{"id": 9, "common_answers": []}\n',
         "labels.jsonl:2: labels for id 9 but no such question"),
        (json.dumps(_question(1)) + "\n", '{"id": 1, "common_answers": "a"}\n',
         "labels.jsonl:1: field 'common_answers' must be a list"),
    ],
)  # fmt: skip
def test_broken_files_raise_one_line_errors(
    tmp_path: Path, questions: str, labels: str | None, message: str
) -> None:
    q = _write(tmp_path / "questions.jsonl", questions)
    lab = _write(tmp_path / "labels.jsonl", labels or '{"id": 1, "common_answers": [["a", "1"]]}\n')
    with pytest.raises(UserError) as caught:
        load_dabench(q, lab, MINI / "tables", suite="t")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unknown_suite_names_the_alternatives() -> None:
    with pytest.raises(UserError, match=r"unknown suite 'nope'.*closed-form.*dabench:"):
        load_suite("nope")


def test_a_dabench_folder_needs_a_manifest_naming_its_files(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"a folder without suite\.json; name the questions file"):
        load_suite(f"dabench:{tmp_path}")
    (tmp_path / "suite.json").write_text(json.dumps({"name": "x", "format": "dabench", "labels": "l.jsonl"}))
    with pytest.raises(UserError, match=r"suite\.json: field 'questions' must name a file or folder$"):
        load_suite(f"dabench:{tmp_path}")


def test_dabench_suite_finds_labels_and_tables_beside_the_questions() -> None:
    suite = load_suite(f"dabench:{MINI / 'questions.jsonl'}")
    assert suite.name == "dabench:questions"
    assert len(suite.tasks) == 6
    assert suite.sources["tables"].endswith("tables")


def test_run_with_unknown_suite_exits_2_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--agent", "reference", "--suite", "nope", "--out", str(tmp_path / "r")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error: unknown suite 'nope'")
    assert "Traceback" not in done.stderr


def test_debug_flag_shows_the_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "--debug", "run", "--agent", "reference", "--suite", "nope", "--out", str(tmp_path / "r")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" in done.stderr and "error: unknown suite 'nope'" in done.stderr
