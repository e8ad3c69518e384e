"""One Task schema holds all four families; `daharness schema` prints it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from daharness.core.task import (
    Conjunction,
    DialogueTurn,
    Gold,
    GoldFile,
    ReferenceSolution,
    ScorerSpec,
    SetupStep,
    Task,
    TaskMetadata,
    WorkspaceFile,
)


def _tasks(tmp: Path) -> list[Task]:
    data = tmp / "sales.csv"
    return [
        Task(id="w1", suite="s", family="workspace", instructions=["Clean the table into result.csv"],
             files=[WorkspaceFile(path="data/sales.csv", source=data)],
             gold=Gold(files=[GoldFile(name="result.csv", source=tmp / "gold.csv")]),
             scorers=[ScorerSpec(name="table", options={"ignore_order": True}), ScorerSpec(name="text")],
             conjunction=Conjunction.and_, metadata=TaskMetadata(category="data wrangling", level="hard"),
             reference=ReferenceSolution(language="bash", code="cp data/sales.csv result.csv")),
        Task(id="i1", suite="s", family="interactive", instructions=["Now plot it", "Which is larger? A or B"],
             dialogue=[DialogueTurn(role="user", content="Load the data"),
                       DialogueTurn(role="assistant", content="Done", code="df = pd.read_csv('x.csv')")],
             gold=Gold(choice="B"), scorers=[ScorerSpec(name="choice")], metadata=TaskMetadata(tags=["private"])),
        Task(id="f1", suite="s", family="workflow", instructions=["Run the dbt models"],
             setup=[SetupStep(kind="command", args={"command": "dbt deps"})],
             scorers=[ScorerSpec(name="duckdb_table"), ScorerSpec(name="file_exists")], conjunction=Conjunction.or_),
    ]  # fmt: skip


def test_every_family_round_trips_through_json(tmp_path: Path) -> None:
    for task in _tasks(tmp_path):
        again = Task.model_validate_json(task.model_dump_json())
        assert again == task
    assert _tasks(tmp_path)[0].conjunction.value == "and"


def test_unknown_fields_and_empty_instructions_are_rejected() -> None:
    with pytest.raises(ValidationError, match="instructions"):
        Task(id="x", suite="s", family="closed-form", instructions=[])
    with pytest.raises(ValidationError, match="colour"):
        Task.model_validate(
            {"id": "x", "suite": "s", "family": "closed-form", "instructions": ["q"], "colour": 1}
        )
    with pytest.raises(ValidationError, match="family"):
        Task.model_validate({"id": "x", "suite": "s", "family": "Poetry Family!", "instructions": ["q"]})


def test_schema_command_prints_the_task_schema() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "schema"], capture_output=True, text=True, check=True
    )
    schema = json.loads(done.stdout)
    assert schema["title"] == "Task"
    assert {
        "id",
        "family",
        "instructions",
        "gold",
        "scorers",
        "conjunction",
        "dialogue",
        "setup",
        "reference",
    } <= set(schema["properties"])
    assert schema["properties"]["family"]["pattern"] == "^[a-z][a-z0-9_-]*$"
    assert schema["$defs"]["Conjunction"]["enum"] == ["avg", "and", "or", "max", "min", "all_mean"]
