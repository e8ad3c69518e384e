"""The workflow family in real sandboxes: the home folder, the stand-in commands, setup and check scripts,
validation of a task, and the report's figures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import cli

from daharness.agents.reference import ReferenceAgent
from daharness.core.record import SampleRecord
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score
from daharness.core.task import ReferenceSolution, Task
from daharness.families.workflow.apps import app_of
from daharness.families.workflow.figures import figure_tables, workflow_figures
from daharness.families.workflow.validate import validate_workflow_task
from daharness.runs.pipeline import SandboxSettings, solve_and_collect, started
from daharness.scoring import score_submission
from daharness.suites import load_suite

WORKFLOW = {task.id: task for task in load_suite("workflow").tasks}


def _solve(task: Task) -> Score:
    submission, snapshot = solve_and_collect(task, ReferenceAgent(), SandboxSettings())
    try:
        return score_submission(task, submission, snapshot, ScoringSettings())
    finally:
        import shutil

        shutil.rmtree(snapshot.root.parent, ignore_errors=True)


def test_the_sandbox_is_the_home_with_stand_ins_for_desktop_commands() -> None:
    task = WORKFLOW["nb-register-kernel"]
    with started(task, SandboxSettings()) as box:
        seen = box.bash(
            "echo $HOME; pwd; conda activate dbt && echo activated; gnome-terminal --maximize && code . && echo gui; "
            "echo password | sudo -S id -u; conda install x || echo refused; which dbt jupyter | wc -l"
        )
    lines = seen.stdout.split()
    assert lines[:4] == ["/home/user", "/home/user", "activated", "gui"]
    assert lines[4].isdigit() and lines[5] == "refused" and lines[6] == "2"


@pytest.mark.parametrize(
    "task_id", ["dbt-longley-fix-model", "xlsx-msft-yearly-chart", "nb-wine-decision-tree"]
)
def test_a_task_of_each_application_validates(task_id: str) -> None:
    result = validate_workflow_task(WORKFLOW[task_id], scoring=ScoringSettings())
    assert result.problems == []
    assert result.initial == 0.0 and result.setup_only == 0.0 and result.reference == 1.0
    assert result.gold == (None if task_id.startswith("dbt") else 1.0)


TRAILING_COMMA = """#!/bin/bash
mkdir -p ~/.dbt ~/projects/economy/models ~/projects/economy/seeds
printf 'economy:\\n  target: dev\\n  outputs:\\n    dev: {type: duckdb, path: economy.duckdb}\\n' > ~/.dbt/profiles.yml
printf "name: economy\\nversion: '1.0.0'\\nconfig-version: 2\\nprofile: economy\\n" > ~/projects/economy/dbt_project.yml
printf 'year,unemp\\n1947,235.6\\n1948,232.5\\n' > ~/projects/economy/seeds/longley.csv
printf "select year, unemp,\\nfrom {{ ref('longley') }}\\n" > ~/projects/economy/models/rates.sql
"""
DBT_RUN_CHECK = """#!/bin/bash
cd ~/projects/economy
dbt run 2>&1 | grep -q 'Completed successfully' && echo 'dbt run succeed' || echo 'dbt run failed'
"""
CELL = {
    "cell_type": "code",
    "id": "a1",
    "execution_count": None,
    "metadata": {},
    "outputs": [],
    "source": "6 * 7",
}
NOTEBOOK = {
    "cells": [CELL],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _spider2v_task(folder: Path, config: list[dict], evaluator: dict, files: dict[str, str]) -> None:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    task = {"id": folder.name, "instruction": "fix it", "config": config, "evaluator": evaluator}
    (folder / f"{folder.name}.json").write_text(json.dumps(task))


def test_validate_fails_a_task_that_its_tools_solve_on_the_files_as_the_setup_left_them(
    tmp_path: Path,
) -> None:
    """The class of the old dbt-longley-fix-model: a planted 'bug' that DuckDB accepts (dbt seed and dbt
    run solve it), and a notebook task whose notebook only needs executing as it is."""
    init = {"type": "script_and_execute", "parameters": {"src": "init.sh", "dest": "/home/user/init.sh"}}
    _spider2v_task(
        tmp_path / "suite" / "comma", [init],
        {"func": "check_include_exclude", "expected": {"type": "rule", "rules": {"include": ["succeed"], "exclude": ["failed"]}},
         "result": {"type": "vm_script_output", "src": "eval.sh", "dest": "/home/user/eval.sh"}},
        {"init.sh": TRAILING_COMMA, "eval.sh": DBT_RUN_CHECK},
    )  # fmt: skip
    copy = {
        "type": "copyfile_from_host_to_guest",
        "parameters": {"src": "n.ipynb", "dest": "/home/user/Desktop/n.ipynb"},
    }
    _spider2v_task(
        tmp_path / "suite" / "run-all", [copy],
        {"func": "is_jupyter_cell_executed", "result": {"type": "vm_file", "path": "/home/user/Desktop/n.ipynb"},
         "expected": {"type": "rule", "rules": {"expected": []}}},
        {"n.ipynb": json.dumps(NOTEBOOK)},
    )  # fmt: skip
    for task in load_suite(f"spider2v:{tmp_path / 'suite'}").tasks:
        result = validate_workflow_task(task, scoring=ScoringSettings())
        assert result.initial == 0.0 and result.setup_only == 1.0, (task.id, result)
        assert not result.ok and "only running the tools again" in result.problems[0], result.problems


def test_validate_checks_workflow_tasks_by_their_states_because_the_family_says_so(tmp_path: Path) -> None:
    """The command routes by the family's declared `validation`, not by its name: the workflow table
    (untouched state, gold file, reference) and its JSON, not the damaged-outputs table."""
    from daharness.core.registry import families

    assert families.get("workflow").impl.validation == "states"
    assert families.get("workspace").impl.validation == "damage"
    out = tmp_path / "validation.json"
    done = subprocess.run(
        cli("validate", "--suite", "workflow", "--ids", "xlsx-msft-yearly-chart", "--json", str(out)),
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 of 1 supported tasks pass" in done.stdout and "mutations scored below" not in done.stdout
    assert json.loads(out.read_text()) == {
        "xlsx-msft-yearly-chart": {
            "supported": True,
            "reason": "",
            "initial": 0.0,
            "setup_only": 0.0,
            "gold": 1.0,
            "reference": 1.0,
        }
    }


def test_nothing_the_agent_leaves_running_can_touch_the_check(tmp_path: Path) -> None:
    """A background process that would rewrite the check script is stopped before the script is copied in."""
    task = WORKFLOW["nb-register-kernel"]
    cheat = (
        "nohup bash -c 'while true; do [ -f eval.sh ] && echo \"echo analysis python3\" > eval.sh; done' "
        ">/dev/null 2>&1 &\necho started"
    )
    score = _solve(task.model_copy(update={"reference": ReferenceSolution(language="bash", code=cheat)}))
    assert score.value == 0.0 and "missing ['analysis']" in score.explanation
    assert _solve(task).value == 1.0


def test_figures_by_application_category_interface_and_instruction() -> None:
    def record(task_id: str, value: float, tags: list[str], category: str) -> SampleRecord:
        return SampleRecord(id=task_id, status="scored", agent="a", family="workflow", score=Score(value=value),
                            tags=tags, category=category, level="easy", started_at="", duration_s=0.0)  # fmt: skip

    figures = workflow_figures([
        record("a", 1.0, ["cli", "abstract", "app:dbt", "app:duckdb"], "data_transformation"),
        record("b", 0.0, ["cli", "verbose", "app:dbt"], "data_transformation"),
        record("c", 0.5, ["cli+gui", "abstract", "app:excel"], "traditional_data_processing"),
    ])  # fmt: skip
    assert figures is not None
    assert figures["success_rate"] == pytest.approx(1 / 3, abs=1e-4) and figures["mean_score"] == 0.5
    assert figures["by_app"]["dbt"] == {"samples": 2, "success_rate": 0.5}
    assert figures["by_app"]["excel"]["success_rate"] == 0.0
    assert figures["by_interface"]["cli"]["samples"] == 2
    assert figures["by_instruction"]["verbose"]["success_rate"] == 0.0
    assert json.dumps(figures)  # report.json material
    drawn = figure_tables(figures)  # what the report draws: the same numbers, typed
    assert [(f.label, f.value) for f in drawn.headline] == [
        ("success rate", figures["success_rate"]), ("mean score", 0.5), ("samples", 3)
    ]  # fmt: skip
    (table,) = drawn.tables
    application = next(section for section in table.sections if section.name == "application")
    assert application.chart == "columns" and [c.label for c in table.columns] == ["samples", "Success rate"]
    assert {row.group: row.values for row in application.rows}["dbt"] == [2, 0.5]


def test_the_builtin_suite_scores_100_percent_with_its_references(tmp_path: Path) -> None:
    from daharness.agents import make_agent
    from daharness.report.build import build_report
    from daharness.runs.rundir import RunDir
    from daharness.runs.runner import run_suite

    # the desktop tasks (LibreOffice on a screen, a minute each) are solved in test_desktop_workflow.py, the
    # application tasks (their services) in test_apps.py
    files_only = [task_id for task_id, task in WORKFLOW.items() if not task.desktop and not app_of(task)]
    outcome = run_suite(
        load_suite("workflow"), make_agent("reference"), tmp_path / "run", ids=files_only, concurrency=2
    )
    assert outcome.errors == 0
    report = build_report(RunDir.open_for_reading(tmp_path / "run"))
    assert report["counts"]["samples"] == len(files_only) and report["mean_score"] == 1.0
    figures = report["families"]["workflow"]
    assert figures["success_rate"] == 1.0
    assert set(figures["by_app"]) >= {"excel", "dbt", "duckdb", "jupyter"}
    assert set(figures["by_interface"]) == {"cli", "gui", "cli+gui"}
