"""`daharness schema`: the JSON schema of a task, a record, run.json or a trajectory file."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from daharness.cli.app import app
from daharness.cli.options import DebugOption


class SchemaName(StrEnum):
    task = "task"
    record = "record"
    run = "run"
    trajectory = "trajectory"


@app.command()
def schema(
    name: Annotated[
        SchemaName, typer.Argument(help="task (default), record, run or trajectory.")
    ] = SchemaName.task,
    debug: DebugOption = False,
) -> None:
    """Print a JSON schema: the Task, a samples.jsonl record, run.json, or a trajectory file."""
    import json

    from daharness.core import RunSpec, SampleRecord, Task, TrajectoryFile

    model = {"task": Task, "record": SampleRecord, "run": RunSpec, "trajectory": TrajectoryFile}[name.value]
    sys.stdout.write(json.dumps(model.model_json_schema(), indent=2) + "\n")
