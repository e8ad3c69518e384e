"""`daharness export --format sft`: a real react run (the scripted model server, the sandbox) written as
chat-format training examples, filtered by score."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sample_runs import PLOT, SUITE


@pytest.fixture(scope="module")
def run_dir(react_export_run: Path) -> Path:
    return react_export_run  # tasks 0 and 3 answered wrong, and a dialogue sample that scored 0.5


def _export(run: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "daharness", "export", str(run), "--format", "sft", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_examples_hold_the_conversation_with_tool_calls(run_dir: Path, tmp_path: Path) -> None:
    done = _export(run_dir, tmp_path / "all.jsonl")
    assert done.returncode == 0, done.stderr
    examples = {e["metadata"]["id"]: e for e in _lines(tmp_path / "all.jsonl")}
    assert sorted(examples) == sorted([*(task.id for task in SUITE.tasks[:4]), "dialogue-1"])
    task = SUITE.tasks[1]
    example = examples[task.id]
    roles = [m["role"] for m in example["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]  # react's prompt is one user message
    call_turn, tool_turn, final = example["messages"][-3:]
    call = call_turn["tool_calls"][0]
    assert call["function"]["name"] == "python"
    assert json.loads(call["function"]["arguments"])["code"].strip() == PLOT.format(path=task.files[0].path)
    assert call_turn["content"].startswith("Thought: plot the data first")
    assert tool_turn["tool_call_id"] == call["id"] and tool_turn["content"].startswith(
        "("
    )  # the frame's shape
    assert final["content"].endswith(" ".join(f"@{n}[{v}]" for n, v in task.gold.answers))
    assert task.instruction in example["messages"][0]["content"]
    assert example["tools"][0]["function"]["name"] == "python"
    metadata = example["metadata"]
    assert (metadata["suite"], metadata["family"], metadata["score"], metadata["model"]) == (
        "closed-form", "closed-form", 1.0, "fake-model"
    )  # fmt: skip
    assert examples[SUITE.tasks[0].id]["metadata"]["score"] == 0.0


def test_the_users_later_turns_are_user_messages(run_dir: Path, tmp_path: Path) -> None:
    assert _export(run_dir, tmp_path / "all.jsonl").returncode == 0
    dialogue = next(e for e in _lines(tmp_path / "all.jsonl") if e["metadata"]["id"] == "dialogue-1")
    assert dialogue["messages"] == [
        {"role": "user", "content": "Which column?"},  # the prompt, which holds the first user turn
        {"role": "assistant", "content": "Do you mean in the raw file?"},
        {"role": "user", "content": "Yes, the raw file."},
        {"role": "assistant", "content": "The column `income`."},
    ]
    assert dialogue["tools"] == [] and dialogue["metadata"]["family"] == "interactive"


def test_min_score_keeps_only_the_right_answers(run_dir: Path, tmp_path: Path) -> None:
    done = _export(run_dir, tmp_path / "right.jsonl", "--min-score", "1")
    assert done.returncode == 0, done.stderr
    assert "wrote 2 examples" in done.stdout
    assert [e["metadata"]["id"] for e in _lines(tmp_path / "right.jsonl")] == sorted(
        task.id for task in SUITE.tasks[1:3]
    )  # the wrong answers (tasks 0 and 3) and the dialogue (0.5) are left out


def test_not_a_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _export(tmp_path, tmp_path / "x.jsonl")
    assert done.returncode == 2 and "not a run directory" in done.stderr
