"""docs/extending.md's worked example, installed as a plugin package and run through the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).parents[1] / "docs" / "extending.md"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the example package and the metadata that names its entry point."""
    root = tmp_path_factory.mktemp("plugin")
    text = DOC.read_text()
    package = root / "shout_plugin"
    package.mkdir()
    for name in ("scorer", "agent"):
        block = re.search(rf"`shout_plugin/{name}\.py`:\n\n```python\n(.*?)```", text, re.DOTALL)
        assert block, f"docs/extending.md lost the {name} example"
        (package / f"{name}.py").write_text(block.group(1))
    (package / "__init__.py").write_text("from shout_plugin import agent, scorer  # noqa: F401\n")
    entry = re.search(r'\[project\.entry-points\."daharness\.plugins"\]\n(\w+) = "(\w+)"', text)
    assert entry, "docs/extending.md lost the entry point"
    dist = root / "shout_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[daharness.plugins]\n{entry.group(1)} = {entry.group(2)}\n")
    return root


def _daharness(plugin_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(plugin_path)}
    return subprocess.run([sys.executable, "-m", "daharness", *args], capture_output=True, text=True, env=env)


def _suite(root: Path, options: dict[str, object]) -> Path:
    (root / "tasks" / "hello").mkdir(parents=True)
    (root / "suite.json").write_text(json.dumps({"name": "shout-suite", "format": "workspace"}))
    task = {"id": "hello", "instruction": "hello there", "scorers": [{"name": "shout", "options": options}]}
    (root / "tasks" / "hello" / "task.json").write_text(json.dumps(task))
    return root


def _run_shouter(
    plugin_path: Path, tmp_path: Path, options: dict[str, object], *agent_options: str
) -> subprocess.CompletedProcess[str]:
    suite = f"workspace:{_suite(tmp_path / 'suite', options)}"
    return _daharness(
        plugin_path,
        "run",
        "--suite",
        suite,
        "--agent",
        "shouter",
        "--out",
        str(tmp_path / "r"),
        *agent_options,
    )


def test_the_plugin_agent_is_listed(plugin_path: Path) -> None:
    done = _daharness(plugin_path, "agents")
    assert done.returncode == 0, done.stderr
    assert "shouter: answers with the task's first word in capitals" in done.stdout
    assert "reference:" in done.stdout  # the built-in agents are still there


def test_the_plugin_scorer_and_agent_run_a_suite(plugin_path: Path, tmp_path: Path) -> None:
    done = _run_shouter(plugin_path, tmp_path, {"word": "hello"})
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "r" / "samples.jsonl").read_text())
    assert record["score"]["value"] == 1.0 and record["answer"] == "HELLO!"
    assert record["score"]["checks"] == [{"name": "shouted", "passed": True, "explanation": ""}]


def test_a_wrong_plugin_option_is_a_one_line_error_at_load(plugin_path: Path, tmp_path: Path) -> None:
    done = _run_shouter(plugin_path, tmp_path, {"wrod": "hello"})
    assert done.returncode == 2
    assert "task.json: task hello: scorer 'shout': option 'word': Field required" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "r").exists()


def test_the_plugin_agents_typed_option_is_a_flag_checked_before_the_run(
    plugin_path: Path, tmp_path: Path
) -> None:
    done = _run_shouter(plugin_path, tmp_path / "loud", {"word": "hello"}, "--marks", "3")
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "loud" / "r" / "samples.jsonl").read_text())
    assert record["answer"] == "HELLO!!!" and record["score"]["value"] == 1.0
    assert json.loads((tmp_path / "loud" / "r" / "run.json").read_text())["agent"] == {
        "name": "shouter",
        "marks": 3,
    }
    refused = _run_shouter(plugin_path, tmp_path / "bad", {"word": "hello"}, "-A", "marks=9")
    assert (
        refused.returncode == 2
        and refused.stderr.strip() == "error: -A marks: must be at most 5 (agent 'shouter')"
    )
    assert not (tmp_path / "bad" / "r").exists()
    listed = _daharness(plugin_path, "agents", "shouter")
    assert listed.returncode == 0 and "Exclamation marks after the word." in listed.stdout, listed.stderr
