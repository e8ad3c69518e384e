"""The `Desktop` of a kernel sandbox (core.desktop): what the screen shows and what the harness asks of
the screen come from the desktop's controller (`DesktopSession`), never from anything agent code can
write; actions and programs run in the agent's kernel, as the agent, and its history keeps them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from daharness.core.desktop import DesktopView, ObservationType, PageCheck, Tab, Window
from daharness.core.observation import Observation
from daharness.core.submission import ActionEvent
from daharness.sandbox.desktop.actions import Action, is_final, parse_screen_action
from daharness.sandbox.desktop.apps import launch_command
from daharness.sandbox.desktop.session import DesktopSession
from daharness.sandbox.desktop.views import build_view

ScreenStep = Callable[[dict[str, Any], float | None], Observation]


class KernelDesktop:
    """One sandbox's desktop. The sandbox hands it what it needs of itself: its started session
    (`session` waits for the sandbox's start), a screen step in the agent's kernel (`screen_step`: the
    payload of a `pyautogui` step), the history an unrun action is kept in, Bash, and how to stop the
    agent's processes."""

    def __init__(
        self,
        session: Callable[[], DesktopSession],
        screen_step: ScreenStep,
        history: list[ActionEvent],
        bash: Callable[[str], Observation],
        stop_agent: Callable[[float], None],
    ) -> None:
        self._session, self._screen_step, self._history = session, screen_step, history
        self._bash, self._stop_agent = bash, stop_agent

    def observe(self, observation: ObservationType = "screenshot_a11y_tree") -> DesktopView:
        session = self._session()
        started = time.perf_counter()
        wants_image = observation != "a11y_tree"
        wants_elements = observation != "screenshot"
        image, elements, _ = session.observe(screenshot=wants_image, elements=wants_elements)
        return build_view(observation, image, elements, time.perf_counter() - started)

    def act(self, action: str | Mapping[str, Any] | Action, timeout: float | None = None) -> Observation:
        """pyautogui code (a string; pyautogui and time are imported for it, and nothing is kept between
        actions, as in the paper), or a JSON action of the paper's action space (a mapping, or one parsed
        already). DONE and FAIL run nothing."""
        self._session()
        if isinstance(action, str):
            return self._screen_step({"code": action}, timeout)
        try:
            parsed = action if isinstance(action, Action) else parse_screen_action(dict(action))
        except ValueError as exc:
            failed = Observation.failure("desktop", "InvalidAction", str(exc))
            self._history.append(ActionEvent(kind="desktop", args={"action": action}, observation=failed))
            return failed
        described = parsed.model_dump()
        if is_final(parsed):
            done = Observation(kind="desktop")
            self._history.append(ActionEvent(kind="desktop", args={"action": described}, observation=done))
            return done
        return self._screen_step({"code": parsed.pyautogui(), "action": described}, timeout)

    def start_program(self, command: list[str], name: str) -> Observation:
        return self._bash(launch_command(command, name))

    def stop_agent(self, timeout_s: float = 10.0) -> None:
        self._stop_agent(timeout_s)

    # ---- what the harness asks the controller ----------------------------------------------------------

    def _ask(self, op: str, timeout: float | None = None, **fields: Any) -> dict[str, Any]:
        """The controller's answer; `timeout` bounds the whole request (the session's default when None)."""
        session = self._session()
        return session.request(op, **fields) if timeout is None else session.request(op, timeout, **fields)

    def windows(self) -> list[Window]:
        return list(self._ask("windows")["windows"])

    def activate(self, window: int) -> None:
        self._ask("activate", window=window)

    def tabs(self) -> list[Tab]:
        return list(self._ask("tabs")["tabs"])

    def open_url(self, url: str, timeout: float | None = None) -> Tab:
        tab: Tab = self._ask("open_url", timeout, url=url)["tab"]
        return tab

    def close_tab(self, tab: str) -> None:
        self._ask("close_tab", id=tab)

    def page_html(self, tab: str) -> str:
        return str(self._ask("html", id=tab).get("html", ""))

    def evaluate(self, tab: str, expression: str) -> Any:
        return self._ask("evaluate", id=tab, expression=expression).get("value")

    def check_page(self, url: str, selectors: list[str], wait_s: float, timeout: float) -> PageCheck:
        answer = self._ask("check_page", timeout, url=url, selectors=selectors, wait=wait_s)
        return {"problem": answer.get("problem"), "selectors": list(answer.get("selectors", []))}

    def settle_pages(self, wait_s: float, timeout: float) -> bool:
        return bool(self._ask("settle", timeout, wait=wait_s)["settled"])

    def cells_shown(self) -> bool:
        return bool(self._ask("cells_shown")["shown"])

    def trapped_connections(self) -> dict[str, int]:
        return dict(self._ask("trapped")["connections"])
