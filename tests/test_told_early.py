"""What a user would otherwise learn late or wrongly (issue 43, items 7 and 8): `--ids` of a task that
exists but cannot run here says why; `suites list` shows every task and how many run here; an option
that does not apply to the suite is refused (exit 2); conflicts that every sample would meet (a desktop
the sandbox cannot give, a replay of another suite's run) are said once, before the first sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli

SUITE = f"dabench:{Path(__file__).parent / 'fixtures' / 'runnable' / 'questions.jsonl'}"


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("error: ")]


@pytest.fixture
def no_applications(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine where scripts/setup-apps.sh never ran: the workflow suite's application
    tasks cannot run (commands only: the families cache what they find installed)."""
    (tmp_path / "apps").mkdir()
    return {**os.environ, "DAHARNESS_APPS": str(tmp_path / "apps")}


def _workflow(env: dict[str, str]) -> tuple[int, dict[str, str]]:
    """The workflow suite's tasks that run where `env` says, and those that cannot, with why."""
    code = (
        "import json; from daharness.suites import load_suite; s = load_suite('workflow'); "
        "print(json.dumps([len(s.tasks), s.unsupported]))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    runs, unsupported = json.loads(found.stdout)
    return runs, unsupported


def test_ids_of_a_task_that_cannot_run_here_say_why(no_applications: dict[str, str], tmp_path: Path) -> None:
    _, unsupported = _workflow(no_applications)
    task, reason = next((i, why) for i, why in unsupported.items() if "dagster environment" in why)
    done = subprocess.run(
        cli("run", "--suite", "workflow", "--agent", "reference", "--ids", task, "--out", str(tmp_path / "run")),
        capture_output=True, text=True, env=no_applications,
    )  # fmt: skip
    assert done.returncode == 2
    assert _lines(done) == [f"error: --ids: task {task} cannot run here: {reason}"]
    assert "run scripts/setup-apps.sh" in reason and not (tmp_path / "run").exists()


def test_suites_list_shows_every_task_and_how_many_run_here(no_applications: dict[str, str]) -> None:
    runs, unsupported = _workflow(no_applications)
    total, missing = runs + len(unsupported), len(unsupported)
    assert missing  # the application tasks
    listed = subprocess.run(cli("suites", "list"), capture_output=True, text=True, env=no_applications)
    assert listed.returncode == 0, listed.stderr
    line = next(line for line in listed.stdout.splitlines() if line.startswith("workflow: "))
    assert line.startswith(
        f"workflow: {total} tasks, {total - missing} run here ({missing} cannot: "
        "`daharness suites check workflow` says why)"
    )
    assert next(line for line in listed.stdout.splitlines() if line.startswith("closed-form: ")).startswith(
        "closed-form: 48 tasks, all run here"
    )


@pytest.mark.parametrize(
    ("suite", "option", "message"),
    [
        ("workspace", ("--labels", "labels.jsonl"), "--labels: only dabench:PATH suites read it, not suite 'workspace'"),
        ("closed-form", ("--labels", "labels.jsonl"), "--labels: the suite closed-form names its own files in its suite.json; they apply to dabench:QUESTIONS.jsonl"),
        ("closed-form", ("--files", "normal"), "--files: only tapilot:PATH suites read it, not suite 'closed-form'"),
        ("closed-form", ("--rag",), "--rag: only spider2v:PATH suites read it (built-in: workflow), not suite 'closed-form'"),
        ("workspace", ("--cloud-settings", "local"), "--cloud-settings: only spider2v:PATH suites read it (built-in: workflow), not suite 'workspace'"),
        (SUITE, ("--workspace-mode", "compat"), f"--workspace-mode compat: no task of suite {SUITE!r} is scored in workspace modes"),
    ],
)  # fmt: skip
def test_an_option_that_does_not_apply_to_the_suite_is_refused(
    tmp_path: Path, suite: str, option: tuple[str, ...], message: str
) -> None:
    done = subprocess.run(
        cli("run", "--suite", suite, "--agent", "reference", *option, "--limit", "1", "--out", str(tmp_path / "r")),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert len(_lines(done)) == 1 and _lines(done)[0].startswith(f"error: {message}")
    assert not (tmp_path / "r").exists()


def test_a_desktop_the_sandbox_cannot_give_is_refused_before_the_first_sample(tmp_path: Path) -> None:
    done = subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "reference", "--desktop", "--sandbox", "unsafe-local",
            "--ids", "1,2", "--out", str(tmp_path / "run")),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    assert _lines(done) == ["error: --desktop: the unsafe-local sandbox has no desktop: use --sandbox bwrap"]
    assert "UserError" not in done.stderr + done.stdout and not (tmp_path / "run").exists()


def test_a_replay_of_another_suites_run_is_refused_before_the_first_sample(tmp_path: Path) -> None:
    made = subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "reference", "--ids", "1", "--out", str(tmp_path / "source")),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    replayed = subprocess.run(
        cli("run", "--suite", "workspace", "--agent", "replay", "--replay-from", str(tmp_path / "source"),
            "--limit", "2", "--out", str(tmp_path / "replay")),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert replayed.returncode == 2
    source = (tmp_path / "source").resolve()
    assert _lines(replayed) == [
        f"error: --replay-from {source}: that run is of suite 'dabench:questions', not 'workspace'; replay it "
        f"with --suite {SUITE}"
    ]
    assert not (tmp_path / "replay").exists()
    # the same suite replays
    again = subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "replay", "--replay-from", str(tmp_path / "source"), "--ids", "1",
            "--out", str(tmp_path / "replay")),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert [
        json.loads(line)["score"]["value"] for line in (tmp_path / "replay" / "samples.jsonl").open()
    ] == [1.0]


@pytest.mark.parametrize(
    ("run_json", "said"),
    [
        ("[1]", "run.json: expected a JSON object"),
        ("{cut", "run.json:1: not valid JSON"),
        ('{"suite": 3}', "run.json: field 'suite': Input should be a valid dictionary"),
    ],
)
def test_a_replay_source_with_a_broken_run_json_is_one_line(tmp_path: Path, run_json: str, said: str) -> None:
    from daharness.agents.replay import ReplayAgent
    from daharness.core.errors import UserError

    source = tmp_path / "source"
    (source / "trajectories").mkdir(parents=True)
    (source / "run.json").write_text(run_json)
    with pytest.raises(UserError) as raised:
        ReplayAgent(source).check_run(None, [])  # type: ignore[arg-type]  # refused before the suite is read
    message = str(raised.value)
    assert message.startswith(f"--replay-from {source}: {source}/")
    assert said in message and "\n" not in message and "pydantic" not in message
