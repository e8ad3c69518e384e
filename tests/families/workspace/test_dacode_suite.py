"""`daharness run --suite dacode:DIR` end to end: official DA-Code tasks copied from ../shared in both
layouts, the da-agent driven by a scripted model on a real HTTP server, scored in both modes.

The scripted agent writes each task's answer the way an agent would (a CSV, a JSON answer file, a
matplotlib chart saved as result.png); one CSV has its rows scrambled across columns, which the
official evaluator accepts (compat 1) and a correct one does not (corrected 0).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fake_openai import FakeOpenAI
from helpers import shared_folder

MATERIAL = shared_folder() / "dacode-public"
TASKS = ("dm-csv-001", "di-text-001", "plot-bar-007", "data-sa-004")

pytestmark = pytest.mark.skipif(
    not (MATERIAL / "tasks.jsonl").is_file(),
    reason=f"DA-Code material not found at {MATERIAL} (set DAHARNESS_SHARED to the shared folder)",
)


def _lines(name: str) -> list[str]:
    lines = (MATERIAL / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if json.loads(line)["id"] in TASKS]


def copy_tasks(target: Path, layout: str) -> Path:
    """The chosen tasks in the flat layout (tasks.jsonl, eval.jsonl) or the official repository's
    (da_code/configs/task/*.jsonl, da_code/configs/eval/*.jsonl), with source/ and gold/."""
    root = target / "da_code" if layout == "official" else target
    for folder in ("source", "gold"):
        for task in TASKS:
            shutil.copytree(MATERIAL / folder / task, root / folder / task)
    tasks, evals = _lines("tasks.jsonl"), _lines("eval.jsonl")
    if layout == "flat":
        (root / "tasks.jsonl").write_text("\n".join(tasks) + "\n")
        (root / "eval.jsonl").write_text("\n".join(evals) + "\n")
    else:  # split over several files, as the repository does (di.jsonl, dm.jsonl, ...)
        for kind, rows in (("task", tasks), ("eval", evals)):
            (root / "configs" / kind).mkdir(parents=True)
            (root / "configs" / kind / "a.jsonl").write_text("\n".join(rows[:2]) + "\n")
            (root / "configs" / kind / "b.jsonl").write_text("\n".join(rows[2:]) + "\n")
    return target


def _python(code: str, then: str) -> str:
    return f'Thought: {then}\nAction: Python(file_path="solve.py"):\n```python\n{code}\n```'


def _write(name: str, content: str) -> str:
    return f"open({name!r}, 'w').write({content!r})"


def _chart_code() -> str:
    plot = json.loads((MATERIAL / "gold" / "plot-bar-007" / "plot.json").read_text())
    values = np.load(MATERIAL / "gold" / "plot-bar-007" / "result.npy")[0].tolist()
    return "\n".join(
        [
            "import matplotlib",
            "matplotlib.use('Agg')",
            "import matplotlib.pyplot as plt",
            f"fig, ax = plt.subplots(figsize={tuple(plot['figsize'])})",
            f"ax.bar({plot['xtick_labels']!r}, {values!r}, color={plot['color'][0]!r})",
            f"ax.set_title({plot['graph_title']!r})",
            f"ax.set_xlabel({plot['x_label']!r})",
            f"ax.set_ylabel({plot['y_label']!r})",
            "plt.savefig('result.png')",
        ]
    )


def _scrambled_csv() -> str:
    """The gold table with fighter_num rotated by one row: every column right, every pairing wrong."""
    header, *rows = (MATERIAL / "gold" / "dm-csv-001" / "undefeated.csv").read_text().splitlines()
    levels, numbers = [r.split(",")[0] for r in rows], [r.split(",")[1] for r in rows]
    numbers = numbers[1:] + numbers[:1]
    return "\n".join([header, *(f"{a},{b}" for a, b in zip(levels, numbers, strict=True))]) + "\n"


def responder(request: dict) -> str:
    text = "\n".join(str(m["content"]) for m in request["messages"])
    turn = sum(m["role"] == "assistant" for m in request["messages"])
    instructions = {json.loads(line)["instruction"]: json.loads(line)["id"] for line in _lines("tasks.jsonl")}
    task = next(task for instruction, task in instructions.items() if instruction in text)
    gold = MATERIAL / "gold" / task
    answers = {
        "dm-csv-001": ("undefeated.csv", lambda: _write("undefeated.csv", _scrambled_csv())),
        "di-text-001": ("result.json", lambda: _write("result.json", (gold / "result.json").read_text())),
        "plot-bar-007": ("result.png", _chart_code),
        "data-sa-004": ("weather.csv", lambda: _write("weather.csv", (gold / "weather.csv").read_text())),
    }
    output, make_code = answers[task]
    code = make_code()
    if turn == 0:
        return _python(code, "write the answer")
    return f'Thought: done\nAction: Terminate(output="{output}")'


def run(server: FakeOpenAI, suite: Path, out: Path, mode: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", f"dacode:{suite}", "--agent", "da-agent",
         "--model", "scripted", "--base-url", server.base_url, "--out", str(out), "--cache", "off",
         "--workspace-mode", mode, "-j", "2"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert all(r["status"] == "scored" for r in records), [r.get("error") for r in records]
    return {r["id"]: r["score"]["value"] for r in records}


@pytest.mark.parametrize(("layout", "mode"), [("flat", "compat"), ("official", "corrected")])
def test_a_scripted_agent_on_official_tasks(tmp_path: Path, layout: str, mode: str) -> None:
    suite = copy_tasks(tmp_path / "dacode", layout)
    with FakeOpenAI() as server:
        server.responder = responder
        scores = run(server, suite, tmp_path / "run", mode)
    assert scores == {
        "dm-csv-001": 1.0 if mode == "compat" else 0.0,  # official defect: each column sorted alone
        "di-text-001": 1.0,  # the answer file named by Terminate is read
        "plot-bar-007": 1.0,  # the capture, read as DA-Agent's post-processing would write it
        "data-sa-004": 1.0,
    }
    chart = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    assert chart["family"] == "workspace"
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["counts"]["errors"] == 0


def test_unknown_layout_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", f"dacode:{tmp_path / 'empty'}", "--agent",
         "reference", "--out", str(tmp_path / "run")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "expected tasks.jsonl and eval.jsonl, or configs/task/*.jsonl" in done.stderr
    assert "Traceback" not in done.stderr
