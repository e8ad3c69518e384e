"""Bad interactive suite data is a one-line error naming the task and the turn: at load time (unknown result
type, missing fields...) and at run time (a crashing reference, a history that does not run). Also: a
suite's private library is mounted read-only and importable in both sandbox backends."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daharness.core.errors import UserError
from daharness.core.runlog import ScoringSettings
from daharness.core.task import Task
from daharness.runs.pipeline import SandboxSettings, run_sample
from daharness.sandbox import open_sandbox
from daharness.suites import builtin_suites, load_suite

CARS = builtin_suites()["closed-form"] / "tables" / "cars.csv"
GOOD_TURNS = [
    {
        "query": "Load cars.csv as cars and count its rows.",
        "code": ["import pandas as pd", "cars = pd.read_csv('cars.csv')", "n = len(cars)"],
        "results": [{"type": "scalar", "name": "n"}],
    },
    {
        "query": "Average Miles_per_Gallon by Origin?",
        "code": "mpg = cars.groupby('Origin')['Miles_per_Gallon'].mean()\n",
        "results": [{"type": "series", "name": "mpg"}],
    },
]


def make_suite(folder: Path, turns: list[dict[str, Any]], *, library: bool = False, **dialogue: Any) -> str:
    (folder / "tables").mkdir(parents=True)
    shutil.copyfile(CARS, folder / "tables" / "cars.csv")
    (folder / "dialogues").mkdir()
    manifest: dict[str, Any] = {"name": "mini", "format": "interactive", "tables": "tables"}
    if library:
        (folder / "lib" / "minikit").mkdir(parents=True)
        (folder / "lib" / "minikit" / "__init__.py").write_text(
            'def count_rows(table):\n    """How many rows.\n\n    :param table: a DataFrame\n    """\n    return len(table)\n'
        )
        manifest["library"] = {"name": "minikit", "folder": "lib"}
    (folder / "suite.json").write_text(json.dumps(manifest))
    body = {"id": "mini", "tables": ["cars.csv"], "turns": turns, **dialogue}
    (folder / "dialogues" / "mini.json").write_text(json.dumps(body))
    return f"interactive:{folder}"


def _load_error(tmp_path: Path, turns: list[dict[str, Any]], **dialogue: Any) -> str:
    with pytest.raises(UserError) as caught:
        load_suite(make_suite(tmp_path / "suite", turns, **dialogue))
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_good_mini_suite_loads(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path / "suite", GOOD_TURNS))
    assert [t.id for t in suite.tasks] == ["mini-01", "mini-02"]
    assert suite.tasks[1].gold.data["history"] == [
        {"turn": 1, "code": "\n".join(GOOD_TURNS[0]["code"]) + "\n"}
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"results": [{"type": "tensor", "name": "mpg"}]},
            "task mini-02 (turn 2): results[0]: unknown result type 'tensor'",
        ),
        ({"results": []}, "task mini-02 (turn 2): a code turn needs 'results'"),
        (
            {"results": [{"type": "plot", "name": "x"}]},
            "task mini-02 (turn 2): results[0]: a plot result needs 'file'",
        ),
        ({"action": "fast_fail"}, "task mini-02 (turn 2): a code turn's action must be one of"),
        (
            {"answer_type": "choice", "action": "plot_qa", "choices": ["a", "b"], "answer": "C"},
            "'answer' must be one of the letters AB",
        ),
        ({"code": ""}, "task mini-02 (turn 2): field 'code' must be a non-empty string"),
        ({"resutls": []}, "task mini-02 (turn 2): unknown field 'resutls'"),
        ({"results": [{"type": "model", "name": "m"}]}, "task mini-02 (turn 2): scorer 'interactive_code'"),
        ({"decoys": 5}, "task mini-02 (turn 2): 'decoys' must be a list"),
        ({"task": "no"}, "task mini-02 (turn 2): 'task' must be true or false"),
        ({"execute": "no"}, "task mini-02 (turn 2): 'execute' must be true or false"),
    ],
)
def test_load_errors_name_the_file_task_and_turn(
    tmp_path: Path, change: dict[str, Any], expected: str
) -> None:
    turns = [GOOD_TURNS[0], {**GOOD_TURNS[1], **change}]
    message = _load_error(tmp_path, turns)
    assert "mini.json" in message and expected in message


def test_private_dialogues_need_a_library_whose_functions_the_reference_calls(tmp_path: Path) -> None:
    assert "needs the suite's 'library'" in _load_error(tmp_path, GOOD_TURNS, private=True)
    assert "mini.json: 'private' must be true or false" in _load_error(
        tmp_path / "flag", GOOD_TURNS, private="no"
    )
    with pytest.raises(
        UserError,
        match=r"task mini-01 \(turn 1\): a private turn's reference code calls no function of minikit",
    ):
        load_suite(make_suite(tmp_path / "other", GOOD_TURNS, library=True, private=True))


def _run(spec: str, out: Path, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", spec, "--out", str(out), *extra],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["id"]: r for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}


def test_a_broken_history_is_an_error_naming_task_and_turn(tmp_path: Path) -> None:
    turns = [
        GOOD_TURNS[0],
        {**GOOD_TURNS[1], "code": "mpg = cars['mpg'].mean()\n", "task": False},  # KeyError
        {
            "query": "Share of 8 cylinders?",
            "code": "share = (cars['Cylinders'] == 8).mean()\n",
            "results": [{"type": "scalar", "name": "share"}],
        },
    ]
    spec = make_suite(tmp_path / "suite", turns)
    records = _run(spec, tmp_path / "run", "--agent", "reference", "--max-errors", "1")
    assert records["mini-01"]["status"] == "scored" and records["mini-01"]["score"]["value"] == 1.0
    assert records["mini-03"]["error"] == (
        "task mini-03 (turn 3): the history does not run: the code of turn 2 fails: KeyError: 'mpg'"
    )
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "validate", "--suite", spec],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "1 of 2 tasks pass; failing: mini-03" in done.stdout


def test_a_crashing_reference_is_an_error_naming_task_and_turn(tmp_path: Path) -> None:
    turns = [
        GOOD_TURNS[0],
        {"query": "Ratio?", "code": "ratio = 1 / 0\n", "results": [{"type": "scalar", "name": "ratio"}]},
    ]
    spec = make_suite(tmp_path / "suite", turns)
    records = _run(spec, tmp_path / "run", "--agent", "reference", "--max-errors", "1")
    assert records["mini-02"]["error"] == (
        "reference solution of task mini-02 (turn 2) failed: ZeroDivisionError: division by zero"
    )
    # any other agent meets the crash when the family runs the reference to score its answer
    task = load_suite(spec).tasks[1]
    result = run_sample(task, _Answers("ratio = 2"), sandbox=SandboxSettings(), scoring=ScoringSettings())
    assert result.record.status == "error"
    assert (
        result.record.error
        == "task mini-02 (turn 2): the reference code fails: ZeroDivisionError: division by zero"
    )


class _Answers:
    """An agent that answers every task with the same code, without a model."""

    name = "fixed"

    def __init__(self, code: str) -> None:
        self.code = code

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def solve(self, task: Task, sandbox: Any) -> Any:
        from daharness.core.submission import Submission

        return Submission(answers=[self.code])


@pytest.mark.parametrize("backend", ["bwrap", "unsafe-local"])
def test_the_private_library_is_importable_read_only_and_listed(tmp_path: Path, backend: str) -> None:
    turns = [
        {
            **GOOD_TURNS[0],
            "code": "import pandas as pd\nfrom minikit import count_rows\nn = count_rows(pd.read_csv('cars.csv'))\n",
        }
    ]
    task = load_suite(make_suite(tmp_path / "suite", turns, library=True, private=True)).tasks[0]
    assert task.libraries[0].functions["count_rows"].startswith("def count_rows(table):\n    How many rows.")
    with open_sandbox(backend, task) as box:
        imported = box.python(
            "import minikit, pandas as pd\nprint(minikit.count_rows(pd.read_csv('cars.csv')))"
        )
        assert imported.ok and imported.stdout.strip() == "406"
        script = box.bash("python -c 'import minikit; print(minikit.__name__)'")  # child Pythons too
        assert script.stdout.strip() == "minikit"
        if backend == "bwrap":  # mounted read-only (unsafe-local isolates nothing)
            written = box.python(
                "import minikit, os\nopen(os.path.join(os.path.dirname(minikit.__file__), 'x.py'), 'w')"
            )
            assert (
                not written.ok
                and written.error is not None
                and written.error.name in ("OSError", "PermissionError")
            )
    plain = load_suite(make_suite(tmp_path / "plain", GOOD_TURNS)).tasks[0]
    with open_sandbox(backend, plain) as box:
        assert box.python("import minikit").error.name == "ModuleNotFoundError"  # type: ignore[union-attr]
