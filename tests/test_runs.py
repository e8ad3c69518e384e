"""Runs: the run directory, resume after Ctrl-C and kill -9, errors apart from wrong answers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import group_processes, sandbox_groups, wait_until

from daharness.agents import make_agent
from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.core.runlog import ScoringSettings
from daharness.runs.pipeline import SandboxSettings
from daharness.runs.rundir import RunDir
from daharness.runs.runner import run_suite
from daharness.suites import builtin_suites, load_suite

RUNNABLE = Path(__file__).parent / "fixtures" / "runnable" / "questions.jsonl"
SUITE = f"dabench:{RUNNABLE}"
STRICT = ScoringSettings(modes={"closed-form": "strict"})


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "daharness", *args]


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]


def _no_sandbox_left(harness_pid: int) -> bool:
    """Every sandbox the harness started is gone (its control group holds no process)."""
    return group_processes(sandbox_groups(harness_pid)) == []


def _wait_for_lines(path: Path, count: int, timeout_s: float = 30) -> None:
    wait_until(
        lambda: path.exists() and path.read_text().count("\n") >= count, timeout_s, f"{count} lines in {path}"
    )


def _wait_for_sample_3_sandbox(harness_pid: int) -> None:
    """Wait until the harness runs the (slow) third sample's sandbox, when control groups show it."""
    if sandbox_groups(harness_pid) or os.getuid() == 0:
        wait_until(
            lambda: group_processes(sandbox_groups(harness_pid)) != [], what="the third sample's sandbox"
        )


def test_run_directory_layout_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(out)),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    config = json.loads((out / "run.json").read_text())
    assert config["agent"] == {"name": "reference"}
    assert config["scoring"] == {"modes": {"closed-form": "normalized", "workspace": "corrected"}}
    assert config["format_version"] == 3 and config["suite_spec"]["spec"] == SUITE
    assert config["packages"]["pandas"]
    records = {r["id"]: r for r in _records(out)}
    assert set(records) == {"1", "2", "3", "4", "5"}
    assert records["4"]["status"] == "scored" and records["4"]["score"]["value"] == 1.0
    # a crashed reference solution is an error of the harness, not a wrong answer
    assert records["5"]["status"] == "error"
    assert "RuntimeError: reference solution is broken" in records["5"]["error"]
    assert (out / "artifacts" / "3" / "note.txt").read_text() == "done"
    trajectory = json.loads((out / "trajectories" / "1.json").read_text())
    assert trajectory["steps"][0]["observation"]["stdout"].strip() == "@mean_x[2.00]"
    report = json.loads((out / "report.json").read_text())
    assert report["counts"] == {
        "samples": 5,
        "scored": 4,
        "excluded": 0,
        "correct": 4,
        "wrong": 0,
        "errors": 1,
        "agent_failures": 0,
        "suspicious": 0,
    }
    assert report["families"]["closed-form"]["main_results"]["Accuracy by Question"] == 1.0
    assert report["families"]["closed-form"]["by_level"] == {"easy": 1.0, "medium": 1.0, "hard": 1.0}
    assert report["errors"][0]["id"] == "5"
    html = (out / "report.html").read_text()
    assert (
        html.count("<svg") == 2 and "Accuracy by concept" in html and "reference solution is broken" in html
    )
    assert "1 errors" in done.stdout
    # the error is shown beside the score, with the score it would leave if it counted as 0
    assert report["mean_score"] == 1.0 and report["mean_score_errors_as_zero"] == 0.8
    assert "1 infrastructure errors left out (counted as 0: 80.00%)" in done.stdout


def test_rerun_skips_finished_samples_and_retries_errors(tmp_path: Path) -> None:
    out = tmp_path / "run"
    suite, agent = load_suite(SUITE), make_agent("reference")
    first = run_suite(suite, agent, out, ids=["1", "5"])
    assert (first.ran, first.errors) == (2, 1)
    second = run_suite(suite, agent, out, ids=["1", "2", "5"])
    assert (second.skipped, second.ran) == (1, 2)
    records = _records(out)
    assert [(r["id"], r["attempt"]) for r in records] == [("1", 1), ("5", 1), ("2", 1), ("5", 2)]
    assert Counter(r["id"] for r in records if r["status"] == "scored") == {"1": 1, "2": 1}


def test_limit_ids_and_concurrency(tmp_path: Path) -> None:
    suite, agent = load_suite(SUITE), make_agent("reference")
    outcome = run_suite(suite, agent, tmp_path / "a", limit=2)
    assert [r["id"] for r in _records(tmp_path / "a")] == ["1", "2"] and outcome.selected == 2
    run_suite(suite, agent, tmp_path / "b", concurrency=3)
    assert sorted(r["id"] for r in _records(tmp_path / "b")) == ["1", "2", "3", "4", "5"]
    with pytest.raises(UserError, match="no task with id 42"):
        run_suite(suite, agent, tmp_path / "c", ids=["42"])
    with pytest.raises(UserError, match="--ids: no task id given"):  # `--ids ,` never means all tasks
        run_suite(suite, agent, tmp_path / "d", ids=[])


