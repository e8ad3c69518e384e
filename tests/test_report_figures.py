"""Figures as typed data: report.json carries each family's tables, which the terminal, report.html and the
viewer draw without the family's code; a run written under a family's former spelling (`closed_form`,
format 2) still opens, reports and resumes under the one spelling users see (`closed-form`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from rich.console import Console

from daharness.core.errors import UserError
from daharness.core.figures import Column, Figure, FigureTable, Row, Section
from daharness.core.record import SampleRecord
from daharness.core.registry import suite_format
from daharness.core.runlog import RunSpec, ScoringSettings
from daharness.core.score import Score
from daharness.core.suite import Suite
from daharness.core.task import Task
from daharness.report.build import build_report
from daharness.report.figures import DrawnFigures
from daharness.report.html import figures_html, render_html
from daharness.report.terminal import print_report
from daharness.runs.rundir import RunDir
from daharness.suites import load_suite

STRICT = ScoringSettings(modes={"closed-form": "strict"})


def _closed_form_run(root: Path) -> Path:
    """A closed-form run of four questions (one wrong), written through RunDir."""
    run = RunDir.open_for_writing(
        root, RunSpec(suite={"name": "closed-form"}, agent={"name": "a"}, scoring=STRICT)
    )
    for index, (level, value) in enumerate([("easy", 1.0), ("easy", 0.0), ("hard", 1.0), ("hard", 1.0)]):
        correct = value == 1.0
        sub = {"x": {"label": "1", "predicted": "1" if correct else "2", "correct": correct}}
        run.append(
            SampleRecord(
                id=str(index), status="scored", agent="a", family="closed-form", level=level,
                concepts=["Summary Statistics"], score=Score(value=value, details={"sub_answers": sub}),
                started_at="2026-01-01T00:00:00+00:00", duration_s=1.0,
            )
        )  # fmt: skip
    return root


def _as_format_2(root: Path) -> None:
    """Rewrite a run as daharness wrote it before format 3: the family and its mode group spelt
    `closed_form`."""
    spec = json.loads((root / "run.json").read_text())
    spec["format_version"], spec["scoring"]["modes"] = 2, {"closed_form": "strict"}
    (root / "run.json").write_text(json.dumps(spec))
    samples = root / "samples.jsonl"
    samples.write_text(samples.read_text().replace('"family":"closed-form"', '"family":"closed_form"'))


def test_a_run_written_under_the_former_spelling_opens_reports_and_resumes(tmp_path: Path) -> None:
    root = _closed_form_run(tmp_path / "run")
    _as_format_2(root)
    assert '"family":"closed_form"' in (root / "samples.jsonl").read_text()
    run = RunDir.open_for_reading(root)
    assert {record.family for record in run.records()} == {"closed-form"}
    assert run.spec().scoring.modes == {"closed-form": "strict"}
    report = build_report(run)
    assert set(report["families"]) == set(report["family_tables"]) == {"closed-form"}
    assert report["families"]["closed-form"]["main_results"]["Accuracy by Question"] == 0.75
    assert report["family_tables"]["closed-form"]["mode"] == "strict"
    assert {sample["family"] for sample in report["samples"]} == {"closed-form"}
    assert "closed-form strict" in render_html(report)
    # the same command resumes it: its scoring is the current one, under the current name
    RunDir.open_for_writing(root, RunSpec(suite={"name": "closed-form"}, agent={"name": "a"}, scoring=STRICT))
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "report", str(root)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "(InfiAgent-DABench) · closed-form · a · strict" in done.stdout and "75.00%" in done.stdout


def test_report_json_carries_tables_that_are_drawn_without_the_familys_code(tmp_path: Path) -> None:
    report = build_report(RunDir.open_for_reading(_closed_form_run(tmp_path / "run")))
    drawn = report["family_tables"]["closed-form"]
    assert drawn["title"] == "closed-form (InfiAgent-DABench)"
    headline = {figure["label"]: (figure["value"], figure["measure"]) for figure in drawn["headline"]}
    assert headline["Accuracy by Question"] == (0.75, "rate")
    assert headline["Accuracy Proportional by Sub-Question"] == (0.75, "mean")
    (table,) = drawn["tables"]
    levels = next(section for section in table["sections"] if section["name"] == "level")
    assert [(row["group"], row["values"]) for row in levels["rows"]] == [("easy", [0.5]), ("hard", [1.0])]
    # a family this installation does not have: its figures are drawn all the same, from report.json
    report["family_tables"]["fifth"] = DrawnFigures(
        title="fifth (a plugin)",
        mode="lenient",
        headline=[Figure(label="solved", value=0.25, measure="rate")],
        tables=[
            FigureTable(
                columns=[Column(label="Solved", measure="rate"), Column(label="tasks", measure="count")],
                sections=[Section(name="shape", rows=[Row(group="<wide>", values=[0.5, 2])], chart="bars")],
            )
        ],
    ).model_dump(mode="json")
    html = render_html(report)
    assert "<h2>fifth (a plugin)</h2>" in html and "25.0%" in html
    assert "Solved by shape" in html and "&lt;wide&gt;: 50.0%" in html  # a bar, its label escaped
    assert "<h2>closed-form (InfiAgent-DABench)</h2>" in html and "Accuracy by level" in html
    console = Console(record=True, width=200)
    print_report(console, report)
    text = console.export_text()
    assert "closed-form (InfiAgent-DABench) · closed-form · a · strict" in text
    assert "fifth (a plugin) · closed-form · a · lenient" in text
    assert "solved" in text and "25.00%" in text and "<wide>" in text and "50.00%" in text


def test_a_table_row_needs_a_value_per_column() -> None:
    with pytest.raises(ValidationError, match="row 'easy' has 1 values for 2 columns"):
        FigureTable(
            columns=[Column(label="a", measure="rate"), Column(label="n", measure="count")],
            sections=[Section(rows=[Row(group="easy", values=[0.5])])],
        )


def test_charts_without_a_rate_or_mean_column_are_drawn_as_a_table() -> None:
    counts = FigureTable(
        columns=[Column(label="tasks", measure="count")],
        sections=[Section(name="shape", rows=[Row(group="wide", values=[3])], chart="columns")],
    )
    html = figures_html(DrawnFigures(title="t", tables=[counts]))
    assert "<svg" not in html and "<td>wide</td><td>3</td>" in html


@suite_format("h4a-made-up", prefix="h4a-made-up:")
def _made_up_format(location: Path, options: dict[str, Any]) -> Suite:
    """Tasks of a family that is not registered (a plugin's, not installed)."""
    return Suite(name="made-up", tasks=[Task(id="t1", suite="made-up", family="fifth", instructions=["x"])])


def test_a_task_of_a_family_that_is_not_registered_is_refused_where_the_suite_loads() -> None:
    with pytest.raises(
        UserError, match=r"suite made-up: task t1: unknown family 'fifth'; available: closed-form,"
    ):
        load_suite("h4a-made-up:anything")


def test_the_readmes_first_command_keeps_its_suite_name() -> None:
    suite = load_suite("closed-form")
    assert {task.family for task in suite.tasks} == {"closed-form"} and suite.name == "closed-form"
