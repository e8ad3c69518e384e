"""The `workflow` agent against a real OpenAI-compatible server on 127.0.0.1 with scripted replies: it
edits and creates project files, runs dbt, Python and SQL in the task's home, and the run scores them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from daharness.agents.da_actions import ActionSyntaxError, parse_da_action
from daharness.families.workflow.agent import WORKFLOW_GRAMMAR

FIX_MODEL = [
    'Thought: look at the model\nAction: Bash(code="cat ~/projects/economy/models/employment_ratio.sql")',
    'Thought: the seed has no column unemployed\nAction: EditFile(file_path="projects/economy/models/employment_ratio.sql", '
    'old="""100.0 * unemployed /""", new="""100.0 * unemp /""")',
    'Thought: build\nAction: Bash(code="cd ~/projects/economy && dbt seed && dbt run")',
    'Thought: check\nAction: SQL(file_path="projects/economy/economy.duckdb", command="select count(*) as n from employment_ratio", output="direct")',
    'Thought: done\nAction: Terminate(output="fixed")',
]
NEW_MODEL = [
    'Thought: write the model\nAction: CreateFile(file_path="projects/energy/models/renewable_share.sql"):\n```sql\n'
    "{{ config(materialized='table') }}\n\nselect\n    year,\n    sum(net_generation) as total,\n"
    "    round(100.0 * sum(case when source = 'Renewables' then net_generation else 0 end) / sum(net_generation), 1) as renewable_pct\n"
    "from {{ ref('iowa_generation') }}\ngroup by year\norder by year\n```",
    'Thought: build\nAction: Bash(code="cd ~/projects/energy && dbt seed && dbt run")',
    'Thought: done\nAction: Terminate(output="done")',
]
HIGHLIGHT = [
    'Thought: edit the workbook\nAction: Python(file_path="highlight.py"):\n```python\n'
    "from openpyxl import load_workbook\nfrom openpyxl.styles import Font\n\nbook = load_workbook('Wine.xlsx')\n"
    "sheet = book['Wines']\nbest = max(range(2, sheet.max_row + 1), key=lambda row: sheet.cell(row, 2).value)\n"
    "sheet.cell(best, 2).font = Font(color='FFFF0000', bold=True)\nbook.save('Wine.xlsx')\nprint(best)\n```",
    'Thought: done\nAction: Terminate(output="Wine.xlsx")',
]
SCRIPTS = {"~/projects/economy": FIX_MODEL, "~/projects/energy": NEW_MODEL, "Wine.xlsx": HIGHLIGHT}


def responder(request: dict) -> str:
    system = request["messages"][0]["content"]
    script = next(replies for key, replies in SCRIPTS.items() if key in system)
    turn = sum(message["role"] == "assistant" for message in request["messages"])
    return script[min(turn, len(script) - 1)]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        fake.responder = responder
        yield fake


def test_workflow_agent_completes_tasks_of_the_builtin_suite(server: FakeOpenAI, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", "workflow", "--agent", "workflow",
         "--ids", "dbt-longley-fix-model,dbt-iowa-new-model,xlsx-wine-highlight-alcohol", "--model", "test-model",
         "--base-url", server.base_url, "--out", str(out), "--cache", "off"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    scores = {sample["id"]: sample["value"] for sample in report["samples"]}
    assert scores == {
        "dbt-longley-fix-model": 1.0,
        "dbt-iowa-new-model": 1.0,
        "xlsx-wine-highlight-alcohol": 1.0,
    }
    figures = report["families"]["workflow"]
    assert figures["success_rate"] == 1.0 and set(figures["by_app"]) >= {"dbt", "excel", "duckdb"}
    steps = json.loads((out / "trajectories" / "dbt-longley-fix-model.json").read_text())["steps"]
    actions = [step for step in steps if step["type"] == "action"]
    assert [a["kind"] for a in actions] == ["bash", "edit_file", "bash", "sql"]
    assert "Edited projects/economy/models/employment_ratio.sql" in actions[1]["observation"]["stdout"]
    assert "16" in actions[3]["observation"]["stdout"]  # the 16 years of the Longley data
    assert any(step["type"] == "note" and "dbt run succeed" in step["data"]["stdout"] for step in steps)
    system = server.requests[0]["messages"][0]["content"]
    assert "/home/user" in system and "CreateFile" in system and "EditFile" in system


def test_a_wrong_edit_is_reported_to_the_agent_and_scores_zero(server: FakeOpenAI, tmp_path: Path) -> None:
    SCRIPTS["~/projects/economy"] = [
        'Thought: guess\nAction: EditFile(file_path="projects/economy/models/employment_ratio.sql", old="nothing like this", new="x")',
        'Thought: give up\nAction: Terminate(output="")',
    ]
    try:
        out = tmp_path / "run"
        done = subprocess.run(
            [sys.executable, "-m", "daharness", "run", "--suite", "workflow", "--agent", "workflow",
             "--ids", "dbt-longley-fix-model", "--model", "test-model", "--base-url", server.base_url,
             "--out", str(out), "--cache", "off"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    finally:
        SCRIPTS["~/projects/economy"] = FIX_MODEL
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["samples"][0]["value"] == 0.0
    second_prompt = server.requests[1]["messages"][-1]["content"]
    assert "occurs 0 times" in second_prompt


def test_file_actions_parse() -> None:
    created = parse_da_action(
        'Action: CreateFile(file_path="a/b.yml"):\n```yaml\nx: 1\n```', WORKFLOW_GRAMMAR
    )
    assert created is not None and created.args == {"file_path": "a/b.yml", "content": "x: 1"}
    edited = parse_da_action(
        'Action: EditFile(file_path="m.sql", old="""a,\nb""", new="c")', WORKFLOW_GRAMMAR
    )
    assert edited is not None and edited.args["old"] == "a,\nb" and edited.args["new"] == "c"
    with pytest.raises(ActionSyntaxError, match="CreateFile action needs its content"):
        parse_da_action('Action: CreateFile(file_path="a")', WORKFLOW_GRAMMAR)
