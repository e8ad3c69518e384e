"""Workflow tasks on the real desktop: the official excel tasks' `open` step shows the workbook in
LibreOffice, a solution of screen actions edits it there without saving, and the GUI postconfig
(activate its window, Ctrl+S) saves it on the screen before the checks read the file."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest
from desktop_helpers import DESKTOP_LIMITS, needs_desktop
from helpers import shared_folder

from daharness.agents.reference import ReferenceAgent
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Note
from daharness.core.task import ReferenceSolution, Task
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.scoring import score_submission
from daharness.suites import load_suite

pytestmark = needs_desktop
OFFICIAL = shared_folder() / "spider2v-public"
# Net Income = Revenue - Total Expenses in column C, typed into the cells (a click selects C1)
NET_INCOME = [
    {"action_type": "CLICK", "x": 545, "y": 175},
    {"action_type": "TYPING", "text": "Net Income\n" + "".join(f"=A{row}-B{row}\n" for row in range(2, 21))},
]


def _official(prefix: str) -> Task:
    if not OFFICIAL.is_dir():
        pytest.skip(f"the official tasks are not at {OFFICIAL}")
    task = next(t for t in load_suite(f"spider2v:{OFFICIAL}").tasks if t.id.startswith(prefix))
    return task


def _solved_on_screen(task: Task, actions: list) -> tuple[float, list[str]]:
    task = task.model_copy(
        update={"reference": ReferenceSolution(language="actions", code=json.dumps(actions))}
    )
    submission, snapshot = solve_and_collect(
        task, ReferenceAgent(), SandboxSettings(limits=DESKTOP_LIMITS, desktop=True)
    )
    try:
        score = score_submission(task, submission, snapshot, ScoringSettings())
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    notes = [event.text for event in submission.trajectory if isinstance(event, Note)]
    return score.value, notes


def test_official_excel_tasks_are_solved_on_the_screen_and_saved_by_their_postconfig() -> None:
    tasks = [_official("0acbd372"), _official("5e34cd6b")]  # abstract and verbose instruction
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda task: _solved_on_screen(task, NET_INCOME), tasks))
    for score, notes in results:
        # nothing in the solution saves: the score comes from Ctrl+S pressed on the screen after it
        assert "postconfig on the screen: activated 'NetIncome.xlsx - LibreOffice Calc'" in notes
        assert score == 1.0
