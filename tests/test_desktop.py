"""The desktop in the real sandbox: what the agent opens is on the screenshot, the accessibility tree
lists real elements of a page and of LibreOffice, and actions on the screen change what they read back."""

from __future__ import annotations

import io
from pathlib import Path

import openpyxl
import pytest
from desktop_helpers import desktop_box, desktop_task, needs_desktop, pixel, serve, wait_for_window
from helpers import wait_until

from daharness.core.backend import require_desktop
from daharness.core.desktop import DesktopUnavailable
from daharness.core.limits import Limits
from daharness.sandbox import BwrapSandbox
from daharness.sandbox.desktop import apps

pytestmark = needs_desktop

RED = (200, 30, 40)
# a window of one colour, placed by the agent itself (override-redirect: the window manager leaves it be)
OPEN_WINDOW = """
from Xlib import X, display
screen_connection = display.Display()
screen = screen_connection.screen()
window = screen.root.create_window(300, 250, 400, 200, 0, screen.root_depth, X.InputOutput,
                                   X.CopyFromParent, background_pixel=0xC81E28, override_redirect=True)
window.map()
screen_connection.sync()
"""
ORDERS = """<html><head><title>orders</title></head><body>
<h1>Orders</h1>
<button style="position:absolute;left:600px;top:300px;width:200px;height:60px"
        onclick="count++; document.title = 'clicked ' + count">Add order</button>
<input aria-label="Quantity" style="position:absolute;left:600px;top:500px;width:300px">
<script>var count = 0;</script>
</body></html>"""


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> BwrapSandbox:
    with desktop_box(desktop_task(tmp_path_factory.mktemp("desktop"))) as sandbox:
        yield sandbox


def test_a_window_the_agent_opens_is_on_the_screenshot(box: BwrapSandbox) -> None:
    before = box.desktop.observe("screenshot")
    assert before.image is not None and before.image.startswith(b"\x89PNG")
    assert pixel(before.image, 500, 350) != RED
    assert box.python(OPEN_WINDOW).ok
    shots: list[bytes] = []

    def red_window_shown() -> bool:
        shots.append(box.desktop.observe("screenshot").image or b"")
        return pixel(shots[-1], 500, 350) == RED

    wait_until(red_window_shown, 30, what="the agent's red window on the screenshot")
    assert pixel(shots[-1], 300, 250) == RED and pixel(shots[-1], 699, 449) == RED  # its corners
    assert pixel(shots[-1], 299, 350) != RED and pixel(shots[-1], 700, 350) != RED  # and no further
    assert box.python("window.destroy(); screen_connection.sync()").ok


def test_page_elements_are_listed_where_they_are_and_clicks_and_typing_reach_the_page(
    box: BwrapSandbox,
) -> None:
    base = serve(box, {"orders.html": ORDERS}, 8000)
    tab = box.desktop.open_url(f"{base}/orders.html")
    assert tab["title"] == "orders" and tab["active"]
    view = box.desktop.observe("a11y_tree")
    assert view.table is not None and view.table.splitlines()[0].startswith("TAG\tNAME\tPOSITION")
    button = next(e for e in view.elements if e.tag == "push-button" and e.name == "Add order")
    assert (button.width, button.height) == (200, 60)
    assert f"push-button\tAdd order\t({button.x}, {button.y})\t(200, 60)\t''" in view.table
    clicked = box.desktop.act({"action_type": "CLICK", "x": button.center[0], "y": button.center[1]})
    assert clicked.ok and clicked.kind == "pyautogui"
    assert box.desktop.act({"action_type": "DOUBLE_CLICK", "x": button.center[0], "y": button.center[1]}).ok
    titles: list[list[str]] = []

    def counted_three() -> bool:  # the page handles the clicks after the actions return
        titles.append([t["title"] for t in box.desktop.tabs() if t["active"]])
        return titles[-1] == ["clicked 3"]  # one click, then a double click: the page counted three

    try:
        wait_until(counted_three, 30, what="the page counting three clicks")
    except AssertionError as exc:  # what the page showed instead says which click went astray
        raise AssertionError(
            f"{exc}; the active tabs' titles seen: {sorted(set(map(tuple, titles)))}"
        ) from None
    assert all(seen in (["orders"], ["clicked 1"], ["clicked 2"], ["clicked 3"]) for seen in titles), titles
    entry = next(e for e in view.elements if e.tag == "entry" and e.name == "Quantity")
    assert box.desktop.act({"action_type": "CLICK", "x": entry.center[0], "y": entry.center[1]}).ok
    assert box.desktop.act({"action_type": "TYPING", "text": "42 boxes"}).ok
    typed = box.desktop.observe("a11y_tree")
    assert "entry\tQuantity\t" in typed.table and "'42 boxes'" in typed.table  # type: ignore[operator]
    box.desktop.act("pyautogui.hotkey('ctrl', 'a'); pyautogui.press('backspace')")
    cleared = next(e for e in box.desktop.observe("a11y_tree").elements if e.tag == "entry")
    assert cleared.text == ""