def test_a_folder_holding_another_run_is_refused(tmp_path: Path) -> None:
    suite, agent = load_suite(SUITE), make_agent("reference")
    run_suite(suite, agent, tmp_path / "r", ids=["1"])
    with pytest.raises(UserError, match="holds a different run"):
        run_suite(suite, agent, tmp_path / "r", ids=["1"], scoring=STRICT)


def test_a_resume_under_other_sandbox_limits_is_refused_and_the_same_command_starts_a_new_run(
    tmp_path: Path,
) -> None:
    """Samples resumed with more memory or a longer timeout would not be scored under the conditions
    run.json records; without --out such a command starts its own run instead of joining the old one."""
    suite, agent = load_suite(SUITE), make_agent("reference")
    run_suite(suite, agent, tmp_path / "r", ids=["1", "5"])  # 5 is an error: the run is unfinished
    longer = SandboxSettings(limits=Limits(step_timeout_s=300.0))
    with pytest.raises(UserError, match=r"sandbox limit step_timeout_s = 120\.0, now 300\.0"):
        run_suite(suite, agent, tmp_path / "r", ids=["1", "5"], sandbox=longer)
    assert [r["id"] for r in _records(tmp_path / "r")] == ["1", "5"]  # nothing was added to it

    command = _cli("run", "--suite", SUITE, "--agent", "reference", "--ids", "1,5")
    for extra in ([], ["--step-timeout", "300"], ["--step-timeout", "300"]):
        done = subprocess.run([*command, *extra], cwd=tmp_path, capture_output=True, text=True)
        assert "Traceback" not in done.stderr and " runs/" in done.stderr, done.stderr
    runs = sorted(path for path in (tmp_path / "runs").iterdir() if path.is_dir())
    attempts = [[r["attempt"] for r in _records(path) if r["id"] == "5"] for path in runs]
    assert attempts == [[1], [1, 2]]  # the third command resumed the second run, not the first


def test_a_run_is_not_resumed_across_versions_of_its_suite(tmp_path: Path) -> None:
    """A suite raises its version when its data or scoring changes: samples scored under the old version
    are not mixed with new ones. A run made before run.json recorded versions is resumed as before."""
    folder = shutil.copytree(builtin_suites()["closed-form"], tmp_path / "suite")
    agent = make_agent("reference")
    run_suite(load_suite(f"dabench:{folder}"), agent, tmp_path / "r", ids=["0"])
    run_json = tmp_path / "r" / "run.json"
    assert json.loads(run_json.read_text())["suite"]["version"] == 1
    manifest = json.loads((folder / "suite.json").read_text())
    (folder / "suite.json").write_text(json.dumps({**manifest, "version": 2}))
    # the field that differs, not two whole dictionaries (issue 22, item 9)
    with pytest.raises(UserError, match=r"holds a different run \(suite\.version: 1, now 2\);"):
        run_suite(load_suite(f"dabench:{folder}"), agent, tmp_path / "r", ids=["0", "2"])
    assert [r["id"] for r in _records(tmp_path / "r")] == ["0"]

    older = json.loads(run_json.read_text())
    del older["suite"]["version"]
    run_json.write_text(json.dumps(older))
    run_suite(load_suite(f"dabench:{folder}"), agent, tmp_path / "r", ids=["0", "2"])
    assert [r["id"] for r in _records(tmp_path / "r")] == ["0", "2"]


def test_a_suite_version_that_is_no_whole_number_is_refused(tmp_path: Path) -> None:
    folder = shutil.copytree(builtin_suites()["closed-form"], tmp_path / "suite")
    manifest = json.loads((folder / "suite.json").read_text())
    (folder / "suite.json").write_text(json.dumps({**manifest, "version": "2.0"}))
    with pytest.raises(
        UserError, match=r"suite.json: field 'version' must be a whole number from 1, got '2.0'"
    ):
        load_suite(f"dabench:{folder}")


def test_an_out_path_that_cannot_hold_a_run_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    done = subprocess.run(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(tmp_path / "a-file")),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{tmp_path / 'a-file'}: not a folder" in done.stderr
    suite, agent = load_suite(SUITE), make_agent("reference")
    with pytest.raises(UserError, match=r"a-file/run: cannot write the run directory \(Not a directory\)"):
        run_suite(suite, agent, tmp_path / "a-file" / "run", ids=["1"])


