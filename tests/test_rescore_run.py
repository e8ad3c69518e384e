"""`daharness rescore RUN_DIR`: a finished run scored again from its saved answers and artifacts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


def _scores(run: Path) -> dict[str, float]:
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    return {r["id"]: r["score"]["value"] for r in records if r["status"] == "scored"}


def _rescore(run: Path, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "daharness", "rescore", str(run), "--out", str(out), *options]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_rescoring_in_the_same_mode_reproduces_every_score(
    workspace_reference_run: Path, tmp_path: Path
) -> None:
    done = _rescore(workspace_reference_run, tmp_path / "again")
    assert done.returncode == 0, done.stderr
    original = _scores(workspace_reference_run)
    assert len(original) == 32 and _scores(tmp_path / "again") == original
    spec = json.loads((tmp_path / "again" / "run.json").read_text())
    assert spec["rescored_from"] == str(workspace_reference_run.resolve())
    assert (tmp_path / "again" / "report.html").is_file()


def test_rescoring_in_another_mode_records_that_mode(closed_form_reference_run: Path, tmp_path: Path) -> None:
    done = _rescore(closed_form_reference_run, tmp_path / "normalized", "--mode", "normalized")
    assert done.returncode == 0, done.stderr
    spec = json.loads((tmp_path / "normalized" / "run.json").read_text())
    before = json.loads((closed_form_reference_run / "run.json").read_text())
    assert before["scoring"]["modes"]["closed-form"] == "strict"
    assert spec["scoring"]["modes"]["closed-form"] == "normalized"
    records = [
        json.loads(line) for line in (tmp_path / "normalized" / "samples.jsonl").read_text().splitlines()
    ]
    assert {r["score"]["details"]["mode"] for r in records} == {"normalized"}
    assert set(_scores(tmp_path / "normalized").values()) == {1.0}


def test_rescoring_needs_a_run_directory(tmp_path: Path) -> None:
    done = _rescore(tmp_path / "nothing", tmp_path / "out")
    assert done.returncode == 2 and "not a run directory" in done.stderr


def test_runs_scored_by_checks_in_the_sandbox_are_refused(
    closed_form_reference_run: Path, tmp_path: Path
) -> None:
    """Workflow check scripts and interactive answers run in the sandbox after the agent; the run keeps
    only files, so rescoring them would score every such sample 0."""
    for suite in ("workflow", "interactive"):
        run = shutil.copytree(closed_form_reference_run, tmp_path / suite)
        spec = json.loads((run / "run.json").read_text())
        spec["suite_spec"] = {"spec": suite, "options": {}}
        (run / "run.json").write_text(json.dumps(spec))
        done = _rescore(run, tmp_path / f"{suite}-again")
        assert done.returncode == 2, done.stderr
        assert f"{suite} answers are scored by checks run in the sandbox" in done.stderr
        assert "Traceback" not in done.stderr and not (tmp_path / f"{suite}-again").exists()


def test_a_hand_edited_suite_spec_is_a_one_line_error(
    closed_form_reference_run: Path, tmp_path: Path
) -> None:
    run = shutil.copytree(closed_form_reference_run, tmp_path / "run")
    spec = json.loads((run / "run.json").read_text())
    for suite_spec, field in (({"spec": 5}, "suite_spec.spec"), ({"spec": "closed-form", "options": [1]},
                              "suite_spec.options"), ({"spec": "closed-form", "options": {"labels": 5}}, "suite_spec.options")):  # fmt: skip
        (run / "run.json").write_text(json.dumps({**spec, "suite_spec": suite_spec}))
        done = _rescore(run, tmp_path / "again")
        assert done.returncode == 2 and f"run.json: field '{field}' must" in done.stderr, done.stderr


def test_a_suite_loaded_with_options_is_loaded_again_with_the_same_ones(tmp_path: Path) -> None:
    """run.json keeps paths as strings and flags as booleans, and rescore hands them back unchanged: a
    DABench suite named with --labels and --tables elsewhere is rescored from those files."""
    from daharness.suites import load_suite

    fixture = Path(__file__).parent / "fixtures" / "runnable"
    questions = shutil.copy(fixture / "questions.jsonl", tmp_path / "q.jsonl")  # no labels file beside it
    shutil.copytree(fixture / "solutions", tmp_path / "solutions")  # a link out of the folder is refused
    options = {"labels": fixture / "labels.jsonl", "tables": fixture / "tables"}
    spec = load_suite(f"dabench:{questions}", **options).reload_spec()
    assert spec["options"] == {"labels": str(fixture / "labels.jsonl"), "tables": str(fixture / "tables")}
    assert load_suite("workflow", instruction="verbose", rag=True).reload_spec()["options"] == {
        "instruction": "verbose",
        "rag": True,
    }
    run = tmp_path / "run"
    command = [sys.executable, "-m", "daharness", "run", "--suite", f"dabench:{questions}", "--agent", "reference",
               "--labels", str(options["labels"]), "--tables", str(options["tables"]), "--ids", "1,2", "--out", str(run)]  # fmt: skip
    assert subprocess.run(command, capture_output=True, text=True).returncode == 0
    done = _rescore(run, tmp_path / "again")
    assert done.returncode == 0, done.stderr
    assert _scores(tmp_path / "again") == _scores(run) == {"1": 1.0, "2": 1.0}
