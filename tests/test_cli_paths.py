"""Output paths and selections the command line cannot use: one line naming the path or option, exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import cli

OLD_RUN = Path(__file__).parent / "fixtures" / "old_run_v01"


def _one_line_error(args: list[str]) -> str:
    done = subprocess.run(cli(*args), capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_an_output_path_that_is_a_folder_or_under_a_file_is_named(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    folder = tmp_path / "folder"
    folder.mkdir()
    assert f"error: {folder}: cannot write (Is a directory)" in _one_line_error(
        ["compare", str(OLD_RUN), str(OLD_RUN), "--json", str(folder)]
    )
    assert f"error: {a_file}: not a folder" in _one_line_error(
        ["view", str(OLD_RUN), "--export", str(a_file)]
    )
    assert (
        f"error: {a_file / 'log.eval'}: cannot write (a file stands where a folder is needed)"
        in _one_line_error(["export", str(OLD_RUN), str(a_file / "log.eval")])
    )
    assert a_file.read_text() == "x"


def test_rescoring_into_the_run_itself_is_refused_and_leaves_it_untouched(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(OLD_RUN, run)
    before = (run / "samples.jsonl").read_text()
    message = _one_line_error(["rescore", str(run), "--out", f"{run}/"])
    assert "the new run directory must not be the run being rescored" in message
    assert (run / "samples.jsonl").read_text() == before


@pytest.mark.parametrize("ids", ["", ",", " , "])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_ids_naming_no_task_are_refused_instead_of_selecting_all(
    tmp_path: Path, command: str, ids: str
) -> None:
    out = tmp_path / "run"
    extra = ["--out", str(out)] if command == "run" else []
    extra += ["--agent", "reference"] if command == "run" else []
    message = _one_line_error([command, "--suite", "closed-form", "--ids", ids, *extra])
    assert "--ids: no task id given" in message
    assert not out.exists()


@pytest.mark.parametrize("newer", ["run.json", "trajectory"])
def test_a_run_written_by_a_newer_daharness_is_refused_naming_the_file(tmp_path: Path, newer: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(OLD_RUN, run)
    if newer == "run.json":
        target = run / "run.json"
        raw = json.loads(target.read_text())
    else:
        target = next((run / "trajectories").glob("*.json"))
        raw = json.loads(target.read_text())
    raw["format_version"] = 99
    target.write_text(json.dumps(raw))
    message = _one_line_error(["export", str(run), str(tmp_path / "log.eval")])
    assert f"{target}" in message and "written by a newer daharness (format 99)" in message


def test_a_base_url_that_is_not_http_is_refused_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    message = _one_line_error(
        [
            "run",
            "--suite",
            "closed-form",
            "--agent",
            "react",
            "--model",
            "m",
            "--base-url",
            "localhost:8000",
            "--out",
            str(out),
        ]
    )
    assert "error: --base-url: 'localhost:8000' is not an http:// or https:// URL" in message
    assert not out.exists()