def test_samples_file_with_bad_bytes_or_cut_inside_a_character(tmp_path: Path) -> None:
    suite, agent = load_suite(SUITE), make_agent("reference")
    run_suite(suite, agent, tmp_path / "r", ids=["1"])
    samples = tmp_path / "r" / "samples.jsonl"
    whole = samples.read_bytes()
    samples.write_bytes(whole + '{"id": "caf\u00e9'.encode()[:-1])  # kill -9 inside the two bytes of "é"
    assert [record.id for record in RunDir.open_for_reading(tmp_path / "r").records()] == ["1"]
    samples.write_bytes(whole + b'{"id": "\xff"}\n')
    with pytest.raises(
        UserError, match=r"samples.jsonl:2: not a sample record \(Invalid JSON: invalid unicode"
    ):
        RunDir.open_for_reading(tmp_path / "r").records()
    samples.unlink()
    samples.mkdir()
    with pytest.raises(UserError, match=r"samples.jsonl: cannot read \(Is a directory\)"):
        run_suite(suite, agent, tmp_path / "r", ids=["1"])
    trajectory = tmp_path / "r" / "trajectories" / "1.json"
    trajectory.write_bytes(b"\xff")
    with pytest.raises(UserError, match=r"trajectories/1\.json:1: not UTF-8 text"):
        RunDir.open_for_reading(tmp_path / "r").read_trajectory("1")


