"""Chromium's pages over the DevTools protocol: tabs, opening a page, and each shown page's
accessibility tree placed on the screen.

The endpoint is a port of the sandbox's loopback, which agent code can reach too (as in the official
VM). Before connecting, the controller checks in the kernel's socket table that the port is held by
its own user id: agent code that bound the port after closing the browser would serve a made-up page.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

_TIMEOUT_S = 10.0
# Chromium's accessibility roles, named as AT-SPI names them (the table's tags are AT-SPI's, as the paper's)
_TAGS = {
    "RootWebArea": "document-web", "StaticText": "static", "button": "push-button", "textbox": "entry",
    "searchbox": "entry", "checkbox": "check-box", "radio": "radio-button", "combobox": "combo-box",
    "ComboBoxSelect": "combo-box", "ComboBoxMenuButton": "combo-box", "listbox": "list-box",
    "option": "list-item", "listitem": "list-item", "img": "image", "image": "image", "generic": "section",
    "group": "panel", "tab": "page-tab", "tablist": "page-tab-list", "tabpanel": "panel", "menuitem": "menu-item",
    "menubar": "menu-bar", "row": "table-row", "cell": "table-cell", "gridcell": "table-cell",
    "columnheader": "column-header", "rowheader": "row-header", "spinbutton": "spin-button",
    "progressbar": "progress-bar", "switch": "toggle-button", "LabelText": "label", "tooltip": "tool-tip",
    "treeitem": "tree-item", "navigation": "landmark", "main": "landmark", "banner": "landmark",
    "contentinfo": "landmark", "complementary": "landmark", "region": "section", "Iframe": "internal-frame",
}  # fmt: skip
_TWO_FRAMES = "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"
# how many elements a CSS selector matches, and how many of them are visible as Playwright counts it (a
# non-empty box, `visibility: visible`); a selector the page cannot parse answers its error
_MATCHES = """(() => {
  try {
    const all = [...document.querySelectorAll(SELECTOR)];
    const shown = all.filter(e => {
      const box = e.getBoundingClientRect();
      return getComputedStyle(e).visibility === 'visible' && box.width > 0 && box.height > 0;
    });
    return {matches: all.length, visible: shown.length};
  } catch (error) {
    return {matches: 0, visible: 0, error: String(error)};
  }
})()"""
_SKIPPED_ROLES = {"InlineTextBox", "LineBreak", "none", "presentation", "Ignored"}
_STATE_PROPERTIES = ("focusable", "focused", "editable", "checked", "expanded", "selected", "required", "multiline", "modal")  # fmt: skip


class BrowserGone(RuntimeError):
    """No browser answers (it was closed), or its port is held by another process."""


class Browser:
    def __init__(self, port: int) -> None:
        self.port = port
        self._socket: websocket.WebSocket | None = None
        self._next_id = 0
        self._sessions: dict[str, str] = {}

    # ---- connection -------------------------------------------------------------------------------

    def connect(self) -> None:
        if not _listened_by_me(self.port):
            raise BrowserGone(f"port {self.port} is not the browser's (not held by the desktop's user)")
        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.port}/json/version", timeout=_TIMEOUT_S
        ) as answer:
            endpoint = json.load(answer)["webSocketDebuggerUrl"]
        self._socket = websocket.create_connection(endpoint, timeout=_TIMEOUT_S, suppress_origin=True)
        self._sessions = {}

    @property
    def connected(self) -> bool:
        return self._socket is not None

    def answers(self) -> bool:
        """Whether the connected browser still answers (a closed one drops the connection)."""
        try:
            self.call("Browser.getVersion")
        except BrowserGone:
            return False
        return True

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        if self._socket is None:
            raise BrowserGone("not connected to the browser")
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            self._socket.send(json.dumps(message))
            while True:
                answer = json.loads(self._socket.recv())
                if answer.get("id") == self._next_id:
                    break
        except (OSError, websocket.WebSocketException, ValueError) as exc:
            self.close()
            raise BrowserGone(f"the browser stopped answering ({type(exc).__name__})") from None
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error'].get('message', answer['error'])}")
        return answer.get("result", {})

    # ---- tabs -------------------------------------------------------------------------------------

    def pages(self) -> list[dict[str, Any]]:
        targets = self.call("Target.getTargets")["targetInfos"]
        return [t for t in targets if t["type"] == "page" and not t["url"].startswith("devtools://")]

    def _session(self, target: str) -> str:
        if target not in self._sessions:
            attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
            self._sessions[target] = attached["sessionId"]
        return self._sessions[target]

    def evaluate(self, target: str, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self._session(target)
        )
        return result.get("result", {}).get("value")

    def tabs(self) -> list[dict[str, Any]]:
        """The open pages: id, url, title, and whether it is the page its window shows."""
        return [
            {
                "id": page["targetId"],
                "url": page["url"],
                "title": page["title"],
                "active": self.evaluate(page["targetId"], "document.visibilityState") == "visible",
            }
            for page in self.pages()
        ]

    def open_url(self, url: str, timeout_s: float = 30.0) -> dict[str, Any]:
        """Show `url` in a new tab (in the blank tab of a fresh browser) and wait until it has loaded."""
        pages = self.pages()
        if len(pages) == 1 and pages[0]["url"] in ("about:blank", "chrome://newtab/"):
            target = pages[0]["targetId"]
            self.call("Page.navigate", {"url": url}, self._session(target))
        else:
            target = self.call("Target.createTarget", {"url": url})["targetId"]
        self.call("Target.activateTarget", {"targetId": target})
        self._wait_loaded(target, url, timeout_s)
        self.painted(target)
        return next(tab for tab in self.tabs() if tab["id"] == target)

    def close_tab(self, target: str) -> dict[str, Any]:
        self.call("Target.closeTarget", {"targetId": target})
        self._sessions.pop(target, None)
        return {}

    def check_page(
        self, url: str, selectors: list[str], wait_s: float, load_timeout_s: float = 30.0
    ) -> dict[str, Any]:
        """Open `url` in a new tab, wait until it has loaded, then wait up to `wait_s` for each selector
        in turn to match a visible element (the official `html_check`: Playwright's new page, `goto`,
        `expect(...).to_be_visible`), stopping at the first that does not; the tab is closed after and
        the tab shown before is shown again. Answers {"problem": why the page did not load, or None (not
        "error", the protocol's failed answer),
        "selectors": [{"selector", "matches", "visible"[, "error"]}]}."""
        shown = [tab["id"] for tab in self.tabs() if tab["active"]]
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        try:
            navigated = self.call("Page.navigate", {"url": url}, self._session(target))
            if navigated.get("errorText"):
                return {"problem": f"{url}: {navigated['errorText']}", "selectors": []}
            try:
                self._wait_loaded(target, url, load_timeout_s)
            except TimeoutError as exc:
                return {"problem": str(exc), "selectors": []}
            found: list[dict[str, Any]] = []
            for selector in selectors:
                deadline = time.monotonic() + wait_s
                while True:
                    answer = self.evaluate(target, _MATCHES.replace("SELECTOR", json.dumps(selector)))
                    answer = answer if isinstance(answer, dict) else {"matches": 0, "visible": 0}
                    if answer["visible"] or "error" in answer or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                found.append({"selector": selector, **answer})
                if not answer["visible"]:
                    break
            return {"problem": None, "selectors": found}
        finally:
            self.call("Target.closeTarget", {"targetId": target})
            self._sessions.pop(target, None)
            if shown:
                self.call("Target.activateTarget", {"targetId": shown[0]})

    def _wait_loaded(self, target: str, url: str, timeout_s: float) -> None:
        """Wait until the tab has left about:blank and its document is complete (a TimeoutError if not)."""
        deadline = time.monotonic() + timeout_s
        loaded = "location.href !== 'about:blank' && document.readyState === 'complete'"
        while not self.evaluate(target, loaded):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading in {timeout_s:g} s")
            time.sleep(0.05)

    def painted(self, target: str) -> None:
        """Return once the page has drawn a frame since now (two animation frames: the second starts
        after the first one's drawing), so that a screenshot taken next shows it."""
        self.call(
            "Runtime.evaluate",
            {"expression": _TWO_FRAMES, "awaitPromise": True, "returnByValue": True},
            self._session(target),
        )

    # ---- accessibility ----------------------------------------------------------------------------

    def elements(self) -> list[dict[str, Any]]:
        """The accessibility tree of every page its window shows, placed on the screen."""
        found: list[dict[str, Any]] = []
        for page in self.pages():
            target = page["targetId"]
            if self.evaluate(target, "document.visibilityState") == "visible":
                found += self._page_elements(target)
        return found

    def _page_elements(self, target: str) -> list[dict[str, Any]]:
        session = self._session(target)
        metrics = self.evaluate(
            target,
            "[screenX, screenY, outerWidth, outerHeight, innerWidth, innerHeight, scrollX, scrollY, devicePixelRatio]",
        )
        screen_x, screen_y, outer_w, outer_h, inner_w, inner_h, scroll_x, scroll_y, ratio = metrics
        border = (outer_w - inner_w * ratio) / 2  # the browser's own frame; its toolbars sit above the page
        origin_x = screen_x + border
        origin_y = screen_y + outer_h - inner_h * ratio - border
        boxes = self._boxes(session)
        nodes = self.call("Accessibility.getFullAXTree", {}, session)["nodes"]
        by_id = {node["nodeId"]: node for node in nodes}
        found: list[dict[str, Any]] = []
        stack = [(nodes[0], 0)] if nodes else []
        while stack:
            node, depth = stack.pop()
            stack += [(by_id[c], depth + 1) for c in reversed(node.get("childIds", [])) if c in by_id]
            role = node.get("role", {}).get("value", "")
            if node.get("ignored") or role in _SKIPPED_ROLES:
                continue
            element = _element(node, role, depth)
            box = boxes.get(node.get("backendDOMNodeId", -1))
            if box is not None:
                left, top, width, height = box
                element["x"] = round(origin_x + (left - scroll_x) * ratio)
                element["y"] = round(origin_y + (top - scroll_y) * ratio)
                element["width"], element["height"] = round(width * ratio), round(height * ratio)
                in_view = left + width > scroll_x and top + height > scroll_y
                in_view = in_view and left < scroll_x + inner_w and top < scroll_y + inner_h
                if in_view and width > 0 and height > 0:
                    element["states"] += ["showing", "visible"]
            found.append(element)
        return found

    def _boxes(self, session: str) -> dict[int, tuple[float, float, float, float]]:
        """Layout boxes of the main document's nodes (CSS pixels, page coordinates) by DOM node id."""
        snapshot = self.call("DOMSnapshot.captureSnapshot", {"computedStyles": []}, session)
        if not snapshot["documents"]:
            return {}
        document = snapshot["documents"][0]
        backend_ids = document["nodes"]["backendNodeId"]
        layout = document["layout"]
        return {
            backend_ids[index]: tuple(bounds)  # type: ignore[misc]
            for index, bounds in zip(layout["nodeIndex"], layout["bounds"], strict=True)
        }


def _element(node: dict[str, Any], role: str, depth: int) -> dict[str, Any]:
    properties = {p["name"]: p.get("value", {}).get("value") for p in node.get("properties", [])}
    name = str(node.get("name", {}).get("value", "") or "")
    value = node.get("value", {}).get("value", "")
    states = [] if properties.get("disabled") else ["enabled", "sensitive"]
    states += [key for key in _STATE_PROPERTIES if properties.get(key) not in (None, False, "false")]
    return {
        "tag": _TAGS.get(role, role.replace(" ", "-").lower() or "unknown"),
        "name": "" if role == "StaticText" else name,
        "text": name if role == "StaticText" else str(value if value is not None else ""),
        "x": -1,
        "y": -1,
        "width": 0,
        "height": 0,
        "states": states,
        "depth": depth,
    }


def _listened_by_me(port: int) -> bool:
    """Whether a socket of this process's user listens on `port` (the network namespace's socket table
    names each socket's owner)."""
    wanted = f":{port:04X}"
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[1].endswith(wanted) and fields[3] == "0A":  # 0A: LISTEN
                return int(fields[7]) == os.getuid()
    return False
