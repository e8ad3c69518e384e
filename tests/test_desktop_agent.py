"""The `desktop` agent against the scripted model server: it sends screenshots as image parts with the
accessibility table, and the actions the model answers (found from that table, or named by their set-of-mark
number) reach the page on the screen; each step's screen is kept in the trajectory, and the screenshots
sent as attachments."""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Iterator

import pytest
from desktop_helpers import desktop_box, desktop_task, needs_desktop, serve
from fake_openai import FakeOpenAI, image_parts, text_parts
from PIL import Image

from daharness.agents import AgentSettings, SampleLimits, agent_needs_desktop, make_agent
from daharness.core.submission import ActionEvent, Note
from daharness.models import ModelSettings
from daharness.sandbox import BwrapSandbox

pytestmark = needs_desktop

COUNTER = """<html><head><title>counter</title></head><body>
<button style="position:absolute;left:500px;top:200px;width:220px;height:70px"
        onclick="count++; document.title = 'clicked ' + count">Count sale</button>
<input aria-label="Note" style="position:absolute;left:500px;top:420px;width:300px"
       oninput="document.title = 'clicked ' + count + ', note ' + this.value">
<script>var count = 0;</script>
</body></html>"""


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BwrapSandbox]:
    with desktop_box(desktop_task(tmp_path_factory.mktemp("agent"))) as sandbox:
        base = serve(sandbox, {"counter.html": COUNTER}, 8010)
        sandbox.desktop.open_url(f"{base}/counter.html")
        yield sandbox


def center(table: str, tag: str, name: str) -> tuple[int, int]:
    """The centre of the table's row `tag name`, as a model reading the table would find it."""
    row = re.search(rf"^{tag}\t{name}\t\((\d+), (\d+)\)\t\((\d+), (\d+)\)", table, re.MULTILINE)
    assert row, f"no {tag} {name!r} in the table the model got:\n{table[:2000]}"
    x, y, width, height = map(int, row.groups())
    return x + width // 2, y + height // 2


def agent_for(server: FakeOpenAI, **extra: object):  # type: ignore[no-untyped-def]
    settings = ModelSettings(model="fake-vl", base_url=server.base_url)
    return make_agent(
        "desktop",
        AgentSettings(model=settings, cache_mode="off", limits=SampleLimits(max_steps=8)),
        dict(extra),
    )


def active_title(box: BwrapSandbox) -> str:
    return next(tab["title"] for tab in box.desktop.tabs() if tab["active"])


