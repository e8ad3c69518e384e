"""The controller's start-up and request loop.

Requests (one JSON object per line): {"op": "observe", "screenshot": bool, "elements": bool, "fresh": bool
(every application's tree walked again, not taken from the last walk)} |
{"op": "windows"} | {"op": "activate", "window": id} | {"op": "open_url", "url"} | {"op": "tabs"} |
{"op": "html", "id": tab} | {"op": "evaluate", "id": tab, "expression": js} | {"op": "close_tab", "id": tab} |
{"op": "check_page", "url", "selectors": [css], "wait": s} | {"op": "settle", "wait": s} (the shown
pages loaded) | {"op": "cells_shown"} (a table of an application shows its cells) | {"op": "trapped"} (connections to the official DevTools ports, `trap.py`) | {"op": "ping"}. Each gets one answer: the op's fields, or
{"error": {"name", "value"}}. The first line the controller writes is {"ready": true, "timings": {...}} once the display, the window manager, the
accessibility bus and (when asked; else on first use) the browser answer, or {"ready": false, "error": ...}.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from typing import Any

from .atspi import AccessibilityBus
from .browser import Browser
from .devtools import BrowserGone, NotAnswering
from .screen import Screen
from .services import A11Y_BUS, DISPLAY, Services
from .trap import PortTrap

_BROWSER_APPLICATIONS = ("Chromium", "chromium", "Google Chrome")  # its pages come from the browser itself
_BROWSER_EXIT_S = 10.0
_BROWSER_WINDOW_S = 10.0  # how long a new browser's window may take to show and take the focus


class Controller:
    def __init__(self, config: dict[str, Any]) -> None:
        self.trap = PortTrap([int(port) for port in config.get("trap_ports", [])])
        self.browser = Browser()
        self.services = Services(int(config["width"]), int(config["height"]), self.browser.on_event)
        self.services.start(browser=bool(config.get("browser", False)))
        self.screen = Screen(DISPLAY, lambda: self.services.alive("display"))
        self.accessibility = AccessibilityBus(str(A11Y_BUS), skip_applications=_BROWSER_APPLICATIONS)
        if self.services.devtools is not None:
            self.browser.use(self.services.devtools)
        self.handlers = {
            "observe": self.observe,
            "windows": lambda request: {"windows": self.screen.windows()},
            "activate": self.activate,
            "open_url": self.open_url,
            "tabs": lambda request: {"tabs": self._browser().tabs()},
            "html": lambda request: {"html": self._browser().html(str(request["id"]))},
            # a setup step's page script (the official setup's Playwright login): the harness's, never the agent's
            "evaluate": lambda request: {
                "value": self._browser().evaluate(str(request["id"]), str(request["expression"]))
            },
            "close_tab": lambda request: self._browser().close_tab(str(request["id"])),
            "check_page": lambda request: self._browser().check_page(
                str(request["url"]),
                [str(selector) for selector in request.get("selectors", [])],
                float(request.get("wait", 5)),
            ),
            "settle": lambda request: {"settled": self._settle(float(request.get("wait", 15)))},
            "trapped": lambda request: {"connections": self.trap.counts()},
            "cells_shown": lambda request: {"shown": self.accessibility.shows_cells()},
            "ping": lambda request: {},
        }

    def observe(self, request: dict[str, Any]) -> dict[str, Any]:
        """The screenshot and the elements of the screen, read side by side (encoding the image is CPU
        work, walking the tree is mostly waiting for applications)."""
        answer: dict[str, Any] = {}
        timings: dict[str, float] = {}
        shot: dict[str, Any] = {}

        def take() -> None:
            started = time.perf_counter()
            try:
                shot["png"] = self.screen.grab()
            except Exception as exc:
                shot["error"] = exc
            timings["screenshot_s"] = time.perf_counter() - started

        # the windows' places, read before the screenshot's thread uses the X connection: an application
        # whose window moved is walked again (its elements moved, and it says nothing of it)
        windows = self.screen.windows() if request.get("elements") else None
        worker = threading.Thread(target=take) if request.get("screenshot") else None
        if worker is not None:
            worker.start()
        if request.get("elements"):
            started = time.perf_counter()
            found = self.accessibility.elements(windows, fresh=bool(request.get("fresh")))
            answer["elements"] = found + self._page_elements()
            timings["elements_s"] = time.perf_counter() - started
            timings["applications_walked"] = self.accessibility.walked
        if worker is not None:
            worker.join()
            if "error" in shot:
                raise shot["error"]
            answer["screenshot"] = base64.b64encode(shot["png"]).decode()
        answer["timings"] = timings
        return answer

    def _settle(self, wait_s: float) -> bool:
        """The shown pages loaded (a browser never started shows none: nothing to wait for)."""
        return "browser" not in self.services.processes or self._browser().settle(wait_s)

    def _page_elements(self) -> list[dict[str, Any]]:
        if not self.services.alive("browser"):
            return []
        try:
            return self._browser().elements()
        except (BrowserGone, NotAnswering):
            return []

    def _browser(self) -> Browser:
        """The running browser (its pipe is connected when it starts). The desktop starts without one, as
        the official VM, where a task's setup launches Chrome when it needs it: the first request that
        needs the browser starts it (one that went since is not started again here, see `open_url`)."""
        if "browser" not in self.services.processes:
            self._start_browser()
        if not self.services.alive("browser") or not self.browser.connected:
            raise BrowserGone("the browser is not running")
        return self.browser

    def open_url(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.browser.connected and not self.browser.has_tabs():
            # its last window closed (by the agent on the screen, say) but maybe not yet exited: such a browser
            # exits within moments, and only then can it be started again
            self.services.wait_exited("browser", _BROWSER_EXIT_S)
        started = not self.services.alive("browser")
        if started:
            self._start_browser()
        tab = self._browser().open_url(str(request["url"]), float(request.get("timeout", 30)))
        if started:  # a click that comes before the new browser's window is shown and focused is lost
            self._wait_for_active_window(str(tab.get("title") or ""), _BROWSER_WINDOW_S)
        return {"tab": tab}

    def _wait_for_active_window(self, title: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(w["active"] and title in w["title"] for w in self.screen.windows()):
                return True
            time.sleep(0.05)
        return False

    def _start_browser(self) -> None:
        self.services.start_browser()
        assert self.services.devtools is not None
        self.browser.use(self.services.devtools)

    def activate(self, request: dict[str, Any]) -> dict[str, Any]:
        self.screen.activate(int(request["window"]))
        return {}

    def serve(self, proto_in: Any, proto_out: Any) -> None:
        for line in proto_in:
            try:
                request = json.loads(line)
                handler = self.handlers.get(request.get("op"))
                if handler is None:
                    raise ValueError(f"unknown op {request.get('op')!r}")
                answer = handler(request)
            except Exception as exc:  # one failed request must not end the desktop
                answer = {"error": {"name": type(exc).__name__, "value": str(exc)}}
            proto_out.write(json.dumps(answer) + "\n")
            proto_out.flush()

    def stop(self) -> None:
        self.trap.close()
        self.accessibility.close()
        self.services.stop()


def main(config: dict[str, Any]) -> None:
    # the protocol gets private descriptors; anything else written to stdout lands in stderr
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.umask(0o022)
    try:
        controller = Controller(config)
    except Exception as exc:
        proto_out.write(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"}) + "\n")
        proto_out.flush()
        sys.exit(1)
    proto_out.write(json.dumps({"ready": True, "timings": controller.services.timings}) + "\n")
    proto_out.flush()
    try:
        controller.serve(proto_in, proto_out)
    finally:
        controller.stop()
