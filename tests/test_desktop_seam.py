"""The desktop on the sandbox seam: every backend says whether it has one (`desktop`: a Desktop or None), a
backend that does not say cannot be built, and the kernel sandbox's desktop turns each typed call into the
controller request and the kernel step it stands for (checked here without a screen)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from daharness.core.backend import SandboxBackend, Snapshot, require_desktop
from daharness.core.desktop import Desktop, DesktopUnavailable
from daharness.core.observation import Observation
from daharness.core.registry import backends
from daharness.core.submission import ActionEvent
from daharness.sandbox import backends as _registered  # noqa: F401  (the built-in backends register)
from daharness.sandbox.desktop.kernel_desktop import KernelDesktop


class _Forgetful(SandboxBackend):
    """A new backend that implements everything but says nothing of a desktop."""

    name = "forgetful"
    workdir = "/work"

    def start(self) -> None: ...
    def python(self, code: str, timeout: float | None = None) -> Observation: ...  # type: ignore[empty-body]
    def bash(self, command: str, timeout: float | None = None) -> Observation: ...  # type: ignore[empty-body]
    def sql(self, database: str, query: str, output: str | None = None, timeout: float | None = None) -> Observation: ...  # type: ignore[empty-body]  # fmt: skip
    def write_file(self, path: str, content: str) -> Observation: ...  # type: ignore[empty-body]
    def read_file(self, path: str) -> bytes: ...  # type: ignore[empty-body]
    def changed_files(self) -> list[str]: ...  # type: ignore[empty-body]
    def snapshot(self, target: Path) -> Snapshot: ...  # type: ignore[empty-body]
    def interrupt(self) -> None: ...
    def close(self) -> None: ...

    @property
    def time_left_s(self) -> float:
        return 1.0


class _Headless(_Forgetful):
    name = "headless"

    @property
    def desktop(self) -> Desktop | None:
        return None


def test_a_backend_that_does_not_say_whether_it_has_a_desktop_cannot_be_built() -> None:
    with pytest.raises(TypeError, match="desktop"):
        _Forgetful()  # type: ignore[abstract]
    headless = _Headless()
    assert headless.desktop is None and headless.resource_usage() == {} and list(headless.history) == []
    with pytest.raises(DesktopUnavailable, match="the headless sandbox of this sample has no desktop"):
        require_desktop(headless)


def test_every_registered_backend_declares_its_desktop() -> None:
    registered = dict(backends.items())
    assert {"bwrap", "unsafe-local"} <= set(registered)
    for name, entry in registered.items():
        assert not entry.cls.__abstractmethods__, (name, entry.cls.__abstractmethods__)


class _Session:
    """The controller's session, answering each op with a fixed answer and keeping what was asked."""

    ANSWERS: ClassVar[dict[str, dict[str, Any]]] = {
        "windows": {"windows": [{"id": 7, "title": "sales.xlsx - LibreOffice Calc"}]},
        "tabs": {"tabs": [{"id": "T1", "url": "http://127.0.0.1:8088/", "title": "home", "active": True}]},
        "open_url": {"tab": {"id": "T2", "url": "http://127.0.0.1:8080/", "title": "login", "active": True}},
        "html": {"html": "<html>hi</html>"},
        "evaluate": {"value": True},
        "check_page": {"problem": None, "selectors": [{"selector": "a", "matches": 1, "visible": 1}]},
        "settle": {"settled": False},
        "trapped": {"connections": {"9222": 2}},
        "activate": {},
        "close_tab": {},
    }

    def __init__(self) -> None:
        self.asked: list[tuple[str, float | None, dict[str, Any]]] = []

    def request(self, op: str, timeout: float | None = None, **fields: Any) -> dict[str, Any]:
        self.asked.append((op, timeout, fields))
        return self.ANSWERS[op]


def _desktop() -> tuple[KernelDesktop, _Session, list[dict[str, Any]], list[ActionEvent], list[str]]:
    session, steps, history, shell = _Session(), [], [], []

    def screen_step(payload: dict[str, Any], timeout: float | None) -> Observation:
        steps.append({**payload, "timeout": timeout})
        return Observation(kind="pyautogui", stdout="ran")

    def bash(command: str) -> Observation:
        shell.append(command)
        return Observation(kind="bash", exit_status=0)

    desktop = KernelDesktop(lambda: session, screen_step, history, bash, lambda timeout_s: None)  # type: ignore[arg-type, return-value]
    return desktop, session, steps, history, shell


def test_the_kernel_desktop_asks_the_controller_what_each_typed_call_stands_for() -> None:
    desktop, session, _, _, _ = _desktop()
    assert desktop.windows()[0]["id"] == 7
    desktop.activate(7)
    assert [tab["id"] for tab in desktop.tabs()] == ["T1"]
    assert desktop.open_url("http://127.0.0.1:8080/", timeout=60)["title"] == "login"
    desktop.open_url("http://127.0.0.1:8080/")
    assert desktop.page_html("T1") == "<html>hi</html>"
    assert desktop.evaluate("T1", "1 + 1") is True
    desktop.close_tab("T1")
    checked = desktop.check_page("http://127.0.0.1:8088/", ["a"], 5.0, timeout=95.0)
    assert checked == {"problem": None, "selectors": [{"selector": "a", "matches": 1, "visible": 1}]}
    assert desktop.settle_pages(15.0, timeout=45.0) is False
    assert desktop.trapped_connections() == {"9222": 2}
    assert session.asked == [
        ("windows", None, {}),
        ("activate", None, {"window": 7}),
        ("tabs", None, {}),
        ("open_url", 60, {"url": "http://127.0.0.1:8080/"}),  # the whole request's bound, the page's own 30 s
        ("open_url", None, {"url": "http://127.0.0.1:8080/"}),
        ("html", None, {"id": "T1"}),
        ("evaluate", None, {"id": "T1", "expression": "1 + 1"}),
        ("close_tab", None, {"id": "T1"}),
        ("check_page", 95.0, {"url": "http://127.0.0.1:8088/", "selectors": ["a"], "wait": 5.0}),
        ("settle", 45.0, {"wait": 15.0}),
        ("trapped", None, {}),
    ]


def test_the_kernel_desktop_runs_actions_in_the_kernel_and_keeps_the_ones_it_does_not_run() -> None:
    desktop, _, steps, history, shell = _desktop()
    assert desktop.act("pyautogui.press('a')").stdout == "ran"
    assert desktop.act({"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}, timeout=5).ok
    assert steps == [
        {"code": "pyautogui.press('a')", "timeout": None},
        {
            "code": "pyautogui.click(x=10, y=20, button='left', clicks=1)",
            "action": {"action_type": "CLICK", "x": 10.0, "y": 20.0, "button": "left", "num_clicks": 1},
            "timeout": 5,
        },
    ]
    invalid = desktop.act({"action_type": "PRESS", "key": "no-such-key"})
    assert invalid.error is not None and invalid.error.name == "InvalidAction"
    assert desktop.act({"action_type": "DONE"}).ok
    assert [(event.kind, event.args["action"]) for event in history] == [
        ("desktop", {"action_type": "PRESS", "key": "no-such-key"}),
        ("desktop", {"action_type": "DONE"}),
    ]
    assert len(steps) == 2  # neither ran anything
    assert desktop.start_program(["soffice", "--calc", "a b.xlsx"], "calc").ok
    assert shell == [
        "mkdir -p /tmp/.daharness-apps && setsid soffice --calc 'a b.xlsx' > /tmp/.daharness-apps/calc.log "
        "2>&1 < /dev/null &"
    ]
