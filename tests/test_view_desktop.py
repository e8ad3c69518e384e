"""A desktop sample's page in Chromium, from real runs on the real desktop (the built-in Spider2-V style
task that edits Longley.xlsx in LibreOffice): the `desktop` agent in set-of-mark with a scripted model
that clicks, types two of the column's sixteen values (one wrong) and stops, and the reference solution.

The page shows each screen before the reply it led to, with the reply's click marked on it; numbers only
the agent's steps; switches the set-of-mark image to the raw screen and zooms it; shows the harness's
screens after the setup and before the checks (the reference records none of its own); diffs the
workbook against the gold one cell by cell; folds the desktop's own files away. Without a browser: the
screens of a trajectory that names its images by attachment (the agent records them so) are read too."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from desktop_helpers import DESKTOP_LIMITS, needs_desktop
from fake_openai import FakeOpenAI
from PIL import Image
from test_view import browser  # noqa: F401  (the Chromium fixture)
from test_view_more import _serve, _stop

from daharness.agents import AgentSettings, SampleLimits, make_agent
from daharness.core.observation import Observation
from daharness.core.submission import ActionEvent, ModelCall, Note
from daharness.models import ModelSettings
from daharness.runs.pipeline import SandboxSettings
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

TASK = "gui-longley-gnp-per-person"
AFTER_SETUP, BEFORE_CHECKS = "screen after the setup", "screen the agent left, before the checks"
CLICK = (300, 300)  # a cell of the sheet
REPLIES = [
    f"I go to the first empty column.\n```python\npyautogui.click({CLICK[0]}, {CLICK[1]})\n"
    "pyautogui.hotkey('ctrl', 'home')\npyautogui.hotkey('ctrl', 'right')\npyautogui.press('right')\n```",
    "I type the header and two rows.\n```python\npyautogui.typewrite('GNP per person\\n=C2/F2\\n=C3*2\\n')\n```",
    "Done.\n```DONE```",
]


def _scripted(request: dict) -> str:
    return REPLIES[min(sum(m["role"] == "assistant" for m in request["messages"]), len(REPLIES) - 1)]


def _desktop_run(out: Path) -> None:
    with FakeOpenAI() as server:
        server.responder = _scripted
        settings = AgentSettings(
            model=ModelSettings(model="fake-vl", base_url=server.base_url), cache_mode="off",
            limits=SampleLimits(max_steps=5),
        )  # fmt: skip
        make(out, make_agent("desktop", settings, {"observation": "som"}))


def make(out: Path, agent: object) -> None:
    settings = SandboxSettings(limits=DESKTOP_LIMITS, desktop=True)
    outcome = run_suite(load_suite("workflow"), agent, out, ids=[TASK], sandbox=settings)  # type: ignore[arg-type]
    assert outcome.errors == 0


def desktop_runs(folder: Path) -> list[Path]:
    """The desktop agent's run and the reference's (one after the other: each starts a desktop)."""
    runs = [folder / "desktop", folder / "reference"]
    _desktop_run(runs[0])
    make(runs[1], make_agent("reference"))
    return runs


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = _serve(*desktop_runs(tmp_path_factory.mktemp("desktop")))
    yield url
    _stop(process)


def _screens(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all("#steps .step", "steps => steps.map(s => s.dataset.kind)")


@needs_desktop
def test_a_desktop_sample_shows_each_screen_before_its_reply(browser, served: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{served}runs/0/samples/{TASK}.html")
    kinds = _screens(page)
    agent = ["screen", "model", "action"] * 3  # the last action is the reply's DONE
    assert kinds[: 2 + len(agent)] == ["screen", *agent, "screen"] and set(kinds[2 + len(agent) :]) <= {
        "note"
    }
    labels = page.locator("#steps .step.screen h3").all_inner_texts()
    assert [label.split(" ·")[0] for label in labels] == [
        AFTER_SETUP, "screen at step 1", "screen at step 2", "screen at step 3", BEFORE_CHECKS,
    ]  # fmt: skip
    # only the agent's steps are numbered, as many as its record says
    assert "(3 steps)" in page.inner_text("h2 >> text=Trajectory")
    numbered = [t for t in page.locator("#steps .step h3").all_inner_texts() if t[:1].isdigit()]
    assert [t.split(" ")[0] for t in numbered] == ["1.", "2.", "3."]
    assert all("model reply" in t for t in numbered)
    # the first reply's click, marked where it was on the screen the model saw
    first = page.locator("#steps .step.screen").nth(1)
    mark = first.locator(".click")
    assert mark.count() == 1 and (mark.get_attribute("data-x"), mark.get_attribute("data-y")) == (
        "300",
        "300",
    )
    image = first.locator("img.screen-image")
    image.scroll_into_view_if_needed()
    image.evaluate("img => img.decode()")
    box, spot = image.bounding_box(), mark.bounding_box()
    centre = (spot["x"] + spot["width"] / 2 - box["x"], spot["y"] + spot["height"] / 2 - box["y"])
    assert abs(centre[0] / box["width"] - CLICK[0] / 1920) < 0.01
    assert abs(centre[1] / box["height"] - CLICK[1] / 1080) < 0.01
    assert page.locator("#steps .step.screen").nth(2).locator(".click").count() == 0  # typing clicks nowhere
    # set-of-mark: the image with its boxes (once the accessibility tree has elements to mark), switched to
    # the raw screen and back; zoomed
    first = page.locator("#steps .step.screen:has(button[data-show=raw])").first
    image = first.locator("img.screen-image")
    marked = image.get_attribute("src")
    first.locator("button[data-show=raw]").click()
    raw = image.get_attribute("src")
    assert raw != marked and raw == image.get_attribute("data-raw")
    image.evaluate("img => img.decode()")
    assert image.evaluate("img => img.naturalWidth") == 960
    first.locator("button[data-show=image]").click()
    assert image.get_attribute("src") == marked
    width = image.bounding_box()["width"]
    first.locator("button[data-zoom='2']").click()
    assert abs(image.bounding_box()["width"] - 2 * width) < 2
    first.locator("button[data-zoom='1']").click()
    # the workbook against the gold, cell by cell: row 3 has a wrong value, rows 4-17 none
    sheet = page.locator(".sheet-diff[data-file='Longley.xlsx'][data-sheet='Economy']")
    assert sheet.locator("h3 .meta").inner_text() == "15 cells differ"
    assert sheet.locator("td.differs ins").all_inner_texts()[0] == "518852"
    assert sheet.locator("td.differs del").all_inner_texts()[0].startswith("2.388")
    assert sheet.locator("td.differs ins.empty").count() == 14  # the rows the agent left empty
    # the one file that matters first; the desktop's own (.cache/fontconfig...) folded below
    assert page.locator("#files > li > a").all_inner_texts() == ["Longley.xlsx"]
    folded = page.locator("details.hidden-files")
    assert folded.get_attribute("open") is None and ".cache" in folded.locator("summary").inner_text()
    page.close()


@needs_desktop
def test_a_reference_run_shows_the_first_and_last_screen(browser, served: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page = browser.new_page()
    page.goto(f"{served}runs/1/samples/{TASK}.html")
    kinds = _screens(page)
    assert kinds[0] == "screen" and kinds[1:11] == ["action"] * 10 and kinds[11] == "screen"
    assert page.locator("#steps .step.screen h3").all_inner_texts() == [AFTER_SETUP, BEFORE_CHECKS]
    for index in range(2):
        image = page.locator("#steps img.screen-image").nth(index)
        image.scroll_into_view_if_needed()
        image.evaluate("img => img.decode()")
        assert image.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [960, 540]
    assert "(1 step, 10 actions)" in page.inner_text("h2 >> text=Trajectory")
    page.close()


# ---- without a browser ------------------------------------------------------------------------------


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(out, "PNG")
    return out.getvalue()


def _call(*images: str) -> ModelCall:
    parts = [{"type": "image_url", "image_url": {"url": f"attachment:{name}"}} for name in images]
    return ModelCall(
        messages=[{"role": "system", "content": "x"}, {"role": "user", "content": parts}], reply="r"
    )


def test_screens_named_by_attachment_come_before_the_call_that_was_sent_them() -> None:
    """The form the desktop agent records: a note per new screen (its JPEG, and its file by attachment)
    before the call, and the calls' messages naming the images sent, in order; a reply without an action
    is answered with the same screen, which is not shown twice."""
    from daharness.view.screens import Screen, screens_in_order

    jpeg = base64.b64encode(_png()).decode()
    note = lambda step: Note(  # noqa: E731
        text=f"screen at step {step}",
        data={"step": step, "screenshot_jpeg": jpeg, "attachment": f"step-{step}.png"},
    )
    click = ActionEvent(kind="desktop", args={"action": {"action_type": "CLICK", "x": 960, "y": 540}},
                        observation=Observation(kind="desktop"))  # fmt: skip
    steps = [
        note(1),
        _call("step-1.png"),
        click,
        _call("step-1.png"),
        note(2),
        _call("step-1.png", "step-2.png"),
    ]
    files = {"step-1.png", "step-2.png"}
    events = screens_in_order(steps, lambda name: f"../attachments/s/{name}" if name in files else None)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Screen", "ModelCall", "ActionEvent", "ModelCall", "Screen", "ModelCall"]
    first, second = events[0], events[4]
    assert isinstance(first, Screen) and isinstance(second, Screen)
    assert (first.image, second.image) == ("../attachments/s/step-1.png", "../attachments/s/step-2.png")
    assert [(p.x, p.y) for p in first.points] == [(960.0, 540.0)] and second.points == []
    # a missing attachment: the note's own JPEG is shown
    events = screens_in_order(steps, lambda name: None)
    assert events[0].image.startswith("data:image/jpeg;base64,")  # type: ignore[union-attr]


def test_points_of_pyautogui_code_and_json_actions() -> None:
    from daharness.view.screens import pointer_points

    def points(action: object) -> list[tuple[float, float, str]]:
        event = ActionEvent(kind="desktop", args={"action": action}, observation=Observation(kind="desktop"))
        return [(p.x, p.y, p.what) for p in pointer_points(event)]

    code = "pyautogui.moveTo(10, 20)\npyautogui.typewrite('a')\npyautogui.doubleClick(x=30.5, y=40)\nprint(1)"
    assert points(code) == [(10, 20, "pyautogui.moveTo"), (30.5, 40, "pyautogui.doubleClick")]
    assert points({"action_type": "RIGHT_CLICK", "x": 5, "y": 6}) == [(5, 6, "RIGHT_CLICK")]
    assert points({"action_type": "CLICK", "parameters": {"button": "left", "x": 7, "y": 8}}) == [
        (7, 8, "CLICK")
    ]
    assert points({"action_type": "TYPING", "text": "x"}) == [] and points("DONE") == []


def test_step_notes_recorded_after_their_call_are_shown_before_it() -> None:
    """The form desktop runs of daharness before the released agent have: a step's note (its JPEG) just
    after the call that saw it. And a reference solution's clicks are marked on the harness's first screen."""
    from daharness.view.screens import Screen, screens_in_order

    jpeg = base64.b64encode(_png()).decode()
    note = lambda step: Note(text=f"screen at step {step}", data={"step": step, "screenshot_jpeg": jpeg})  # noqa: E731
    click = ActionEvent(kind="desktop", args={"action": "pyautogui.click(100, 200)"},
                        observation=Observation(kind="desktop"))  # fmt: skip
    steps = [_call(), note(1), click, _call(), note(2), Note(text="postconfig")]
    events = screens_in_order(steps, lambda name: None)
    assert [type(e).__name__ for e in events] == [
        "Screen",
        "ModelCall",
        "ActionEvent",
        "Screen",
        "ModelCall",
        "Note",
    ]
    assert [e.label for e in events if isinstance(e, Screen)] == ["screen at step 1", "screen at step 2"]
    assert [(p.x, p.y) for p in events[0].points] == [(100.0, 200.0)]  # type: ignore[union-attr]
    first = Note(text="screen after the setup", data={"screenshot_jpeg": jpeg})
    json_click = ActionEvent(kind="desktop", args={"action": {"action_type": "CLICK", "x": 5, "y": 6}},
                             observation=Observation(kind="desktop"))  # fmt: skip
    events = screens_in_order([first, json_click, json_click], lambda name: None)
    assert isinstance(events[0], Screen) and [(p.x, p.y) for p in events[0].points] == [(5, 6), (5, 6)]
