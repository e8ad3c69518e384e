"""The paper's JSON action space and table, without a screen: what is accepted, what each action does in
pyautogui, and which elements become rows of the table."""

from __future__ import annotations

import pytest

from daharness.core.desktop import ScreenElement
from daharness.sandbox.desktop.actions import is_final, parse_screen_action
from daharness.sandbox.desktop.table import keeps, linearize


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"action_type": "MOVE_TO", "x": 56.1, "y": 65}, "pyautogui.moveTo(56.1, 65)"),
        ({"action_type": "CLICK"}, "pyautogui.click(button='left', clicks=1)"),
        ({"action_type": "CLICK", "parameters": {"x": 1, "y": 2, "button": "right", "num_clicks": 2}},
         "pyautogui.click(x=1, y=2, button='right', clicks=2)"),
        ({"action_type": "RIGHT_CLICK", "x": 5, "y": 6}, "pyautogui.rightClick(x=5, y=6)"),
        ({"action_type": "DOUBLE_CLICK"}, "pyautogui.doubleClick()"),
        ({"action_type": "DRAG", "x": 500, "y": 200},
         "pyautogui.dragTo(500, 200, duration=0.5, button='left', mouseDownUp=True)"),
        ({"action_type": "SCROLL", "clicks": -3}, "pyautogui.scroll(-3)"),
        ({"action_type": "TYPING", "text": "it's\n"}, 'pyautogui.typewrite("it\'s\\n")'),
        ({"action_type": "KEY", "key": "Enter"}, "pyautogui.press('enter')"),
        ({"action_type": "HOTKEY", "keys": ["ctrl", "S"]}, "pyautogui.hotkey('ctrl', 's')"),
        ({"action_type": "wait"}, "time.sleep(1)"),
        ("DONE", ""),
    ],
)  # fmt: skip
def test_each_action_is_the_pyautogui_call_it_names(action: object, code: str) -> None:
    assert parse_screen_action(action).pyautogui() == code


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"action_type": "CLICK", "x": 5}, "CLICK: give both x and y, or neither"),
        ({"action_type": "CLICK", "x": 1921, "y": 0}, "CLICK: field 'x': Input should be less than or equal to 1920"),
        ({"action_type": "PRESS", "key": "nope"}, "PRESS: invalid keyboard key 'nope'"),
        ({"action_type": "HOTKEY", "keys": []}, "HOTKEY: field 'keys': List should have at least 1 item"),
        ({"action_type": "TYPING"}, "TYPING: field 'text': Field required"),
        ({"action_type": "CLICK", "x": 1, "y": 1, "speed": 3}, "CLICK: field 'speed': Extra inputs are not permitted"),
        ({"action_type": "JUMP"}, "JUMP: Input tag 'JUMP' found"),
        (["CLICK"], "an action is a JSON object with an action_type, not list"),
    ],
)  # fmt: skip
def test_an_invalid_action_is_one_line_naming_the_problem(action: object, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_screen_action(action)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_done_and_fail_end_the_episode_and_nothing_else_does() -> None:
    assert is_final(parse_screen_action("DONE")) and is_final(parse_screen_action({"action_type": "FAIL"}))
    assert not is_final(parse_screen_action("WAIT"))


def _element(**fields: object) -> ScreenElement:
    base = {"tag": "push-button", "name": "OK", "x": 10, "y": 20, "width": 30, "height": 40,
            "states": ["enabled", "showing", "visible"]}  # fmt: skip
    return ScreenElement.model_validate({**base, **fields})


def test_the_table_keeps_what_a_user_acts_on_or_reads_where_it_is_shown() -> None:
    assert keeps(_element())
    assert keeps(_element(tag="table-cell", name="A1"))  # the official tags, exactly or by their ending
    assert keeps(_element(tag="check-menu-item"))
    assert not keeps(_element(tag="filler"))  # layout, not content
    assert not keeps(_element(states=["enabled", "visible"]))  # not showing
    assert not keeps(_element(states=["showing", "visible"]))  # disabled, not editable either
    assert keeps(_element(tag="entry", states=["editable", "showing", "visible"]))
    assert not keeps(_element(name="", text=""))  # nothing to read
    # the official filter: whitespace is a text, an image needs none, a position past the screen counts
    assert keeps(_element(name="", text="  ")) and keeps(_element(name="", image=True))
    assert not keeps(_element(x=-1, y=-1)) and not keeps(_element(width=0))  # off screen, no size
    assert keeps(_element(x=1920))


def test_the_table_is_the_papers_with_an_index_for_set_of_mark() -> None:
    rows = [
        _element(),
        _element(tag="entry", name="Quantity", text="42 boxes\n", x=1, y=2, width=3, height=4),
    ]
    assert linearize(rows) == (
        "TAG\tNAME\tPOSITION (top-left x & y)\tSIZE (width & height)\tTEXT\n"
        "push-button\tOK\t(10, 20)\t(30, 40)\t''\n"
        "entry\tQuantity\t(1, 2)\t(3, 4)\t'42 boxes'"
    )
    assert linearize(rows, index=True).splitlines()[0].startswith("INDEX\tTAG")
    assert linearize(rows, index=True).splitlines()[2].startswith("2\tentry\tQuantity")
    assert _element().center == (25, 40)


def test_a_desktop_step_note_shows_its_screenshot_and_table_in_the_viewer() -> None:
    import base64
    import io

    from PIL import Image

    from daharness.core.desktop import DesktopView
    from daharness.families.workflow.baseline.agent import step_note
    from daharness.view.pages import _step
    from daharness.view.screens import screens_in_order

    png = io.BytesIO()
    Image.new("RGB", (1920, 1080), (10, 120, 200)).save(png, "PNG")
    view = DesktopView(
        observation="screenshot_a11y_tree", image=png.getvalue(), table="TAG\tNAME\npush-button\tSave"
    )
    note = step_note(3, view)
    # the page turns step notes into screens (no attachment file here: the note's own JPEG is shown)
    (screen,) = screens_in_order([note], lambda name: None)
    html = _step(None, None, 7, screen, False)  # type: ignore[arg-type]
    shown = html.split('src="data:image/jpeg;base64,')[1].split('"')[0]
    image = Image.open(io.BytesIO(base64.b64decode(shown)))
    assert (image.format, image.size) == ("JPEG", (960, 540))
    assert image.getpixel((480, 270))[2] > 150  # the screen's blue, compressed
    assert "<summary>accessibility tree</summary><pre>TAG\tNAME\npush-button\tSave</pre>" in html
    assert 'alt="screen at step 3"' in html