def test_a_run_json_from_a_newer_daharness_or_with_bad_scoring_is_refused(tmp_path: Path) -> None:
    suite, agent = load_suite(SUITE), make_agent("reference")
    run_suite(suite, agent, tmp_path / "r", ids=["1"])
    run_json = tmp_path / "r" / "run.json"
    run_json.write_text(run_json.read_text().replace('"format_version": 3', '"format_version": 4'))
    done = subprocess.run(_cli("report", str(tmp_path / "r")), capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "run.json: field 'format_version': written by a newer daharness (format 4)" in done.stderr
    for scoring in ("5", '"strict"'):  # not an object: one line naming the field, never a traceback
        spec = json.loads(run_json.read_text()) | {"format_version": 3, "scoring": json.loads(scoring)}
        run_json.write_text(json.dumps(spec))
        with pytest.raises(
            UserError, match=r"run\.json: field 'scoring': Input should be a valid dictionary"
        ):
            RunDir.open_for_reading(tmp_path / "r").spec()


def test_kill_9_mid_sample_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(out)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for_lines(out / "samples.jsonl", 2)  # samples 1 and 2 done, the slow sample 3 in flight
    _wait_for_sample_3_sandbox(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    wait_until(lambda: _no_sandbox_left(process.pid), what="the sandbox to die with its harness")
    # also simulate a record cut off in the middle of its write
    with (out / "samples.jsonl").open("a") as handle:
        handle.write('{"id":"3","status":"sco')
    assert [r.id for r in RunDir(out).records()] == ["1", "2"]
    done = subprocess.run(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(out)),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "resuming" in done.stderr and "2 of 5 samples already done" in done.stderr
    records = _records(out)
    assert Counter(r["id"] for r in records) == {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}
    assert {r["id"]: r["status"] for r in records}["3"] == "scored"


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_lines(out / "samples.jsonl", 2)
    _wait_for_sample_3_sandbox(process.pid)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert _no_sandbox_left(process.pid)
    assert [r["id"] for r in _records(out)] == ["1", "2"]  # the sample in flight was not recorded
    done = subprocess.run(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(out)),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    assert Counter(r["id"] for r in _records(out)) == {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}


def test_sigterm_stops_as_ctrl_c_does_and_the_same_command_resumes(tmp_path: Path) -> None:
    """`kill PID` (SIGTERM, as a job scheduler or `timeout` stops a run): exit 143 in a shell (killed by
    the signal), the finished samples kept, no sandbox left, and the same command resumes (issue 43, 9)."""
    out = tmp_path / "run"
    process = subprocess.Popen(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(out)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for_lines(out / "samples.jsonl", 2)
    _wait_for_sample_3_sandbox(process.pid)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == -signal.SIGTERM  # a shell reports 128 + 15 = 143
    wait_until(lambda: _no_sandbox_left(process.pid), what="the sandboxes to end with their harness")
    assert [r["id"] for r in _records(out)] == ["1", "2"]  # the sample in flight was not recorded
    done = subprocess.run(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(out)),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "2 of 5 samples already done" in done.stderr
    assert Counter(r["id"] for r in _records(out)) == {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}


def test_report_command_rebuilds_the_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_suite(load_suite(SUITE), make_agent("reference"), out, ids=["1", "2"])
    done = subprocess.run(_cli("report", str(out)), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "report.json").read_text())["counts"]["correct"] == 2
    missing = subprocess.run(_cli("report", str(tmp_path / "nothing")), capture_output=True, text=True)
    assert missing.returncode == 2 and "not a run directory" in missing.stderr


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX only")
def test_error_records_show_in_terminal_output(tmp_path: Path) -> None:
    done = subprocess.run(
        _cli("run", "--suite", SUITE, "--agent", "reference", "--out", str(tmp_path / "r"), "--ids", "5"),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3  # its only sample is an infrastructure error (issue 22)
    assert (
        "error 5: reference solution of task 5 failed: RuntimeError: reference solution is broken"
        in done.stdout
    )


def test_same_command_without_out_resumes_the_unfinished_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite, agent = load_suite(SUITE), make_agent("reference")
    first = run_suite(suite, agent, None, ids=["1", "5"])  # 5 errors, so the run stays unfinished
    assert first.run_dir.parent == Path("runs") and first.run_dir.name.endswith(
        "-dabench_questions-reference"
    )
    second = run_suite(suite, agent, None, ids=["1", "5"])
    assert second.run_dir == first.run_dir and second.skipped == 1
    assert [r["attempt"] for r in _records(first.run_dir) if r["id"] == "5"] == [1, 2]
    # a finished selection, or another scoring mode, starts a new run
    third = run_suite(suite, agent, None, ids=["1"])
    assert third.run_dir != first.run_dir and third.ran == 1
    fourth = run_suite(suite, agent, None, ids=["1", "5"], scoring=STRICT)
    assert fourth.run_dir not in (first.run_dir, third.run_dir)


def test_a_sandbox_started_ahead_gives_its_sample_the_whole_time_limit(tmp_path: Path) -> None:
    """At -j 1 the second sample's sandbox starts while the first sample runs (4.5 s here); with a 6 s
    limit its 3 s of work would time out if its clock had started with the sandbox, not with the sample."""
    from dataclasses import replace

    from daharness.core.task import ReferenceSolution

    base = load_suite("closed-form")
    tasks = []
    for task, seconds in zip(base.tasks[:2], (4.5, 3.0), strict=True):
        assert task.reference is not None and task.reference.language == "python"
        code = f"import time\ntime.sleep({seconds})\n{task.reference.code}"
        tasks.append(task.model_copy(update={"reference": ReferenceSolution(language="python", code=code)}))
    suite = replace(base, tasks=tasks)
    settings = SandboxSettings(limits=Limits(sample_timeout_s=6.0))
    outcome = run_suite(suite, make_agent("reference"), tmp_path / "run", sandbox=settings)
    records = {record["id"]: record for record in _records(tmp_path / "run")}
    assert outcome.errors == 0 and len(records) == 2
    assert {r["status"] for r in records.values()} == {"scored"}
    assert [records[task.id]["score"]["value"] for task in tasks] == [1.0, 1.0], records


def test_a_sandbox_that_cannot_be_made_ahead_is_the_error_of_its_sample_alone(tmp_path: Path) -> None:
    """The next sample's sandbox is made while the first runs: a file of its task that is gone makes
    that sample an error record, as without the sandbox started ahead, and the run goes on."""
    from dataclasses import replace

    from daharness.core.task import WorkspaceFile

    base = load_suite("closed-form")
    first, second, third = base.tasks[:3]
    gone = WorkspaceFile(path="data.csv", source=tmp_path / "deleted.csv")
    broken = second.model_copy(update={"files": [*second.files, gone]})
    outcome = run_suite(
        replace(base, tasks=[first, broken, third]), make_agent("reference"), tmp_path / "run"
    )
    records = {record["id"]: record for record in _records(tmp_path / "run")}
    assert outcome.ran == 3 and outcome.errors == 1
    assert records[first.id]["status"] == records[third.id]["status"] == "scored"
    assert records[broken.id]["status"] == "error"
    assert "FileNotFoundError" in records[broken.id]["error"] and "deleted.csv" in records[broken.id]["error"]


def test_a_sandbox_started_ahead_for_a_sample_that_does_not_come_next_is_closed() -> None:
    """The run starts its first selected sample's sandbox before it reads which samples are done; in a
    resumed run another sample may come first, and preparing that one closes the sandbox of the first."""
    from daharness.runs.executors import ExecutorSettings, SampleWork, make_executor

    first, second = load_suite("closed-form").tasks[:2]
    work = SampleWork(make_agent("reference"), SandboxSettings(), ScoringSettings())
    samples = make_executor(ExecutorSettings(), work, 1)
    try:
        samples.prepare(first)
        started_for_first = samples._ahead  # type: ignore[attr-defined]
        assert started_for_first is not None and started_for_first[0] == first.id
        samples.prepare(first)  # the same sample again: the same sandbox
        assert samples._ahead is started_for_first  # type: ignore[attr-defined]
        samples.prepare(second)
        assert samples._ahead[0] == second.id  # type: ignore[attr-defined]
        assert not started_for_first[1].workspace.root.exists()  # closed: its files are gone
    finally:
        samples.close()
