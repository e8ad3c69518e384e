"""Official jupyter tasks whose postconfig runs `wait.sh` (is JupyterLab's kernel idle?) before Ctrl+S:
the script asks the screen's JupyterLab, so it runs on the live sandbox with the GUI postconfig, before
the agent's processes are stopped; a setup or check script that asks localhost stays unsupported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from desktop_helpers import DESKTOP_LIMITS, needs_desktop

from daharness.agents.reference import ReferenceAgent
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Note
from daharness.core.task import ReferenceSolution, Task
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.scoring import score_submission
from daharness.suites import load_suite

FIXTURE = Path(__file__).parents[2] / "fixtures" / "spider2v-jupyter-wait"
VERBOSE, ABSTRACT = "4f9794ae-d508-416f-af3b-10e449ebd083", "8ecc0ac2-3083-4be0-ace9-43079288d717"
LOCALHOST = (
    "wait.sh asks a server on localhost that must still run after the agent (its processes are stopped then)"
)
# once JupyterLab has the notebook open with an idle kernel, "Run All Cells" from its command palette (the
# keyboard only: nothing depends on where the page draws its cells); nothing waits for the kernel after:
# wait.sh does
KERNEL_IDLE = """import json, urllib.request

def idle():
    try:
        with urllib.request.urlopen("http://127.0.0.1:8888/api/sessions", timeout=5) as answer:
            return any(s["kernel"]["execution_state"] == "idle" for s in json.load(answer))
    except (OSError, ValueError, KeyError, TypeError):
        return False

deadline = time.monotonic() + 90
while not idle() and time.monotonic() < deadline:
    time.sleep(0.2)
"""
RUN_ALL_CELLS = [
    KERNEL_IDLE,
    {"action_type": "PRESS", "key": "escape"},
    {"action_type": "HOTKEY", "keys": ["ctrl", "shift", "c"]},
    {"action_type": "TYPING", "text": "Run All Cells"},
    {"action_type": "PRESS", "key": "enter"},
]


def _copy(tmp_path: Path, change: str) -> Path:
    """The abstract task as its own suite, with one change to its JSON or its scripts."""
    folder = tmp_path / "jupyter" / ABSTRACT
    shutil.copytree(FIXTURE / "jupyter" / ABSTRACT, folder)
    path = folder / f"{ABSTRACT}.json"
    raw = json.loads(path.read_text())
    wait_step = raw["evaluator"]["postconfig"][0]
    if change == "setup":  # wait.sh before the agent
        raw["config"].append(wait_step)
    elif change == "check":  # a check script that asks JupyterLab
        (folder / "eval.sh").write_text("#!/bin/bash\ncurl -s http://localhost:8888/api/kernels\n")
        src = wait_step["parameters"]["src"].replace("wait.sh", "eval.sh")
        raw["evaluator"].update(func="check_include_exclude", expected={"type": "rule", "rules": {"include": ["idle"]}},
                                result={"type": "vm_script_output", "src": src, "dest": "/home/user/eval.sh"})  # fmt: skip
    elif change == "internet":  # a postconfig script with another need besides localhost
        with (folder / "wait.sh").open("a") as script:
            script.write("curl -s https://example.com/status\n")
    path.write_text(json.dumps(raw))
    return tmp_path


def test_wait_sh_is_a_gui_postconfig_step_and_asking_localhost_elsewhere_stays_unsupported(
    tmp_path: Path,
) -> None:
    suite = load_suite(f"spider2v:{FIXTURE}")
    assert suite.unsupported == {}
    for task in suite.tasks:
        steps = task.gold.data["postconfig"]
        assert [(step["kind"], step["args"]["official"]) for step in steps] == [
            ("open", "script_and_execute"),
            ("open", "activate_window"),
            ("open", "execute"),
        ], task.id
        assert Path(steps[0]["args"]["script"]).name == "wait.sh"
        assert steps[0]["args"]["dest"] == "Downloads/wait.sh"
    assert sorted(task.id for task in suite.tasks) == [VERBOSE, ABSTRACT]
    for change in ("setup", "check", "internet"):
        copy = load_suite(f"spider2v:{_copy(tmp_path / change, change)}")
        reason = LOCALHOST.replace("wait.sh", "eval.sh") if change == "check" else LOCALHOST
        assert (copy.tasks, copy.unsupported) == ([], {ABSTRACT: reason}), change


def _solve(task: Task, solution: ReferenceSolution, desktop: bool) -> tuple[float, list[Note]]:
    task = task.model_copy(update={"reference": solution})
    settings = SandboxSettings(limits=DESKTOP_LIMITS, desktop=True) if desktop else SandboxSettings()
    submission, snapshot = solve_and_collect(task, ReferenceAgent(), settings)
    try:
        score = score_submission(task, submission, snapshot, ScoringSettings())
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    # the notes of the setup and the checks (not the harness's screenshots of the screen before and after)
    notes = [e for e in submission.trajectory if isinstance(e, Note) and "screenshot_jpeg" not in e.data]
    return score.value, [*notes, Note(text=score.explanation or "")]


def test_without_a_desktop_wait_sh_is_not_run_and_said_so() -> None:
    task = next(t for t in load_suite(f"spider2v:{FIXTURE}").tasks if t.id == ABSTRACT)
    score, notes = _solve(task, ReferenceSolution(language="bash", code="true"), desktop=False)
    assert score == 0.0
    assert [note.text for note in notes[:-1]] == [
        "postconfig Downloads/wait.sh not run: it asks the screen's applications on localhost, "
        "and this sample has no desktop"
    ]


@needs_desktop
def test_all_cells_run_in_jupyterlab_on_the_screen_score_1_after_wait_sh_and_ctrl_s() -> None:
    """(The untouched notebook scores 0 in the test above: the check reads the saved file alone.)"""
    task = next(t for t in load_suite(f"spider2v:{FIXTURE}").tasks if t.id == ABSTRACT)
    solution = ReferenceSolution(language="actions", code=json.dumps(RUN_ALL_CELLS))
    solved, notes = _solve(task, solution, desktop=True)
    # the official order, before the agent's processes stop
    assert [note.text for note in notes[:3]] == [
        "postconfig on the screen: ran Downloads/wait.sh (exit status 0)",
        notes[1].text,
        """postconfig on the screen: python -c 'import pyautogui; pyautogui.hotkey("ctrl", "s");': done""",
    ], notes
    assert notes[0].data["stdout"] == "JupyterLab is ready.\n"
    assert notes[1].text.startswith("postconfig on the screen: activated '") and "JupyterLab" in notes[1].text
    assert solved == 1.0, notes
