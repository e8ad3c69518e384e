"""Workflow tasks on the real desktop: the official excel tasks' `open` step shows the workbook in
LibreOffice, a solution of screen actions edits it there without saving, and the GUI postconfig
(activate its window, Ctrl+S) saves it on the screen before the checks read the file."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
OFFICIAL_DESKTOP = shared_folder() / "spider2v-desktop"
# Net Income = Revenue - Total Expenses in column C, typed into the cells (a click selects C1)
NET_INCOME = [
    {"action_type": "CLICK", "x": 545, "y": 175},
    {"action_type": "TYPING", "text": "Net Income\n" + "".join(f"=A{row}-B{row}\n" for row in range(2, 21))},
]

# JupyterLab started on the port the task names, then the notebook opened in the browser's address bar
NOTEBOOK_AT_1036 = [
    "import socket, subprocess, sys\n"
    "subprocess.Popen([sys.executable, '-m', 'jupyterlab', '--no-browser', '--port=1036',\n"
    "    '--ServerApp.root_dir=/home/user', '--IdentityProvider.token=', '--ServerApp.password='],\n"
    "    start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "for _ in range(600):\n"
    "    try:\n"
    "        socket.create_connection(('127.0.0.1', 1036), timeout=1).close()\n"
    "        break\n"
    "    except OSError:\n"
    "        time.sleep(0.1)\n",
    {"action_type": "HOTKEY", "keys": ["ctrl", "l"]},
    {
        "action_type": "TYPING",
        "text": "http://localhost:1036/lab/tree/Downloads/Aragon_Conviction_Voting_Model.ipynb\n",
    },
]


def _official(prefix: str, folder: Path = OFFICIAL) -> Task:
    if not folder.is_dir():
        pytest.skip(f"the official tasks are not at {folder}")
    return next(t for t in load_suite(f"spider2v:{folder}").tasks if t.id.startswith(prefix))


def _solved_on_screen(task: Task, actions: list | None) -> tuple[float, list[str]]:
    """The score, and the notes of the trajectory with what was read on the screen (for a failure)."""
    if actions is not None:  # None: the task's own solution
        reference = ReferenceSolution(language="actions", code=json.dumps(actions))
        task = task.model_copy(update={"reference": reference})
    submission, snapshot = solve_and_collect(
        task, ReferenceAgent(), SandboxSettings(limits=DESKTOP_LIMITS, desktop=True)
    )
    try:
        score = score_submission(task, submission, snapshot, ScoringSettings())
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    notes = [event.text for event in submission.trajectory if isinstance(event, Note)]
    observations = [str(getattr(event, "observation", ""))[:300] for event in submission.trajectory]
    read = str(submission.evidence.get("screen_states", ""))[:300]
    return score.value, [
        *notes,
        f"{score.explanation} | read on the screen: {read} | actions: {observations}",
    ]


def test_tasks_are_solved_on_the_screen_and_checked_there() -> None:
    """Four official tasks (two excel, abstract and verbose; two whose check reads the browser's active
    tab) with the actions above, and a built-in desktop task with its own solution (keyboard only), five
    samples on two workers."""
    builtin = next(t for t in load_suite("workflow").tasks if t.id == "gui-longley-gnp-per-person")
    excel = [(_official("0acbd372"), NET_INCOME), (_official("5e34cd6b"), NET_INCOME), (builtin, None)]
    browser = [(_official(p, OFFICIAL_DESKTOP), NOTEBOOK_AT_1036) for p in ("910797bf", "e85047db")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda sample: _solved_on_screen(*sample), excel + browser))
    for (task, _), (score, notes) in zip(browser, results[len(excel) :], strict=True):
        assert score == 1.0, (
            task.id,
            notes,
        )  # the tab that the address bar opened, read from the live browser
    for (task, _), (score, notes) in zip(excel, results, strict=False):
        # nothing in the solutions saves: the score comes from Ctrl+S pressed on the screen after them
        book = task.files[0].path
        assert f"postconfig on the screen: activated '{book} - LibreOffice Calc'" in notes, task.id
        assert score == 1.0, (task.id, notes)
