"""The built-in `interactive` suite (Tapilot-Crossing family): its shape, the reference run and its report,
and `daharness validate` (references score 1, damaged answers score lower)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from rich.console import Console

from daharness.core.runlog import ScoringSettings
from daharness.families.interactive.run import code_options
from daharness.report.build import build_report
from daharness.report.figures import DrawnFigures, print_figures
from daharness.report.html import render_html
from daharness.runs.rundir import RunDir
from daharness.runs.validate import TaskValidation, validate_task
from daharness.suites import load_suite

SUITE = load_suite("interactive")
RESULT_TYPES = {"dataframe", "series", "scalar", "list", "dict", "tuple", "plot", "model"}
ACTIONS = {"update_code", "clarification", "best_guess", "fast_fail", "insight_mining", "plot_qa"}


def test_suite_shape() -> None:
    tasks = SUITE.tasks
    assert len(tasks) >= 60
    assert len({item.path for task in tasks for item in task.files}) >= 4
    dialogues = Counter(task.gold.data["dialogue"] for task in tasks)
    turns = {d: max(t.gold.data["turn"] for t in tasks if t.gold.data["dialogue"] == d) for d in dialogues}
    assert all(4 <= n <= 10 for n in turns.values()), turns
    assert {t.metadata.category for t in tasks} == {"normal", "action", "private", "private_action"}
    assert {t.metadata.subcategory for t in tasks} - {None} == ACTIONS
    assert {t.answer_format.kind for t in tasks} == {"code", "choice"}
    intents = [i for t in tasks if (options := code_options(t)) for i in options.intents]
    assert {i.type for i in intents} == RESULT_TYPES
    assert sum(len(code_options(t).intents) > 1 for t in tasks if code_options(t)) >= 5  # type: ignore[union-attr]
    library = next(t.libraries[0] for t in tasks if t.libraries)
    assert library.name == "decision_kit" and len(library.functions) >= 15
    assert all(doc.count("\n") >= 2 for doc in library.functions.values())  # signature and docstring
    # as the paper's fast-fail set: as many answerable and under-specified questions as unanswerable ones
    fast_fail = Counter(t.gold.data["answerability"] for t in tasks if t.metadata.subcategory == "fast_fail")
    assert fast_fail["unanswerable"] == fast_fail["under_specified"] == fast_fail["answerable"] >= 4
    for task in tasks:
        assert task.reference is not None and task.warnings == []
        options = code_options(task)
        if options is not None and task.libraries:
            assert options.reference_calls, task.id
        if options is not None and any(i.type == "plot" for i in options.intents):
            assert task.gold.data["decoys"], task.id  # validate draws a plot of another column
        if task.answer_format.kind == "choice":
            assert task.gold.choice in task.answer_format.names
    # the agent sees the history and where to leave results, never the reference
    later = next(t for t in tasks if t.id == "cars-05")
    assert [turn.role for turn in later.dialogue] == ["user", "assistant"] * 4
    assert "mpg_hist.png" in later.answer_format.text and later.reference.code not in later.answer_format.text  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from daharness.agents import make_agent
    from daharness.runs.runner import run_suite

    out = tmp_path_factory.mktemp("interactive") / "run"
    outcome = run_suite(SUITE, make_agent("reference"), out, concurrency=2)
    assert outcome.errors == 0
    return out


def test_the_reference_agent_scores_every_turn_right(reference_run: Path) -> None:
    records = [json.loads(line) for line in (reference_run / "samples.jsonl").read_text().splitlines()]
    assert len(records) == len(SUITE.tasks)
    assert {r["id"]: (r["score"]["value"], r["score"]["details"]["accr"]) for r in records} == {
        task.id: (1.0, 1.0) for task in SUITE.tasks
    }
    report = build_report(RunDir.open_for_reading(reference_run))
    figures = report["families"]["interactive"]
    assert figures["table3"]["acc"] == figures["table3"]["accr"]
    assert set(figures["table3"]["acc"].values()) == {1.0}
    assert set(figures["by_action"]) == ACTIONS and set(figures["by_result_type"]) == RESULT_TYPES
    intents = sum(len(o.intents) if (o := code_options(t)) else 1 for t in SUITE.tasks)
    assert figures["counts"]["intents"] + figures["counts"]["choice"] == intents
    assert figures["intent_weighted_acc"] == 1.0
    console = Console(record=True, width=160)
    print_figures(console, DrawnFigures.model_validate(report["family_tables"]["interactive"]), "reference")
    text = console.export_text()
    assert "Pri-Act" in text and "plot_qa" in text and "model" in text
    html = render_html(report)
    assert "Pri-Act" in html and "Acc by action type" in html


# every task with decoys, a multiple-choice turn of each action, and code turns of each result type and mode
# (`daharness validate --suite interactive` checks all of them; here a cross-section keeps the tests short)
CHECKED = [
    "cars-04", "cars-05", "cars-06", "cars-07", "weather-01", "weather-04", "weather-06", "weather-08",
    "diabetes-03", "diabetes-09", "affairs-03", "affairs-05", "macro-03", "wine-03", "wine-04", "wine-05",
    "wine-07", "stocks-01", "stocks-02", "stocks-04", "stocks-06",
]  # fmt: skip


@pytest.fixture(scope="module")
def validation(reference_run: Path) -> dict[str, TaskValidation]:
    scoring = ScoringSettings(modes={"interactive": "corrected"})
    tasks = [task for task in SUITE.tasks if task.id in CHECKED]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda task: validate_task(task, scoring=scoring), tasks))
    return {result.task_id: result for result in results}


def test_validate_damages_every_answer_and_each_scores_lower(validation: dict[str, TaskValidation]) -> None:
    assert set(validation) == set(CHECKED)
    assert {i: r.problems for i, r in validation.items() if not r.ok} == {}
    assert all(r.reference_score == 1.0 for r in validation.values())
    tasks = {task.id: task for task in SUITE.tasks}
    assert {tasks[i].metadata.subcategory for i in CHECKED} - {None} == ACTIONS
    assert {tasks[i].metadata.category for i in CHECKED} == {"normal", "action", "private", "private_action"}
    names = Counter(
        name.split(" of ")[0].split(" instead")[0] for r in validation.values() for name in r.mutations
    )
    assert names["change a number"] >= 8 and names["change a text"] >= 1
    for task_id, result in validation.items():
        assert result.mutations and all(value < 1.0 for value in result.mutations.values()), task_id
        if tasks[task_id].answer_format.kind == "choice":
            assert any(name.startswith("answer ") for name in result.mutations), task_id
        else:
            assert any(name.startswith("drop the ") for name in result.mutations), task_id
    plots = [i for i in CHECKED if (o := code_options(tasks[i])) and any(x.type == "plot" for x in o.intents)]
    assert len(plots) >= 5 and all(
        tasks[i].gold.data["decoys"][0]["label"] in validation[i].mutations for i in plots
    )
    assert "a histogram of another column (Horsepower)" in validation["cars-05"].mutations
    assert (
        "the same plot drawn with matplotlib instead of the private library"
        in validation["wine-05"].mutations
    )
    assert "the same results without the private library" in validation["stocks-02"].mutations


def test_official_mode_lets_a_plot_of_another_column_pass() -> None:
    task = next(t for t in SUITE.tasks if t.id == "cars-05")
    result = validate_task(task, scoring=ScoringSettings(modes={"interactive": "official"}))
    assert result.mutations["a histogram of another column (Horsepower)"] == 1.0  # SSIM alone: > 0.6
    assert not result.ok


def test_validate_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "validate", "--suite", "interactive", "--ids", "cars-04,wine-05,stocks-06"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 of 3 tasks pass" in done.stdout and "validation (interactive corrected)" in done.stdout
