"""The screens of a desktop sample's page: each screen its model saw, put before the reply it led to, with
the clicks of that reply marked on it; the set-of-mark image switchable to the raw screen; every screen
zoomable. The harness's own screens (after the setup, before the checks) stay where they were taken.

Where a trajectory keeps its screens is read in one place, `screens_in_order`, which knows both forms:
step notes with a small JPEG (`screenshot_jpeg`, and `screenshot_raw_jpeg` for set-of-mark), recorded just
after the model call that saw them; and images the model calls name by attachment (`attachment:step-3.png`,
a file of the run's `attachments/<id>/`), in the order they were sent, with or without such a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from daharness.core.desktop import SCREEN_HEIGHT, SCREEN_WIDTH
from daharness.core.submission import ActionEvent, ModelCall, Note

ATTACHMENT = "attachment:"  # how a model call's message names an image kept beside the trajectory
ZOOMS = (1, 2, 4)
# pyautogui calls that put the pointer somewhere, with their x and y as the first two arguments
_POINTER_CALL = re.compile(
    r"pyautogui\.(click|doubleClick|tripleClick|rightClick|middleClick|mouseDown|mouseUp|moveTo|dragTo)"
    r"\(\s*(?:x\s*=\s*)?(-?\d+(?:\.\d+)?)\s*,\s*(?:y\s*=\s*)?(-?\d+(?:\.\d+)?)"
)
_POINTER_TYPES = {"CLICK", "DOUBLE_CLICK", "RIGHT_CLICK", "MOVE_TO", "DRAG_TO", "MOUSE_DOWN", "MOUSE_UP"}


@dataclass
class Point:
    x: float
    y: float
    what: str  # the call or action that put the pointer there


@dataclass
class Screen:
    label: str
    image: str | None  # URL of the image the model saw (set-of-mark: with its boxes); None: a table only
    raw: str | None = None  # set-of-mark: the screen without the boxes
    table: str | None = None  # the accessibility table sent with it
    points: list[Point] = field(default_factory=list)  # where the reply after it clicked


def _jpeg(data: Any) -> str | None:
    return f"data:image/jpeg;base64,{data}" if isinstance(data, str) and data else None


def _screen_of_note(note: Note, attachment_url: Callable[[str], str | None]) -> Screen | None:
    data = note.data
    attached = attachment_url(str(data["attachment"])) if isinstance(data.get("attachment"), str) else None
    image = attached or _jpeg(data.get("screenshot_jpeg"))
    table = data.get("a11y_tree") if isinstance(data.get("a11y_tree"), str) else None
    if image is None and table is None:
        return None
    return Screen(note.text, image, _jpeg(data.get("screenshot_raw_jpeg")), table)


def _attachment_seen(call: ModelCall) -> str | None:
    """The last image a model call was sent by attachment (the screen it answered), by file name."""
    seen = None
    for message in call.messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            url = (part.get("image_url") or {}).get("url") if isinstance(part, dict) else None
            if isinstance(url, str) and url.startswith(ATTACHMENT):
                seen = url.removeprefix(ATTACHMENT)
    return seen


def screens_in_order(steps: list[Any], attachment_url: Callable[[str], str | None]) -> list[Any]:
    """The trajectory's events with its screens as `Screen`s: each screen a model saw just before that
    model's call, with the points the actions after the call clicked; the harness's screens (notes without
    a step number) where they are, with the points of the actions after them (a reference solution's). `attachment_url(name)` is the page's URL of an attached image (None
    when the run has no such file)."""
    calls = [step for step in steps if isinstance(step, ModelCall)]
    seen_by_call = {id(call): _attachment_seen(call) for call in calls}
    by_attachment = any(seen_by_call.values())  # the calls name what they saw
    screens = {
        id(s): found for s in steps if isinstance(s, Note) and (found := _screen_of_note(s, attachment_url))
    }
    before: dict[int, Screen] = {}  # id of a model call -> the screen it saw
    moved: set[int] = set()
    for step in steps:
        number = step.data.get("step") if id(step) in screens else None
        if not isinstance(number, int):
            continue  # not a screen, or the harness's own
        if by_attachment:  # the first call sent this note's image
            name = step.data.get("attachment")
            call = next((c for c in calls if name and seen_by_call[id(c)] == name), None)
        else:  # one note per step, recorded after the step's call: that call saw it
            call = calls[number - 1] if 0 < number <= len(calls) else None
        if call is not None and id(call) not in before:
            before[id(call)] = screens[id(step)]
            moved.add(id(step))  # shown before its call, not here
    sent = set()
    for call in calls:  # an image sent by attachment without a note of its own
        seen = seen_by_call[id(call)]
        if seen and id(call) not in before and seen not in sent and (url := attachment_url(seen)):
            before[id(call)] = Screen(f"screen sent as {seen}", url)
        sent.add(seen)
    ordered: list[Any] = []
    shown: Screen | None = None
    for step in steps:
        if id(step) in moved:
            continue
        if id(step) in screens:  # a screen shown where it was taken: the actions after it acted on it
            shown = screens[id(step)]
            ordered.append(shown)
            continue
        if isinstance(step, ModelCall):
            shown = before.get(id(step))
            ordered += [shown] if shown else []
        elif isinstance(step, ActionEvent) and shown is not None:
            shown.points += pointer_points(step)
        ordered.append(step)
    return ordered


def pointer_points(event: ActionEvent) -> list[Point]:
    """Where a desktop action put the pointer: the x, y of a JSON action, or of each pyautogui call."""
    action = event.args.get("action") if event.kind == "desktop" else None
    if isinstance(action, dict):
        values = action.get("parameters") if isinstance(action.get("parameters"), dict) else action
        x, y = values.get("x"), values.get("y")
        if (
            action.get("action_type") in _POINTER_TYPES
            and isinstance(x, int | float)
            and isinstance(y, int | float)
        ):
            return [Point(float(x), float(y), str(action["action_type"]))]
        return []
    if isinstance(action, str):
        return [
            Point(float(found[2]), float(found[3]), f"pyautogui.{found[1]}")
            for found in _POINTER_CALL.finditer(action)
        ]
    return []


def screen_html(screen: Screen) -> str:
    """A screen with its switch to the raw screen (set-of-mark), its zoom and its clicks marked."""
    views = (
        '<button type="button" data-show="image" aria-pressed="true">as the model saw it</button>'
        '<button type="button" data-show="raw" aria-pressed="false">raw screen</button>'
        if screen.raw
        else ""
    )
    zooms = "".join(
        f'<button type="button" data-zoom="{z}" aria-pressed="{str(z == 1).lower()}">{z}×</button>'
        for z in ZOOMS
    )
    marks = "".join(
        f'<span class="click" style="left:{100 * p.x / SCREEN_WIDTH:.3f}%;top:{100 * p.y / SCREEN_HEIGHT:.3f}%" '
        f'data-x="{p.x:g}" data-y="{p.y:g}" title="{escape(p.what)} at ({p.x:g}, {p.y:g})">{n}</span>'
        for n, p in enumerate(screen.points, 1)
    )
    raw = f' data-raw="{escape(screen.raw)}"' if screen.raw else ""
    table = (
        f"<details><summary>accessibility tree</summary><pre>{escape(screen.table)}</pre></details>"
        if screen.table
        else ""
    )
    clicked = f' <span class="meta">· clicks marked: {len(screen.points)}</span>' if screen.points else ""
    picture = (
        f'<div class="screen-tools">{views}<span class="zoom">zoom {zooms}</span></div>'
        f'<div class="screen-frame"><div class="screen-box">'
        f'<img class="screen-image" alt="{escape(screen.label)}" src="{escape(screen.image)}" '
        f'data-image="{escape(screen.image)}"{raw}>{marks}</div></div>'
        if screen.image
        else ""
    )
    return f'<div class="step screen" data-kind="screen"><h3>{escape(screen.label)}{clicked}</h3>{picture}{table}</div>'


SCREEN_CSS = """
.step.screen{border-left:4px solid #00897b} .screen-tools{display:flex;gap:.3rem;align-items:center;margin:.3rem 0;font-size:.8rem}
.screen-tools button{font-size:.8rem} .screen-tools button[aria-pressed=true]{background:#00897b;color:#fff}
.screen-tools .zoom{margin-left:auto} .screen-frame{overflow:auto;max-height:80vh;border:1px solid #ddd}
.screen-box{position:relative;width:100%} .screen-box img{width:100%;display:block}
.screen-box .click{position:absolute;transform:translate(-50%,-50%);width:22px;height:22px;border-radius:50%;
  border:3px solid #2962ff;background:rgba(41,98,255,.35);color:#fff;font:bold 11px/22px sans-serif;text-align:center;
  text-shadow:0 0 2px #000;box-sizing:content-box}
"""

# a screen's buttons: the image the model saw or the raw screen (set-of-mark), and the zoom
SCREEN_SCRIPT = """
document.addEventListener('click', event => {
  const button = event.target.closest('.screen-tools button');
  if (!button) return;
  const screen = button.closest('.screen');
  const image = screen.querySelector('img.screen-image');
  if (button.dataset.zoom) screen.querySelector('.screen-box').style.width = 100 * button.dataset.zoom + '%';
  if (button.dataset.show) image.src = image.dataset[button.dataset.show];
  const kind = button.dataset.zoom ? 'zoom' : 'show';
  screen.querySelectorAll(`button[data-${kind}]`).forEach(b => b.setAttribute('aria-pressed', String(b === button)));
});
"""
