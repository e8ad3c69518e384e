"""Agent code against the desktop's browser and the pages its checks read (issue 40, items 2, 3 and 5),
replayed through the real sandbox and desktop as an agent would: a background process that drives the
harness's browser over its DevTools endpoint, a server put in place of the setup's, a page that never
answers. Each must leave the honest score (0 for no work) and no infrastructure error."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from browser_tasks import PAGE_OK, background_hijack, page_check_task, serve_in_place_of_the_setup, write_task
from desktop_helpers import DESKTOP_LIMITS, needs_desktop

from daharness.agents.reference import ReferenceAgent
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Note
from daharness.core.task import ReferenceSolution, Task
from daharness.runs.integrity import suspicious_actions
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.scoring import score_submission
from daharness.suites import load_suite

pytestmark = needs_desktop
OFFICIAL_PORT = 1337  # the DevTools port of the official VM's Chrome, and of this desktop's until issue 40
# `data:text/html,<script>for(;;){}</script>`, in base64: the screen's keyboard types '<' as '>'
BUSY_PAGE = f"data:text/html;base64,{base64.b64encode(b'<script>for(;;){}</script>').decode()}"


def _with_solution(task: Task, bash: str) -> Task:
    return task.model_copy(update={"reference": ReferenceSolution(language="bash", code=bash)})


def _scores(task: Task) -> tuple[dict[str, float], list[str], list[str]]:
    """The reference agent's sample through the pipeline: its score in each mode, the kinds of its
    suspicious actions, and what to show on a failure."""
    submission, snapshot = solve_and_collect(task, ReferenceAgent(), SandboxSettings(limits=DESKTOP_LIMITS))
    try:
        scores = {
            mode: score_submission(task, submission, snapshot, ScoringSettings(modes={"workflow": mode}))
            for mode in ("corrected", "compat")
        }
        flags = suspicious_actions(
            submission.trajectory, snapshot, task.workdir, reported=submission.suspicions
        )
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    notes = [f"{e.text} {getattr(e, 'data', '')}"[:800] for e in submission.trajectory if isinstance(e, Note)]
    agent = [str(getattr(e, "observation", ""))[:1500] for e in submission.trajectory]
    shown = [*notes, *agent, *(f"{m}: {s.explanation}" for m, s in scores.items())]
    return {mode: score.value for mode, score in scores.items()}, [flag.kind for flag in flags], shown


def test_agent_code_cannot_drive_the_harness_browser_to_pass_a_page_check(tmp_path: Path) -> None:
    """Before issue 40 the attack scored 1.0 in both modes for no work, flagged nowhere: its background
    process attached to the check's new tab before it loaded and made every selector match."""
    page_check_task(tmp_path)
    task = _with_solution(load_suite(f"spider2v:{tmp_path}").tasks[0], background_hijack(OFFICIAL_PORT))
    scores, flags, shown = _scores(task)
    assert scores == {"corrected": 0.0, "compat": 0.0}, shown
    assert "browser_debugging" in flags, (flags, shown)


def test_a_server_the_agent_puts_in_place_of_the_setups_is_not_what_the_page_check_reads(
    tmp_path: Path,
) -> None:
    """The agent stops the setup's web server and serves the page the check wants (both links) on its port,
    from a folder of its own: before issue 40 the live check read it (1.0); the check now reads the setup's
    server started again in the checks' environment, where the page is not."""
    page_check_task(tmp_path)
    task = _with_solution(load_suite(f"spider2v:{tmp_path}").tasks[0], serve_in_place_of_the_setup(PAGE_OK))
    scores, _, shown = _scores(task)
    assert scores == {"corrected": 0.0, "compat": 0.0}, shown
    # the same page written where the setup's server serves it is the task done
    honest = _with_solution(task, f"cat > ~/site/links.html <<'HTML'\n{PAGE_OK}\nHTML\n")
    assert _scores(honest)[0] == {"corrected": 1.0, "compat": 1.0}


def _busy_page_tasks(root: Path) -> None:
    """Two tasks whose checks read the browser's shown tab (its URL; its URL and page), each "solved" by
    typing the URL of a page that never stops running its script into the address bar."""
    # no WAIT after the typing: the reference agent waits after each action until the screen is still,
    # which a page that never stops loading never is (its 30 s bound: the page is busy by then)
    typed = [
        {"action_type": "HOTKEY", "keys": ["ctrl", "l"]},
        {"action_type": "TYPING", "text": f"{BUSY_PAGE}\n"},
    ]
    url = write_task(
        root, "url", {"type": "validate_correct_url", "goto_prefix": "http://"}, "echo report.html"
    )
    tab = write_task(root, "tab", {"type": "active_tab_info", "goto_prefix": "http://"}, "true")
    raw = json.loads((tab / "tab.json").read_text())
    raw["evaluator"] = {
        "func": "is_expected_url_pattern_match",
        "result": {"type": "active_tab_info", "goto_prefix": "http://"},
        "expected": {"type": "rule", "rules": {"expected": ["report\\.html"]}},
    }
    (tab / "tab.json").write_text(json.dumps(raw))
    for folder in (url, tab):
        (folder / "solution.actions.json").write_text(json.dumps(typed))


def test_a_page_that_never_answers_is_the_agents_zero_not_an_infrastructure_error(tmp_path: Path) -> None:
    """Before issue 40 reading the tabs ran script in every page: the busy page never answered, the
    listing gave up, and both samples were infrastructure errors (left out of the mean, retried on
    resume, the run's exit status 3)."""
    _busy_page_tasks(tmp_path / "suite")
    out = tmp_path / "run"
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", f"spider2v:{tmp_path / 'suite'}",
         "--agent", "reference", "--out", str(out)],
        capture_output=True, text=True, env=environment, timeout=900,
    )  # fmt: skip
    records = {r["id"]: r for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    shown = done.stdout[-2000:] + done.stderr[-3000:] + json.dumps(records)[:4000]
    assert done.returncode == 0, shown
    assert {key: (r["status"], r["score"]["value"]) for key, r in records.items()} == {
        "url": ("scored", 0.0),
        "tab": ("scored", 0.0),
    }, shown
    # the shown tab's URL is read from the browser itself; its page, which never answers, is the reason
    assert "did not answer" in records["tab"]["score"]["explanation"], shown
