"""Chromium's pages over the DevTools protocol (the controller's pipe, `devtools.py`): tabs, opening a
page, checking a page, and each shown page's accessibility tree placed on the screen.

What the harness reads after the agent never runs the page's own script: the tabs come from the browser
process (its tab targets say which tab each window shows), a page's HTML from the DOM domain, and a page
check's selectors are counted by the harness's script in an isolated world of the page, whose
`document.querySelectorAll`, `getComputedStyle` and layout are the browser's own whatever the page's
script did to its prototypes. Every call that reaches a page has a time limit (`devtools.NotAnswering`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from .devtools import BrowserGone, DevTools, NotAnswering

_TIMEOUT_S = 10.0
PAGE_TIMEOUT_S = 10.0  # a call a page's renderer answers (a page in an endless loop never does)
_OBSERVE_TIMEOUT_S = 5.0  # the same while the agent waits for its observation
MAX_HTML = 8 << 20  # characters of a page's HTML a check reads
_ISOLATED_WORLD = "daharness"
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
_LOADED = "location.href !== 'about:blank' && document.readyState === 'complete'"
_SETTLED = "[document.readyState, location.href]"
# how many elements a CSS selector matches, and how many of them are visible as Playwright counts it (a
# non-empty box, `visibility: visible`); a selector the page cannot parse answers its error. As Playwright's
# CSS locators, it looks into open shadow roots too (Airflow's pages draw their content in one).
_MATCHES = """(() => {
  try {
    const roots = [document], all = [];
    for (let i = 0; i < roots.length; i++) {
      all.push(...roots[i].querySelectorAll(SELECTOR));
      for (const element of roots[i].querySelectorAll('*')) {
        if (element.shadowRoot) roots.push(element.shadowRoot);
      }
    }
    const shown = all.filter(e => {
      const box = e.getBoundingClientRect();
      return getComputedStyle(e).visibility === 'visible' && box.width > 0 && box.height > 0;
    });
    return {matches: all.length, visible: shown.length};
  } catch (error) {
    return {matches: 0, visible: 0, error: String(error)};
  }
})()"""
_METRICS = (
    "[screenX, screenY, outerWidth, outerHeight, innerWidth, innerHeight, scrollX, scrollY, devicePixelRatio]"
)
# an observation's look at a page, in a world of the harness's that lasts as long as the page's document:
# on its first run it starts counting the page's changes (its DOM's mutations; input, focus, scrolling,
# resizing, loads, the mouse over another element (a style for :hover), clicks, keys; transitions and animations, which move things without touching the DOM, as running
# while they run), and each run answers [visibility, changes, running, *metrics]. The world's globals are
# its own: the page's script can neither see the count nor reset it.
_OBSERVER_WORLD = "daharness-observer"
_PAGE_STATE = """(() => {
  if (!window.daharnessChanges) {
    const state = {changes: 0, running: 0};
    const bump = () => { state.changes++; };
    // an attribute or a text set again to the value it had is no change (JupyterLab re-sets its toolbars'
    // attributes every few seconds)
    const changed = record => record.type === 'childList' || (record.type === 'attributes'
      ? record.oldValue !== record.target.getAttribute(record.attributeName)
      : record.oldValue !== record.target.data);
    new MutationObserver(records => { if (records.some(changed)) bump(); }).observe(document, {
      subtree: true, childList: true, attributes: true, characterData: true, attributeOldValue: true,
      characterDataOldValue: true});
    for (const kind of ['input', 'change', 'focusin', 'focusout', 'scroll', 'resize', 'load', 'toggle',
                        'mouseover', 'mouseout', 'click', 'keyup'])
      addEventListener(kind, bump, true);
    for (const kind of ['transitionrun', 'animationstart'])
      addEventListener(kind, () => { state.running++; bump(); }, true);
    for (const kind of ['transitionend', 'transitioncancel', 'animationend', 'animationcancel'])
      addEventListener(kind, () => { state.running = Math.max(0, state.running - 1); bump(); }, true);
    window.daharnessChanges = state;
  }
  const state = window.daharnessChanges;
  return [document.visibilityState, state.changes, state.running, METRICS];
})()""".replace("METRICS", _METRICS[1:-1])
_SKIPPED_ROLES = {"InlineTextBox", "LineBreak", "none", "presentation", "Ignored"}
_STATE_PROPERTIES = ("focusable", "focused", "editable", "checked", "expanded", "selected", "required", "multiline", "modal")  # fmt: skip


class Browser:
    """The running browser, over its DevTools pipe (a new Browser for each start of the browser)."""

    def __init__(self) -> None:
        self.devtools: DevTools | None = None
        self._sessions: dict[str, str] = {}  # page target -> our session with it
        self._tab_sessions: dict[str, str] = {}  # tab target -> our session with it
        self._tab_pages: dict[str, str] = {}  # our session with a tab -> the page it shows
        self._observers: dict[str, int] = {}  # page target -> the observation's world in it
        # page target -> (the state it was walked in, its elements): a page that did not change since is
        # not walked again (its accessibility tree and layout are most of an observation's time)
        self._walked: dict[str, tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}

    # ---- connection -------------------------------------------------------------------------------

    def use(self, devtools: DevTools) -> None:
        """Talk to a (re)started browser over its pipe."""
        self.devtools = devtools
        self._sessions, self._tab_sessions, self._tab_pages = {}, {}, {}
        self._observers, self._walked = {}, {}

    @property
    def connected(self) -> bool:
        return self.devtools is not None and self.devtools.open

    def has_tabs(self) -> bool:
        """Whether the connected browser answers and has a tab (one whose last window was closed exits)."""
        try:
            return bool(self.tabs())
        except (BrowserGone, NotAnswering):
            return False

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
        timeout: float = _TIMEOUT_S,
    ) -> Any:  # fmt: skip
        if self.devtools is None:
            raise BrowserGone("not connected to the browser")
        return self.devtools.call(method, params, session, timeout)

    def on_event(self, message: dict[str, Any]) -> None:
        """Follow which page each tab shows: our session with a tab is told when its page is attached."""
        params = message.get("params", {})
        if message.get("method") == "Target.attachedToTarget":
            info = params.get("targetInfo", {})
            parent = message.get("sessionId")
            if (
                parent in self._tab_sessions.values()
                and info.get("type") == "page"
                and not info.get("subtype")
            ):
                self._tab_pages[parent] = info["targetId"]
                self._sessions.setdefault(info["targetId"], params["sessionId"])
        elif message.get("method") == "Target.detachedFromTarget":
            gone = params.get("sessionId")
            for target in [t for t, s in self._sessions.items() if s == gone]:
                self._observers.pop(target, None)
                self._walked.pop(target, None)
            self._sessions = {t: s for t, s in self._sessions.items() if s != gone}
            self._tab_sessions = {t: s for t, s in self._tab_sessions.items() if s != gone}
            self._tab_pages.pop(gone, None)

    # ---- tabs -------------------------------------------------------------------------------------

    def tabs(self) -> list[dict[str, Any]]:
        """The open tabs as the browser process lists them, in no page's words (a page that never answers
        cannot hold the listing up): id (its page's target), url, title, and whether its window shows it."""
        found = []
        for tab in self.call("Target.getTargets", {"filter": [{"type": "tab"}]})["targetInfos"]:
            page = self._page_of(tab["targetId"])
            if page is not None:
                shown = bool((tab.get("embedderData") or {}).get("tabActive"))
                found.append({"id": page, "url": tab["url"], "title": tab["title"], "active": shown})
        return found

    def _page_of(self, tab: str) -> str | None:
        """The page target a tab shows (our session with the tab is told it when attaching)."""
        if tab not in self._tab_sessions:
            try:
                session = self.call("Target.attachToTarget", {"targetId": tab, "flatten": True})["sessionId"]
            except RuntimeError:  # closed while we looked
                return None
            self._tab_sessions[tab] = session
            self.call("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False,
                                               "flatten": True}, session)  # fmt: skip
        return self._tab_pages.get(self._tab_sessions[tab])

    def _session(self, target: str) -> str:
        if target not in self._sessions:
            attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
            self._sessions[target] = attached["sessionId"]
        return self._sessions[target]

    def evaluate(self, target: str, expression: str, timeout: float = PAGE_TIMEOUT_S) -> Any:
        """Evaluate in the page's own world: for the harness's setup steps, before any agent code."""
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self._session(target),
            timeout,
        )  # fmt: skip
        return result.get("result", {}).get("value")

    def evaluate_isolated(self, target: str, expression: str, timeout: float = PAGE_TIMEOUT_S) -> Any:
        """Evaluate in a new isolated world of the page's main frame: the page's script shares the DOM
        with it but none of its objects, so it cannot change what the expression calls."""
        session = self._session(target)
        frame = self.call("Page.getFrameTree", {}, session, timeout)["frameTree"]["frame"]["id"]
        world = self.call("Page.createIsolatedWorld", {"frameId": frame, "worldName": _ISOLATED_WORLD},
                          session, timeout)["executionContextId"]  # fmt: skip
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "contextId": world},
            session, timeout,
        )  # fmt: skip
        return result.get("result", {}).get("value")

    def html(self, target: str) -> str:
        """The page's HTML (its document element's) from the DOM domain: no script of the page runs."""
        session = self._session(target)
        root = self.call("DOM.getDocument", {"depth": 1}, session, PAGE_TIMEOUT_S)["root"]
        element = next((node for node in root.get("children", []) if node.get("nodeType") == 1), root)
        html = self.call("DOM.getOuterHTML", {"nodeId": element["nodeId"]}, session, PAGE_TIMEOUT_S)
        text = str(html.get("outerHTML", ""))
        if len(text) > MAX_HTML:
            raise RuntimeError(f"the page's HTML has {len(text)} characters, more than the {MAX_HTML} read")
        return text

    def open_url(self, url: str, timeout_s: float = 30.0) -> dict[str, Any]:
        """Show `url` in a new tab (in the blank tab of a fresh browser) and wait until it has loaded."""
        tabs = self.tabs()
        if len(tabs) == 1 and tabs[0]["url"] in ("about:blank", "chrome://newtab/"):
            target = tabs[0]["id"]
            self.call("Page.navigate", {"url": url}, self._session(target))
        else:  # in a window of its own when the browser has none left
            target = self.call("Target.createTarget", {"url": url, "newWindow": not tabs})["targetId"]
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
        the tab shown before is shown again. The selectors are counted in an isolated world. Answers
        {"problem": why the page did not load or answer, or None (not "error", the protocol's failed
        answer), "selectors": [{"selector", "matches", "visible"[, "error"]}]}."""
        shown = [tab["id"] for tab in self.tabs() if tab["active"]]
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        try:
            navigated = self.call("Page.navigate", {"url": url}, self._session(target))
            if navigated.get("errorText"):
                return {"problem": f"{url}: {navigated['errorText']}", "selectors": []}
            found: list[dict[str, Any]] = []
            try:
                self._wait_loaded(target, url, load_timeout_s)
                for selector in selectors:
                    answer = self._wait_visible(target, selector, wait_s)
                    found.append({"selector": selector, **answer})
                    if not answer["visible"]:
                        break
            except (TimeoutError, NotAnswering) as exc:
                return {"problem": str(exc), "selectors": found}
            return {"problem": None, "selectors": found}
        finally:
            self.call("Target.closeTarget", {"targetId": target})
            self._sessions.pop(target, None)
            if shown:
                self.call("Target.activateTarget", {"targetId": shown[0]})

    def settle(self, timeout_s: float) -> bool:
        """Wait (at most `timeout_s`) until every shown tab has loaded the page it is navigating to, as a
        user would before reading it; whether they all did. (A page still coming from a server of the
        agent's would never come once the agent's processes are stopped: the browser holds every call to
        a tab whose navigation is pending.)"""
        deadline = time.monotonic() + timeout_s
        while True:
            if all(self._loaded(tab) for tab in self.tabs() if tab["active"]):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)

    def _loaded(self, tab: dict[str, Any]) -> bool:
        state = self._answer(lambda: self.evaluate_isolated(tab["id"], _SETTLED, timeout=1.0))
        return state == ["complete", tab["url"]]

    def _wait_visible(self, target: str, selector: str, wait_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + wait_s
        while True:
            answer = self.evaluate_isolated(target, _MATCHES.replace("SELECTOR", json.dumps(selector)))
            answer = answer if isinstance(answer, dict) else {"matches": 0, "visible": 0}
            if answer["visible"] or "error" in answer or time.monotonic() > deadline:
                return answer
            time.sleep(0.1)

    def _wait_loaded(self, target: str, url: str, timeout_s: float) -> None:
        """Wait until the tab has left about:blank and its document is complete (a TimeoutError if not);
        asked in an isolated world, so that the page's script cannot answer for its document."""
        deadline = time.monotonic() + timeout_s
        while not self._answer(lambda: self.evaluate_isolated(target, _LOADED, timeout=2.0)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading in {timeout_s:g} s")
            time.sleep(0.05)

    @staticmethod
    def _answer(ask: Any) -> Any:
        """What a page answers, or None while it cannot (navigating: its frame and worlds are being
        replaced; busy)."""
        try:
            return ask()
        except (RuntimeError, NotAnswering) as exc:
            if isinstance(exc, BrowserGone):
                raise
            return None

    def painted(self, target: str) -> None:
        """Return once the page has drawn a frame since now (two animation frames: the second starts
        after the first one's drawing), so that a screenshot taken next shows it."""
        self.call(
            "Runtime.evaluate",
            {"expression": _TWO_FRAMES, "awaitPromise": True, "returnByValue": True},
            self._session(target),
            PAGE_TIMEOUT_S,
        )

    # ---- accessibility ----------------------------------------------------------------------------

    def elements(self) -> list[dict[str, Any]]:
        """The accessibility tree of every page its window shows, placed on the screen (a page that does
        not answer in time is left out: the rest of the screen is still seen). A page that did not change
        since its last walk, nor moved, gives that walk's elements."""
        found: list[dict[str, Any]] = []
        for tab in self.tabs():
            if not tab["active"]:
                continue
            try:  # a window covered by another has its page hidden: nothing of it is on the screen
                world, (visibility, changes, running, *metrics) = self._page_state(tab["id"])
                if visibility != "visible":
                    continue
                state = (world, changes, *metrics)
                walked = self._walked.get(tab["id"])
                if walked is not None and walked[0] == state:
                    found += walked[1]
                    continue
                elements = self._page_elements(tab["id"], metrics)
                if running:  # moving: its next look walks it again
                    self._walked.pop(tab["id"], None)
                else:  # a change during the walk counts after `state`: the next look walks again
                    self._walked[tab["id"]] = (state, elements)
                found += elements
            except NotAnswering:
                continue
        return found

    def _page_state(self, target: str) -> tuple[int, list[Any]]:
        """The observation's world in the page (made on the page's first look, and again once a navigation
        replaced the document it was in) and what `_PAGE_STATE` answers there."""
        session = self._session(target)
        for _ in range(2):
            world = self._observers.get(target)
            if world is None:
                frame = self.call("Page.getFrameTree", {}, session, _OBSERVE_TIMEOUT_S)["frameTree"]["frame"][
                    "id"
                ]
                world = self.call("Page.createIsolatedWorld", {"frameId": frame, "worldName": _OBSERVER_WORLD},
                                  session, _OBSERVE_TIMEOUT_S)["executionContextId"]  # fmt: skip
                self._observers[target] = world
            try:
                result = self.call(
                    "Runtime.evaluate", {"expression": _PAGE_STATE, "returnByValue": True, "contextId": world},
                    session, _OBSERVE_TIMEOUT_S,
                )  # fmt: skip
            except (BrowserGone, NotAnswering):
                raise
            except RuntimeError:  # the world went with the document it was in
                self._observers.pop(target, None)
                continue
            value = result.get("result", {}).get("value")
            if isinstance(value, list) and len(value) == 12:
                return world, value
            self._observers.pop(target, None)
        raise NotAnswering("the page did not say its state")

    def _page_elements(self, target: str, metrics: list[Any]) -> list[dict[str, Any]]:
        session = self._session(target)
        screen_x, screen_y, outer_w, outer_h, inner_w, inner_h, scroll_x, scroll_y, ratio = metrics
        border = (outer_w - inner_w * ratio) / 2  # the browser's own frame; its toolbars sit above the page
        origin_x = screen_x + border
        origin_y = screen_y + outer_h - inner_h * ratio - border
        boxes = self._boxes(session)
        nodes = self.call("Accessibility.getFullAXTree", {}, session, _OBSERVE_TIMEOUT_S)["nodes"]
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
        snapshot = self.call(
            "DOMSnapshot.captureSnapshot", {"computedStyles": []}, session, _OBSERVE_TIMEOUT_S
        )
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
