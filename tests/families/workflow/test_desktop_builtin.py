"""The built-in workflow suite's JupyterLab and browser tasks on the real desktop: their reference solutions
(screen actions) score 1 through the whole loop (the setup's JupyterLab or dbt docs in the browser, the
actions, the GUI postconfig's wait and Ctrl+S, the notebook file or the browser's active tab checked), and
the untouched tasks score 0."""

from __future__ import annotations

import shutil
import time
from concurrent.futures import ThreadPoolExecutor

from desktop_helpers import DESKTOP_LIMITS, needs_desktop

from daharness.agents.reference import ReferenceAgent
from daharness.core.agent import Agent
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Note
from daharness.core.task import Task
from daharness.families.workflow.validate import IdleAgent
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.scoring import score_submission
from daharness.suites import load_suite

pytestmark = needs_desktop
NOTEBOOK, DOCS = "gui-jupyter-cars-fix-and-run", "gui-browser-stocks-docs-parent-model"


def _scored(task: Task, agent: Agent, desktop: bool = True) -> tuple[float, float, list[str]]:
    """The score, the sample's seconds, and what to show on a failure: the notes and the score's reason."""
    started = time.monotonic()
    if not desktop:  # the task as a run without a screen has it: its GUI steps do nothing
        task = task.model_copy(update={"desktop": False})
    settings = SandboxSettings(limits=DESKTOP_LIMITS, desktop=True) if desktop else SandboxSettings()
    submission, snapshot = solve_and_collect(task, agent, settings)
    try:
        score = score_submission(task, submission, snapshot, ScoringSettings())
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    notes = [event.text for event in submission.trajectory if isinstance(event, Note)]
    return score.value, time.monotonic() - started, [*notes, score.explanation]


def test_the_builtin_jupyterlab_and_browser_tasks_are_solved_on_the_screen() -> None:
    """Each task solved by its reference on the screen and left untouched, on two workers. The untouched
    notebook is scored without a desktop: its check reads the file alone, and on a screen the postconfig's
    Ctrl+S, which saves nothing there, would only wait out its 30 s for a save."""
    tasks = {task.id: task for task in load_suite("workflow").tasks if task.id in (NOTEBOOK, DOCS)}
    samples = [
        (tasks[NOTEBOOK], ReferenceAgent(), True),
        (tasks[DOCS], ReferenceAgent(), True),
        (tasks[DOCS], IdleAgent(), True),
        (tasks[NOTEBOOK], IdleAgent(), False),
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda sample: _scored(*sample), samples))
    for (task, agent, _), (score, seconds, notes) in zip(samples, results, strict=True):
        print(f"{task.id} {agent.name}: {score} in {seconds:.0f} s")
        assert score == (1.0 if agent.name == "reference" else 0.0), (task.id, agent.name, notes)
    # the notebook's outputs come from the run in JupyterLab, saved by the postconfig's Ctrl+S on the screen
    notebook_notes = results[0][2]
    assert any(note.startswith("postconfig on the screen: activated") for note in notebook_notes), (
        notebook_notes
    )
