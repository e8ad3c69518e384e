"""Agents' typed options (`@agent(name, options=Model)`): checked before the first sample with one line
naming the option and the agent, made into `run`'s flags and `-A KEY=VALUE`, shown by `daharness agents
NAME`, recorded in run.json as the model dumps them; runs recorded before the options were resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli

from daharness.agents import AgentSettings, make_agent
from daharness.core.errors import UserError
from daharness.core.runlog import RunSpec
from daharness.models import ModelSettings


def _error(*args: str) -> str:
    done = subprocess.run(cli(*args), capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr.strip()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "reference", "--observation", "som"],
         "error: --observation: not an option of agent 'reference' (its options: none)"),
        (["--agent", "react", "--memory-window", "5"],
         "error: --memory-window: not an option of agent 'react' (its options: --dabench-compat, --reformat-model)"),
        (["--agent", "da-agent", "-A", "memory_window=0"],
         "error: -A memory_window: must be at least 1 (agent 'da-agent')"),
        (["--agent", "desktop", "--action-space", "mouse"],
         "error: --action-space: choose 'pyautogui', 'computer_13' or 'json' (agent 'desktop')"),
        (["--agent", "desktop", "--history", "2", "-A", "history=3"],
         "error: -A history: given twice (also as --history)"),
        (["--agent", "replay"], "error: agent 'replay' needs --replay-from"),
        (["--agent", "base", "-A", "clarify"], "error: -A 'clarify': give KEY=VALUE, e.g. -A memory_window=10"),
    ],
)  # fmt: skip
def test_an_option_the_agent_lacks_or_refuses_is_one_line_before_any_sample(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "run"
    assert _error("run", "--suite", "closed-form", "--ids", "0", "--out", str(out), *args) == message
    assert not out.exists()


def test_agents_name_shows_each_option_with_type_default_and_help() -> None:
    done = subprocess.run(
        cli("agents", "desktop"), capture_output=True, text=True, env={**os.environ, "COLUMNS": "250"}
    )
    assert done.returncode == 0, done.stderr
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert lines[0].startswith("desktop: Spider2-V's baseline")
    assert "--history <int> 3 Earlier observations (and replies) kept in the prompt." in lines
    assert any(
        line.startswith("--action-space <pyautogui|computer_13|json> pyautogui How it acts") for line in lines
    )
    assert _error("agents", "nobody").startswith("error: unknown agent 'nobody'; available: air, base")


def test_the_python_api_checks_the_options_and_the_agent_keeps_them() -> None:
    endpoint = "http://127.0.0.1:9/v1"
    settings = AgentSettings(model=ModelSettings(model="m", base_url=endpoint), base_url=endpoint)
    agent = make_agent("desktop", settings, {"observation": "som", "history": "0"})
    described = agent.describe()
    assert (described["observation"], described["action_space"], described["history"]) == (
        "som",
        "pyautogui",
        0,
    )
    with pytest.raises(UserError, match=r"^option 'memory_window': not an option of agent 'desktop'"):
        make_agent("desktop", settings, {"memory_window": 3})
    react = make_agent("react", settings, {"dabench_compat": True, "reformat_model": "formatter"})
    assert react.describe()["reformat_model"] == "formatter"
    assert react.reformat_model.settings.base_url == endpoint  # type: ignore[attr-defined]  # as --model's


def _spec(agent: dict[str, object]) -> RunSpec:
    return RunSpec(suite={"name": "interactive", "tasks": 2}, agent=agent)


def test_a_run_recorded_before_agents_declared_options_resumes_and_recorded_settings_still_count() -> None:
    old = {"name": "base", "model": "m", "clarify": False, "simulator": {"kind": "scripted"}}
    now = {**old, "simulator_model": None}  # today's agent records every option of its model
    assert _spec(old).conflicts_with(_spec(now)) is None
    assert _spec(old).conflicts_with(_spec({**now, "clarify": True})) == "agent.clarify: False, now True"
    # two runs of today compare every option
    assert _spec(now).conflicts_with(_spec({**now, "simulator_model": "user"})) == (
        "agent.simulator_model: not set, now 'user'"
    )
    replay = {"name": "replay", "source": "/runs/a"}
    moved = {**replay, "source": "/runs/b", "replay_from": "/runs/b"}
    assert _spec(replay).conflicts_with(_spec(moved)) == "agent.source: '/runs/a', now '/runs/b'"


def test_run_json_records_the_options_and_a_resume_with_others_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "first"
    command = ["run", "--suite", "closed-form", "--ids", "0", "--out"]
    first = subprocess.run(cli(*command, str(source), "--agent", "reference"), capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    replayed = tmp_path / "replayed"
    again = subprocess.run(
        cli(*command, str(replayed), "--agent", "replay", "-A", f"replay_from={source}"),
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    agent = json.loads((replayed / "run.json").read_text())["agent"]
    assert agent == {"name": "replay", "source": str(source.resolve()), "replay_from": str(source.resolve())}
    other = tmp_path / "other"
    other.mkdir()
    (other / "trajectories").mkdir()
    refused = _error(*command, str(replayed), "--agent", "replay", "--replay-from", str(other))
    assert refused == (
        f"error: {replayed / 'run.json'}: this folder holds a different run (agent.replay_from: "
        f"'{source.resolve()}', now '{other.resolve()}'); resume with the same settings or choose another --out"
    )


def test_every_command_gets_what_families_and_agents_declare_for_a_reference() -> None:
    probe = (
        "import typer\n"
        "from daharness.cli import root_command\n"
        "from daharness.cli.families import install_all\n"
        "install_all()\n"
        "group = root_command()\n"
        "context = typer.Context(group, info_name='daharness')\n"
        "run = group.get_command(context, 'run')\n"
        "wanted = ('--memory-window', '--observation', '--labels', '-A')\n"
        "print(sorted(o for p in run.params for o in p.opts if o in wanted))\n"
        "print(group.get_command(context, 'generate').list_commands(context))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.splitlines() == [
        "['--labels', '--memory-window', '--observation', '-A']",
        "['closed-form', 'interactive']",
    ], done.stderr
