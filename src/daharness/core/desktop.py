"""The desktop of a sandbox, as a contract: what an agent sees (`DesktopView`) and what every desktop
offers (`Desktop`). A backend's `desktop` is one of these, or None where there is no screen.

The observations are Spider2-V's (and OSWorld's before it): `screenshot` (the screen as PNG), `a11y_tree`
(the accessibility tree pruned and linearised into the paper's table: TAG, NAME, POSITION (top-left x & y),
SIZE (width & height), TEXT), `screenshot_a11y_tree` (both), and `som` (set-of-mark: the screenshot with a
numbered box on each row of the table, which gains an INDEX column). How the tree is pruned and the table
written, and the paper's JSON action space, belong to the sandbox's desktop (`sandbox/desktop/`).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from daharness.core.observation import Observation

SCREEN_WIDTH = 1920
SCREEN_HEIGHT = 1080
ObservationType = Literal["screenshot", "a11y_tree", "screenshot_a11y_tree", "som"]
OBSERVATION_TYPES: tuple[ObservationType, ...] = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")


KEPT_WIDTH = SCREEN_WIDTH // 2  # a screenshot kept in a trajectory: enough to read, small


def small_jpeg(png: bytes, width: int = KEPT_WIDTH) -> str:
    """A screenshot as a trajectory keeps it (a note's `screenshot_jpeg`): `width` pixels wide, JPEG, base64."""
    from PIL import Image  # the desktop extra's: only samples with a desktop come here

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image = image.resize((width, round(image.height * width / image.width)))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=70)
    return base64.b64encode(buffer.getvalue()).decode()


class DesktopUnavailable(RuntimeError):
    """This sandbox has no desktop, or its desktop stopped; the message says why."""


class ScreenElement(BaseModel):
    """One element of the accessibility tree, placed on the screen (x = y = -1: not on screen)."""

    model_config = ConfigDict(defer_build=True)  # built when a desktop is first observed, not at import

    tag: str
    name: str = ""
    text: str = ""
    x: int = -1
    y: int = -1
    width: int = 0
    height: int = 0
    states: list[str] = Field(default_factory=list)
    depth: int = 0
    image: bool = Field(default=False, description="It shows an image (AT-SPI's Image interface).")

    @property
    def center(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2


class DesktopView(BaseModel):
    """One observation of the screen, in the form the run asked for."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    observation: ObservationType
    image: bytes | None = Field(default=None, description="PNG: the screenshot (with the marks for som).")
    raw_image: bytes | None = Field(
        default=None, description="PNG, som only: the screenshot without the marks."
    )
    table: str | None = Field(default=None, description="The linearised accessibility tree.")
    elements: list[ScreenElement] = Field(
        default_factory=list, description="The table's rows; for som, row i is mark i + 1."
    )
    duration_s: float = 0.0


# `class` is a keyword: the window's WM_CLASS is its "class" key
Window = TypedDict(
    "Window",
    {"id": int, "title": str, "class": str, "x": int, "y": int, "width": int, "height": int, "active": bool},
)


class Tab(TypedDict):
    """A tab of the harness's browser: `id` is its page's, `active` whether its window shows it."""

    id: str
    url: str
    title: str
    active: bool


class PageCheck(TypedDict):
    """A page opened in a new tab and CSS selectors awaited on it: `problem` says why the page did not
    load or answer (None: it did); one entry {"selector", "matches", "visible"[, "error"]} per selector
    tried, stopping at the first not visible."""

    problem: str | None
    selectors: list[dict[str, Any]]


class Desktop(Protocol):
    """A sandbox's screen: what agents observe and act on, and what the harness's setup steps and checks
    ask of it (windows, the browser the harness owns, the agent's processes stopped before it reads).
    Every method raises DesktopUnavailable when the desktop stopped, RuntimeError when it refused."""

    def observe(self, observation: ObservationType = "screenshot_a11y_tree") -> DesktopView:
        """What the screen shows now, in the form asked for, never from anything agent code can write."""
        ...

    def act(self, action: str | Mapping[str, Any], timeout: float | None = None) -> Observation:
        """Run an action as the agent: pyautogui code, or a JSON action of the paper's action space (an
        invalid one is a failed observation; DONE and FAIL run nothing)."""
        ...

    def start_program(self, command: list[str], name: str) -> Observation:
        """Start a program as the agent, detached (an application on the screen, a server)."""
        ...

    def stop_agent(self, timeout_s: float = 10.0) -> None:
        """Stop every process of the agent's (the desktop's run on), so that what the harness then reads
        nothing of the agent's can change."""
        ...

    def windows(self) -> list[Window]:
        """The window manager's windows, bottom to top."""
        ...

    def activate(self, window: int) -> None:
        """Raise a window and give it the keyboard."""
        ...

    def tabs(self) -> list[Tab]:
        """The browser's open tabs."""
        ...

    def open_url(self, url: str, timeout: float | None = None) -> Tab:
        """Show `url` in a new tab and wait (at most `timeout` s, or the desktop's default) until it loads."""
        ...

    def close_tab(self, tab: str) -> None: ...

    def page_html(self, tab: str) -> str:
        """A tab's HTML, read without running any script of the page."""
        ...

    def evaluate(self, tab: str, expression: str) -> Any:
        """A script of the harness's (a setup step's login) in a tab's page; its value."""
        ...

    def check_page(self, url: str, selectors: list[str], wait_s: float, timeout: float) -> PageCheck:
        """Open `url` in a new tab and wait up to `wait_s` for each selector to match a visible element
        (the whole request at most `timeout` s); the tab is closed after."""
        ...

    def settle_pages(self, wait_s: float, timeout: float) -> bool:
        """Whether the pages the browser shows loaded within `wait_s`."""
        ...

    def cells_shown(self) -> bool:
        """Whether a spreadsheet's cells are drawn (a cheap probe of two cells, no walk of the sheet)."""
        ...

    def trapped_connections(self) -> dict[str, int]:
        """Port -> connections made to the official VM's DevTools ports since the desktop started."""
        ...
