"""The paper's JSON action space (Spider2-V's computer_13): each action checked, then run on the screen as
pyautogui code in the agent's kernel (`KernelDesktop.act`).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from daharness.core.desktop import SCREEN_HEIGHT, SCREEN_WIDTH

# pyautogui's key names (its KEYBOARD_KEYS), which the paper's PRESS, KEY_DOWN, KEY_UP and HOTKEY take
_KEY_NAMES = """accept add alt altleft altright apps backspace browserback browserfavorites browserforward
    browserhome browserrefresh browsersearch browserstop capslock clear convert ctrl ctrlleft ctrlright
    decimal del delete divide down end enter esc escape execute f1 f2 f3 f4 f5 f6 f7 f8 f9 f10 f11 f12
    f13 f14 f15 f16 f17 f18 f19 f20 f21 f22 f23 f24 final fn hanguel hangul hanja help home insert junja
    kana kanji launchapp1 launchapp2 launchmail launchmediaselect left modechange multiply nexttrack
    nonconvert num0 num1 num2 num3 num4 num5 num6 num7 num8 num9 numlock pagedown pageup pause pgdn
    pgup playpause prevtrack print printscreen prntscrn prtsc prtscr return right scrolllock select
    separator shift shiftleft shiftright sleep stop subtract tab up volumedown volumemute volumeup win
    winleft winright yen command option optionleft optionright"""
KEYBOARD_KEYS = frozenset(
    ["\t", "\n", "\r", " ", *(chr(c) for c in range(0x21, 0x7F) if not chr(c).isupper()), *_KEY_NAMES.split()]
)
X = Annotated[float, Field(ge=0, le=SCREEN_WIDTH)]
Y = Annotated[float, Field(ge=0, le=SCREEN_HEIGHT)]
Button = Literal["left", "right", "middle"]


def _key(value: str) -> str:
    if value.lower() not in KEYBOARD_KEYS:
        raise ValueError(f"invalid keyboard key {value!r}")
    return value.lower() if len(value) > 1 else value


Key = Annotated[str, Field(min_length=1)]


class Action(BaseModel):
    """One action of the space (its subclasses, by `action_type`)."""

    # the actions are built on first use: most runs have no desktop
    model_config = ConfigDict(extra="forbid", defer_build=True)

    def pyautogui(self) -> str:
        """The action as pyautogui code (the sandbox imports pyautogui and time for it)."""
        return ""


class _Point(Action):
    x: X | None = None
    y: Y | None = None

    @model_validator(mode="after")
    def _both_or_neither(self) -> _Point:
        if (self.x is None) != (self.y is None):
            raise ValueError("give both x and y, or neither")
        return self

    def _at(self) -> str:
        return "" if self.x is None else f"x={self.x:g}, y={self.y:g}"


class MoveTo(Action):
    action_type: Literal["MOVE_TO"]
    x: X
    y: Y

    def pyautogui(self) -> str:
        return f"pyautogui.moveTo({self.x:g}, {self.y:g})"


class Click(_Point):
    action_type: Literal["CLICK"]
    button: Button = "left"
    num_clicks: Literal[1, 2, 3] = 1

    def pyautogui(self) -> str:
        where = f"{self._at()}, " if self.x is not None else ""
        return f"pyautogui.click({where}button={self.button!r}, clicks={self.num_clicks})"


class RightClick(_Point):
    action_type: Literal["RIGHT_CLICK"]

    def pyautogui(self) -> str:
        return f"pyautogui.rightClick({self._at()})"


class DoubleClick(_Point):
    action_type: Literal["DOUBLE_CLICK"]

    def pyautogui(self) -> str:
        return f"pyautogui.doubleClick({self._at()})"


class MouseDown(Action):
    action_type: Literal["MOUSE_DOWN"]
    button: Button = "left"

    def pyautogui(self) -> str:
        return f"pyautogui.mouseDown(button={self.button!r})"


class MouseUp(Action):
    action_type: Literal["MOUSE_UP"]
    button: Button = "left"

    def pyautogui(self) -> str:
        return f"pyautogui.mouseUp(button={self.button!r})"


class DragTo(Action):
    action_type: Literal["DRAG_TO"]
    x: X
    y: Y

    def pyautogui(self) -> str:
        return f"pyautogui.dragTo({self.x:g}, {self.y:g}, duration=0.5, button='left', mouseDownUp=True)"


class Scroll(Action):
    action_type: Literal["SCROLL"]
    clicks: int

    def pyautogui(self) -> str:
        return f"pyautogui.scroll({self.clicks})"


class Typing(Action):
    action_type: Literal["TYPING"]
    text: str

    def pyautogui(self) -> str:
        return f"pyautogui.typewrite({self.text!r})"


class _KeyAction(Action):
    key: Key

    @model_validator(mode="after")
    def _known(self) -> _KeyAction:
        self.key = _key(self.key)
        return self


class Press(_KeyAction):
    action_type: Literal["PRESS"]

    def pyautogui(self) -> str:
        return f"pyautogui.press({self.key!r})"


class KeyDown(_KeyAction):
    action_type: Literal["KEY_DOWN"]

    def pyautogui(self) -> str:
        return f"pyautogui.keyDown({self.key!r})"


class KeyUp(_KeyAction):
    action_type: Literal["KEY_UP"]

    def pyautogui(self) -> str:
        return f"pyautogui.keyUp({self.key!r})"


class Hotkey(Action):
    action_type: Literal["HOTKEY"]
    keys: list[Key] = Field(min_length=1)

    @model_validator(mode="after")
    def _known(self) -> Hotkey:
        # a combination names keys, not characters: ["ctrl", "S"] is Ctrl+S, not Ctrl+Shift+S
        self.keys = [_key(key).lower() for key in self.keys]
        return self

    def pyautogui(self) -> str:
        return f"pyautogui.hotkey({', '.join(map(repr, self.keys))})"


class Wait(Action):
    action_type: Literal["WAIT"]
    seconds: float = Field(default=1.0, ge=0, le=60)

    def pyautogui(self) -> str:
        return f"time.sleep({self.seconds:g})"


class Fail(Action):
    action_type: Literal["FAIL"]


class Done(Action):
    action_type: Literal["DONE"]


ScreenAction = Annotated[
    MoveTo
    | Click
    | RightClick
    | DoubleClick
    | MouseDown
    | MouseUp
    | DragTo
    | Scroll
    | Typing
    | Press
    | KeyDown
    | KeyUp
    | Hotkey
    | Wait
    | Fail
    | Done,
    Field(discriminator="action_type"),
]


@functools.cache
def _actions() -> TypeAdapter[Any]:
    """The validator of `ScreenAction`, built on the first JSON action (most runs have none)."""
    return TypeAdapter(ScreenAction)


_ALIASES = {"DRAG": "DRAG_TO", "KEY": "PRESS", "TYPE": "TYPING"}


def parse_screen_action(data: Any) -> Any:
    """A JSON action of the paper's action space (a dict, or the bare words WAIT, FAIL, DONE), checked;
    a ValueError with one line naming the problem otherwise. Parameters may sit beside `action_type`
    or, as in the official examples, under `parameters`."""
    if isinstance(data, str) and data.strip().upper() in ("WAIT", "FAIL", "DONE"):
        data = {"action_type": data.strip().upper()}
    if not isinstance(data, dict):
        raise ValueError(f"an action is a JSON object with an action_type, not {type(data).__name__}")
    flat = {k: v for k, v in data.items() if k != "parameters"}
    if isinstance(data.get("parameters"), dict):
        flat.update(data["parameters"])
    if isinstance(flat.get("action_type"), str):
        kind = flat["action_type"].upper()
        flat["action_type"] = _ALIASES.get(kind, kind)
    try:
        return _actions().validate_python(flat)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = [str(part) for part in first["loc"][1:]]  # the first part is the action type itself
        problem = first["msg"].removeprefix("Value error, ")
        field = f"field {'.'.join(where)!r}: " if where else ""
        raise ValueError(f"{flat.get('action_type', 'action')}: {field}{problem}") from None


def is_final(action: Any) -> bool:
    """DONE and FAIL end the episode; nothing is executed for them."""
    return isinstance(action, Done | Fail)
