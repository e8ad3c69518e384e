"""The desktop agent on a built-in task through the real desktop and the scripted model server, scored as
the release scores it: a reply of a code block then a DONE block runs the code, then ends (1); the same
work followed by FAIL scores 0 (the task can be done, and the agent gave up). The run's record keeps the
screenshots the model was sent, and the Inspect export shows them in each call, in order."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

from desktop_helpers import DESKTOP_LIMITS, needs_desktop
from fake_openai import FakeOpenAI

from daharness.agents import AgentSettings, SampleLimits, make_agent
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import ActionEvent, ModelCall
from daharness.models import ModelSettings
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.scoring import score_submission
from daharness.suites import load_suite

pytestmark = needs_desktop
TASK = "nb-cars-heaviest-csv"
# the work, as pyautogui code may do it (any Python runs in the agent's kernel): the task's result file
WORK = """import pandas as pd
cars = pd.read_csv('/home/user/Desktop/cars.csv')
top = cars.sort_values(['Weight_in_lbs', 'Name'], ascending=[False, True]).head(10)
top[['Name', 'Origin', 'Weight_in_lbs']].to_csv('/home/user/Desktop/result.csv', index=False)"""


def images_sent(request: dict) -> list[bytes]:
    """Every image of a request, in the order of its messages."""
    urls = [
        p["image_url"]["url"] for m in request["messages"] for p in m["content"] if p["type"] == "image_url"
    ]
    return [base64.b64decode(url.removeprefix("data:image/png;base64,")) for url in urls]


def _run(tmp_path: Path, replies: list[str]) -> tuple[float, Any, list[dict]]:
    task = next(t for t in load_suite("workflow").tasks if t.id == TASK)
    with FakeOpenAI() as server:
        scripted = iter(replies)
        server.responder = lambda request: next(scripted)
        settings = ModelSettings(model="fake-vl", base_url=server.base_url)
        run = AgentSettings(model=settings, cache_mode="off", limits=SampleLimits(max_steps=6))
        agent = make_agent("desktop", run, {"observation": "screenshot", "action_space": "pyautogui"})
        submission, snapshot = solve_and_collect(
            task, agent, SandboxSettings(limits=DESKTOP_LIMITS, desktop=True)
        )
        requests = list(server.requests)
    try:
        score = score_submission(task, submission, snapshot, ScoringSettings())
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    return score.value, submission, requests


def test_code_then_done_runs_the_code_and_scores_1_and_work_then_fail_scores_0(tmp_path: Path) -> None:
    done, submission, requests = _run(tmp_path, [f"I write the file.\n```python\n{WORK}\n```\n```DONE```"])
    assert done == 1.0, submission.trajectory[-3:]
    assert submission.stop_reason == "done" and len(requests) == 1
    # the release's sampling went with the request
    assert (requests[0]["temperature"], requests[0]["top_p"], requests[0]["max_tokens"]) == (0.5, 0.9, 1500)
    acted = [e.args["action"] for e in submission.trajectory if isinstance(e, ActionEvent)]
    assert acted == [WORK, "DONE"]

    failed, submission, requests = _run(
        tmp_path, [f"```python\n{WORK}\n```", "It will not work.\n```FAIL```"]
    )
    assert failed == 0.0 and submission.stop_reason == "fail" and len(requests) == 2
    assert submission.evidence["last_action"] == "FAIL"
    # the second request showed both screenshots, in order; the record names them by attachment, kept once
    assert len(images_sent(requests[1])) == 2
    calls = [e for e in submission.trajectory if isinstance(e, ModelCall)]
    urls = [
        p["image_url"]["url"] for m in calls[1].messages for p in m["content"] if p["type"] == "image_url"
    ]
    assert urls == ["attachment:step-1.png", "attachment:step-2.png"]
    assert sorted(submission.attachments) == ["step-1.png", "step-2.png"]
    assert images_sent(requests[1]) == [
        submission.attachments["step-1.png"],
        submission.attachments["step-2.png"],
    ]
