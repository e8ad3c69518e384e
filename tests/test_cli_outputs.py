"""Outputs the user names are checked before the work (issue 22): an unwritable --json or --html path is
refused before scoring or comparing, runs with no sample in common are not compared into a table of
dashes, and an export path keeps the name it was given."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import cli

from daharness.core.record import SampleRecord
from daharness.core.runlog import RunSpec
from daharness.core.score import Score
from daharness.runs.rundir import RunDir

FIXTURE = Path(__file__).parent / "fixtures" / "runnable"
OLD_RUN = Path(__file__).parent / "fixtures" / "old_run_v01"


def _refused(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cli(*args), capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    return done


def _run(root: Path, suite: str, ids: list[str]) -> Path:
    run = RunDir.open_for_writing(root, RunSpec(suite={"name": suite}, agent={"name": "agent"}))
    for sample_id in ids:
        run.append(
            SampleRecord(
                id=sample_id, status="scored", agent="agent", family="closed-form", score=Score(value=1.0),
                started_at="2026-01-01T00:00:00+00:00", duration_s=1.0,
            )
        )  # fmt: skip
    return root


@pytest.mark.parametrize("option", ["--json", "--html"])
def test_compare_refuses_an_unwritable_output_before_comparing(tmp_path: Path, option: str) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    done = _refused("compare", str(OLD_RUN), str(OLD_RUN), option, str(blocker / "out"))
    assert done.stderr == f"error: {blocker / 'out'}: cannot write (a file stands where a folder is needed)\n"
    assert done.stdout == ""  # before: the whole comparison was printed, then the error


def test_score_refuses_an_unwritable_json_before_scoring(tmp_path: Path) -> None:
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"id": 1, "response": "@mean_x[2.00]"}\n')
    done = _refused(
        "score", "--responses", str(responses), "--questions", str(FIXTURE / "questions.jsonl"),
        "--labels", str(FIXTURE / "labels.jsonl"), "--json", str(tmp_path),
    )  # fmt: skip
    assert done.stderr == f"error: {tmp_path}: cannot write (Is a directory)\n" and done.stdout == ""


def test_runs_of_different_suites_are_not_compared_into_dashes(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", "closed-form", ["0", "2"])
    b = _run(tmp_path / "b", "workspace", ["dw-clean-barley"])
    done = _refused("compare", str(a), str(b))
    assert done.stderr == (
        f"error: {b} ran suite 'workspace', {a} ran 'closed-form': no scored sample in common, nothing to compare\n"
    )
    other = _run(tmp_path / "c", "closed-form", ["5"])
    done = _refused("compare", str(a), str(other))
    assert done.stderr == f"error: {other} and {a}: no scored sample in common, nothing to compare\n"
    shared = _run(tmp_path / "d", "other-suite", ["0"])
    warned = subprocess.run(cli("compare", str(a), str(shared)), capture_output=True, text=True)
    assert warned.returncode == 0
    assert (
        "warning: B is a run of suite 'other-suite' and A of 'closed-form': samples are paired by id"
        in warned.stdout
    )


def test_an_export_path_keeps_its_name(tmp_path: Path) -> None:
    done = _refused("export", str(OLD_RUN), str(tmp_path / "out.txt"))
    assert done.stderr == (
        f"error: {tmp_path / 'out.txt'}: an Inspect log is a .eval or .json file; name one, or a folder to "
        "write it in\n"
    )
    assert not (tmp_path / "out.txt").exists()  # before: a folder out.txt/ holding old_run_v01.eval
