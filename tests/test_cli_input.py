"""Bad input on the command line: one line naming the file and line, or the option, and exit 2."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import cli

FIXTURE = Path(__file__).parent / "fixtures" / "runnable"


def _files(tmp_path: Path) -> dict[str, Path]:
    files = {name: tmp_path / f"{name}.jsonl" for name in ("responses", "questions", "labels")}
    shutil.copyfile(FIXTURE / "questions.jsonl", files["questions"])
    shutil.copyfile(FIXTURE / "labels.jsonl", files["labels"])
    files["responses"].write_text('{"id": 1, "response": "@mean_x[2.00]"}\n')
    return files


def _spoil_utf8(path: Path) -> None:
    with path.open("ab") as handle:
        handle.write(b'{"id": 9, "response": "caf\xe9"}\n')  # Latin-1, not UTF-8


def _nest(path: Path) -> None:
    path.write_text('{"id": 1, "response": ' + "[" * 100_000 + "]" * 100_000 + "}\n")


@pytest.mark.parametrize(
    ("spoil", "words"),
    [
        (lambda f: _spoil_utf8(f["responses"]), "responses.jsonl:2: not UTF-8 text (byte 0xe9 at column 27)"),
        (lambda f: _spoil_utf8(f["questions"]), "questions.jsonl:6: not UTF-8 text (byte 0xe9"),
        (lambda f: _spoil_utf8(f["labels"]), "labels.jsonl:6: not UTF-8 text (byte 0xe9"),
        (lambda f: _nest(f["responses"]), "responses.jsonl:1: JSON nested too deeply"),
        (lambda f: f["responses"].write_text(""), "responses.jsonl: holds no responses (the file is empty)"),
    ],
    ids=["responses-latin1", "questions-latin1", "labels-latin1", "nested-100k", "empty-responses"],
)
def test_bad_score_input_is_one_line_naming_file_and_line(tmp_path: Path, spoil, words: str) -> None:  # type: ignore[no-untyped-def]
    files = _files(tmp_path)
    spoil(files)
    done = subprocess.run(
        cli("score", "--responses", str(files["responses"]), "--questions", str(files["questions"]),
            "--labels", str(files["labels"])),
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout
    assert done.stderr.count("\n") == 1 and words in done.stderr and "Traceback" not in done.stderr


LIMIT_HELP = "--limit: give N (the first N tasks) or A-B (tasks A to B, counted from 1, both included), e.g. 10 or 10-20"


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--step-timeout", "-1", "error: --step-timeout: must be at least 0.1\n"),
        ("--memory-mb", "1", "error: --memory-mb: must be at least 512\n"),
        ("--cpus", "0", "error: --cpus: must be at least 0.1\n"),
        ("--workspace-files", "0", "error: --workspace-files: must be at least 1\n"),
        ("--temperature", "7", "error: --temperature: must be at most 2\n"),
        ("--limit", "two", f"error: {LIMIT_HELP}, not 'two'\n"),
        ("--limit", "4-2", f"error: {LIMIT_HELP}, not '4-2'\n"),
    ],
)
def test_option_values_out_of_range_are_refused_before_anything_runs(
    tmp_path: Path, option: str, value: str, words: str
) -> None:
    out = tmp_path / "run"
    done = subprocess.run(cli("run", "--out", str(out), option, value), capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and words in done.stderr and not out.exists()