def test_set_of_mark_numbers_boxes_as_the_table_numbers_rows(box: BwrapSandbox) -> None:
    base = serve(box, {"marks.html": ORDERS.replace("<title>orders", "<title>marks")}, 8001)
    box.desktop.open_url(f"{base}/marks.html")
    plain = box.desktop.observe("screenshot_a11y_tree")
    marked = box.desktop.observe("som")
    assert marked.table is not None and marked.table.splitlines()[0].startswith("INDEX\tTAG\tNAME")
    rows = marked.table.splitlines()[1:]
    assert len(rows) == len(marked.elements) and [r.split("\t")[0] for r in rows] == [
        str(n) for n in range(1, len(rows) + 1)
    ]
    number = next(i for i, e in enumerate(marked.elements, 1) if e.tag == "push-button")
    assert rows[number - 1].split("\t")[1:3] == ["push-button", "Add order"]
    button = marked.elements[number - 1]
    assert pixel(marked.image, button.x + button.width // 2, button.y) == (255, 0, 0)  # type: ignore[arg-type]
    assert pixel(plain.image, button.x + button.width // 2, button.y) != (255, 0, 0)  # type: ignore[arg-type]


def test_pyautogui_code_runs_on_the_screen_one_action_at_a_time(box: BwrapSandbox) -> None:
    moved = box.desktop.act("pyautogui.moveTo(123, 456)\nkept = 1\nprint(pyautogui.position())")
    assert moved.stdout == "Point(x=123, y=456)\n"
    assert box.desktop.act("print(kept)").error.name == "NameError"  # type: ignore[union-attr]
    invalid = box.desktop.act({"action_type": "PRESS", "key": "no-such-key"})
    assert invalid.error is not None and invalid.error.name == "InvalidAction"
    assert "invalid keyboard key 'no-such-key'" in invalid.error.value
    assert box.desktop.act({"action_type": "DONE"}).ok
    kinds = [(event.kind, event.args.get("action", {}).get("action_type")) for event in box.history[-4:]]
    assert kinds == [("pyautogui", None), ("pyautogui", None), ("desktop", "PRESS"), ("desktop", "DONE")]
    assert box.desktop.act({"action_type": "MOVE_TO", "x": 10, "y": 20}).ok
    assert box.desktop.act("print(pyautogui.position())").stdout == "Point(x=10, y=20)\n"


def test_a_libreoffice_cell_is_in_the_tree_and_typing_into_it_is_saved(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.append(["region", "sales"])
    book.active.append(["north", 120])
    saved = io.BytesIO()
    book.save(saved)
    with desktop_box(desktop_task(tmp_path, {"sales.xlsx": saved.getvalue()})) as box:
        box.desktop.start_program(apps.calc("sales.xlsx"), "calc")
        wait_for_window(box, "sales.xlsx")
        cells: dict[str, str] = {}

        def cells_listed() -> bool:
            view = box.desktop.observe("a11y_tree")
            cells.update({e.name: e.text for e in view.elements if e.tag == "table-cell"})
            return "B2" in cells

        wait_until(cells_listed, 120, what="the sheet's cells in the accessibility tree")
        assert cells["A1"] == "region" and cells["B2"] == "120" and cells["C2"] == ""
        # LibreOffice 7.4 places its cells' boxes a menu bar too high, so the cell is reached through
        # the Name Box (Ctrl+Shift+F5), as a keyboard user would
        for action in (
            {"action_type": "HOTKEY", "keys": ["ctrl", "shift", "f5"]},
            {"action_type": "TYPING", "text": "C2\n"},
            {"action_type": "TYPING", "text": "99\n"},
            {"action_type": "HOTKEY", "keys": ["ctrl", "s"]},
        ):
            assert box.desktop.act(action).ok
        wait_for_window(box, "Confirm File Format")
        assert box.desktop.act({"action_type": "PRESS", "key": "enter"}).ok  # keep the xlsx format

        def saved_with_99() -> bool:
            read = box.python(
                "import openpyxl\nprint(openpyxl.load_workbook('sales.xlsx').active['C2'].value)"
            )
            return read.stdout == "99\n"

        wait_until(saved_with_99, 60, what="LibreOffice saving C2 = 99")

        def listed_with_99() -> bool:
            view = box.desktop.observe("a11y_tree")
            return any(e.name == "C2" and e.text == "99" for e in view.elements)

        wait_until(listed_with_99, 60, what="the tree showing C2 = 99")


def test_a_sandbox_without_a_desktop_has_none(tmp_path: Path) -> None:
    task = desktop_task(tmp_path).model_copy(update={"desktop": False})
    with BwrapSandbox(task, Limits(memory_mb=1024)) as plain:
        assert plain.desktop is None
        assert plain.python("import os\nprint(os.environ.get('DISPLAY'))").stdout == "None\n"
        with pytest.raises(DesktopUnavailable, match="bwrap sandbox of this sample has no desktop"):
            require_desktop(plain)


def test_libreoffice_is_walked_again_only_after_it_changed(tmp_path: Path) -> None:
    """The tree is read once per change: on a screen where nothing moves, an observation walks no
    application (it repeats the last walk), and typing into a cell makes the next one read the new text."""
    book = openpyxl.Workbook()
    book.active.append(["region", "sales"])
    saved = io.BytesIO()
    book.save(saved)
    with desktop_box(desktop_task(tmp_path, {"sales.xlsx": saved.getvalue()})) as box:
        box.desktop.start_program(apps.calc("sales.xlsx"), "calc")
        wait_for_window(box, "sales.xlsx")
        wait_until(box.desktop.cells_shown, 120, what="the sheet's cells drawn")

        def observed() -> tuple[int, dict[str, str]]:
            answer = box._require_desktop().request("observe", elements=True)  # with the controller's timings
            cells = {e["name"]: e["text"] for e in answer["elements"] if e["tag"] == "table-cell"}
            return answer["timings"]["applications_walked"], cells

        wait_until(lambda: observed()[0] == 0, 60, what="an observation that walks no application")
        walked, cells = observed()
        assert walked == 0 and cells["A1"] == "region" and cells["B1"] == "sales"
        fresh = box._require_desktop().request("observe", elements=True, fresh=True)
        assert fresh["timings"]["applications_walked"] >= 1
        for action in (
            {"action_type": "HOTKEY", "keys": ["ctrl", "shift", "f5"]},  # the Name Box
            {"action_type": "TYPING", "text": "C1\n"},
            {"action_type": "TYPING", "text": "77\n"},
        ):
            assert box.desktop.act(action).ok
        wait_until(lambda: observed()[1].get("C1") == "77", 60, what="the tree showing C1 = 77")


def test_a_page_that_changes_on_its_own_is_read_again(box: BwrapSandbox) -> None:
    """A page's elements are read once per change: what its own script changes later (no input, no
    event of the agent's) shows in the next observation, as does a heading the page sets back."""
    page = """<html><head><title>later</title></head><body><h1 id="h">now</h1><script>
    setTimeout(() => { document.getElementById('h').textContent = 'later'; }, 1500);
    </script></body></html>"""
    base = serve(box, {"later.html": page}, 8001)
    box.desktop.open_url(f"{base}/later.html")

    def heading() -> str:
        found = [e for e in box.desktop.observe("a11y_tree").elements if e.tag == "heading"]
        return found[0].name if found else ""

    assert heading() in ("now", "later")
    wait_until(lambda: heading() == "later", 30, what="the heading the page's script changed")
    tab = next(t for t in box.desktop.tabs() if t["active"])
    box.desktop.close_tab(tab["id"])