def test_the_agent_sees_the_screen_and_its_clicks_and_typing_reach_the_page(box: BwrapSandbox) -> None:
    seen: list[tuple[int, int]] = []

    def model(request: dict) -> str:  # the scripted model: acts on what the table of this request says
        images = image_parts(request)
        assert len(images) == 1, "each observation carries one screenshot"
        seen.append(Image.open(io.BytesIO(images[0])).size)
        table = text_parts(request)
        step = len(seen)
        if step <= 3:
            x, y = center(table, "push-button", "Count sale")
            return f"I count one sale.\n```python\npyautogui.click({x}, {y})\n```"
        if step == 4:
            x, y = center(table, "entry", "Note")
            return f"```python\npyautogui.click({x}, {y})\npyautogui.typewrite('ok')\n```"
        if step == 5:
            assert "'ok'" in table, "the typed text is in the next observation's table"
            return "```WAIT```"
        return "All done.\n```DONE```"

    with FakeOpenAI() as server:
        server.responder = model
        agent = agent_for(server, observation="screenshot_a11y_tree")
        submission = agent.solve(desktop_task_for(box), box)
        assert len(server.requests) == 6
        later = server.requests[-1]["messages"]
    assert seen == [(1920, 1080)] * 6
    assert active_title(box) == "clicked 3, note ok"  # the application's own state
    assert submission.finished and submission.stop_reason == "done" and submission.steps == 6
    # the last request holds the system prompt, 3 earlier observations with their replies, and the new one
    assert [m["role"] for m in later] == ["system", *["user", "assistant"] * 3, "user"]
    system = later[0]["content"][0]["text"]  # the built-in suite's prompt: daharness's own wording
    assert "pyautogui.click" in system and system.endswith("Your task: look")
    # 1 + 2 + 3 + 4 + 4 + 4 screenshots sent, each counted as a high-detail 1920x1080 image (1105 tokens)
    assert submission.evidence["desktop"] == {"images": 18, "image_tokens": 18 * 1105}
    actions = [e for e in submission.trajectory if isinstance(e, ActionEvent)]
    # four clicks (the fourth with typing), WAIT and DONE, each recorded as the loop ran it
    assert [e.kind for e in actions] == ["desktop"] * 6 and all(e.observation.ok for e in actions)
    assert [e.args["action"] for e in actions][-2:] == ["WAIT", "DONE"]
    screens = [e for e in submission.trajectory if isinstance(e, Note) and e.text.startswith("screen at")]
    assert [n.data["step"] for n in screens] == [1, 2, 3, 4, 5, 6]
    kept = Image.open(io.BytesIO(base64.b64decode(screens[0].data["screenshot_jpeg"])))
    assert (kept.format, kept.size) == ("JPEG", (960, 540))
    assert "push-button\tCount sale" in screens[0].data["a11y_tree"]
    recorded = str([e.messages for e in submission.trajectory if getattr(e, "type", "") == "model"])
    # the calls name the screenshots they sent (kept once each as attachments), not their data URLs
    assert "data:image/png" not in recorded and recorded.count("attachment:step-") == 18
    assert sorted(submission.attachments) == [f"step-{n}.png" for n in range(1, 7)]


def _count(box: BwrapSandbox) -> int:
    """The page's count of clicks, as the other tests left it (or 0, fresh, when a test runs alone)."""
    before = active_title(box)
    found = re.match(r"clicked (\d+)", before)
    assert found or before == "counter", before
    return int(found.group(1)) if found else 0


def test_set_of_mark_binds_index_n_to_the_centre_of_mark_n(box: BwrapSandbox) -> None:
    count = _count(box)

    def model(request: dict) -> str:
        table = text_parts(request)
        assert "INDEX\tTAG" in table, "som numbers the table's rows"
        if len(server.requests) == 1:
            row = re.search(r"^(\d+)\tpush-button\tCount sale\t", table, re.MULTILINE)
            assert row, table[:2000]
            return f"```python\npyautogui.click(index_{row.group(1)})\n```"
        return "```DONE```"

    with FakeOpenAI() as server:
        server.responder = model
        submission = agent_for(server, observation="som").solve(desktop_task_for(box), box)
    assert active_title(box).startswith(f"clicked {count + 1}")
    assert submission.stop_reason == "done" and submission.steps == 2


def test_json_actions_run_one_after_another(box: BwrapSandbox) -> None:
    count = _count(box)

    def model(request: dict) -> str:
        table = text_parts(request)
        if len(server.requests) == 1:
            x, y = center(table, "push-button", "Count sale")
            click = json.dumps({"action_type": "CLICK", "x": x, "y": y})
            return f"```json\n{click}\n```\n```json\n{click}\n```"  # every block runs
        if len(server.requests) == 2:
            return '```json\n{"action_type": "NO_SUCH_ACTION"}\n```'  # it fails: nothing happens
        return "DONE"

    with FakeOpenAI() as server:
        server.responder = model
        agent = agent_for(server, observation="a11y_tree", action_space="computer_13")
        submission = agent.solve(desktop_task_for(box), box)
    assert active_title(box).startswith(f"clicked {count + 2}")
    assert submission.stop_reason == "done" and submission.steps == 3


def test_the_desktop_agent_always_gets_a_desktop() -> None:
    assert agent_needs_desktop("desktop") and not agent_needs_desktop("da-agent")


def desktop_task_for(box: BwrapSandbox):  # type: ignore[no-untyped-def]
    return box.task
