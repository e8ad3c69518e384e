"""The official `*_webui_init` and `astro_refresh_page` setup steps on a sample's desktop.

Officially these steps drive the VM's Chrome with Playwright before the agent starts: the application's
page is opened in a new tab (Superset's, Dagster's: only when no tab shows it yet), Airflow's and
Superset's login forms are filled with the task's user and submitted, Dagster's pop-ups are closed, the
Dagster assets are materialized through the page when the task asks, and `astro_refresh_page` reloads
the first tab. Here the desktop's controller does the same over the browser's DevTools pipe, which no
agent code can reach: the page scripts below are the harness's, never the agent's. The steps are done
again in the checks' environment, whose browser is new, before its page checks (the family's
`check_pages`). Dagster's `materialize_assets` action is not done here (the two tasks that ask for it do
not check its result). Without a desktop the steps are health checks only (services.wait_healthy).
"""

from __future__ import annotations

import json
import time
from typing import Any

from daharness.core.desktop import Desktop, Tab
from daharness.core.errors import InfrastructureError

SERVICE_URLS = {
    "dagster": "http://localhost:3000",
    "airflow": "http://localhost:8080",
    "superset": "http://localhost:8088",
}
_PAGE_WAIT_S = 60.0
# what shows that a login went through (the official setup waits for the same)
_LOGGED_IN = {"airflow": 'a[rel="home"]', "superset": 'a[href="/superset/welcome/"]'}
_POPUP_BUTTONS = ("Skip", "Dismiss", "Close")
_POPUP_WAIT_S = 5.0  # Playwright's default wait for each button, as the official close_popups has it

_FILL_LOGIN = """(() => {
  const user = document.querySelector('input#username');
  const password = document.querySelector('input#password');
  const button = document.querySelector('input[type="submit"][value="Sign In" i]');
  if (!user || !password || !button) return false;
  user.value = USER; password.value = PASSWORD; button.click();
  return true;
})()"""
_CLICK_BUTTON = """(() => {
  const found = [...document.querySelectorAll('button')].find(
    b => b.textContent.includes(TEXT) && !b.disabled && b.offsetParent !== null);
  if (!found) return false;
  found.click();
  return true;
})()"""
_READY = "location.href !== 'about:blank' && document.readyState === 'complete'"


def run_init_step(screen: Desktop, step_args: dict[str, Any]) -> str:
    """Do one official web UI setup step on the screen; what was done, as one line."""
    kind, service = str(step_args.get("official", "")), str(step_args.get("service", ""))
    if kind == "astro_refresh_page":
        return _refresh_first_tab(screen)
    url = str(step_args.get("url") or SERVICE_URLS[service])
    tab = None if service == "airflow" else _tab_showing(screen, url)
    opened = tab is None
    if tab is None:
        try:
            tab = screen.open_url(url, timeout=_PAGE_WAIT_S)
        except RuntimeError as exc:  # the controller's answer: the page did not load in time, or the like
            raise InfrastructureError(
                f"the setup's {kind}: {url} did not open in the browser ({exc})"
            ) from None
    done = [f"{service}: {url} {'opened' if opened else 'already shown'}"]
    actions = [dict(action) for action in step_args.get("actions", []) if isinstance(action, dict)]
    if service == "superset" and opened:  # the official Superset step always logs a new page in
        actions.insert(0, {"type": "login"})
    for action in actions:
        done.append(_run_action(screen, tab["id"], service, action))
    if service == "airflow":  # the official step closes the browser's first page (its bing.com)
        first = screen.tabs()[:1]
        if first and first[0]["id"] != tab["id"]:
            screen.close_tab(first[0]["id"])
    return "; ".join(done)


def _run_action(screen: Desktop, tab: str, service: str, action: dict[str, Any]) -> str:
    kind = str(action.get("type", ""))
    if kind == "login":
        return _log_in(
            screen, tab, service, str(action.get("username", "admin")), str(action.get("password", "admin"))
        )
    if kind == "close_popups":
        closed = [text for text in _POPUP_BUTTONS if _click_when_shown(screen, tab, text, _POPUP_WAIT_S)]
        return f"pop-ups closed: {', '.join(closed) or 'none shown'}"
    return f"{kind}: not done on this desktop"


def _log_in(screen: Desktop, tab: str, service: str, user: str, password: str) -> str:
    script = _FILL_LOGIN.replace("USER", json.dumps(user)).replace("PASSWORD", json.dumps(password))
    if not _wait_for(screen, tab, script, _PAGE_WAIT_S):
        return "login: no login form shown"
    home = f"{_READY} && document.querySelector({json.dumps(_LOGGED_IN.get(service, 'body'))}) !== null"
    if not _wait_for(screen, tab, home, _PAGE_WAIT_S):
        return f"login as {user}: the home page did not show in time"
    return f"logged in as {user}"


def _click_when_shown(screen: Desktop, tab: str, text: str, timeout_s: float) -> bool:
    return _wait_for(screen, tab, _CLICK_BUTTON.replace("TEXT", json.dumps(text)), timeout_s)


def _refresh_first_tab(screen: Desktop) -> str:
    tabs = screen.tabs()
    if not tabs:
        return "astro_refresh_page: no page to reload"
    _evaluate(screen, tabs[0]["id"], "location.reload(); true")
    _wait_for(screen, tabs[0]["id"], _READY, _PAGE_WAIT_S)
    return f"reloaded {tabs[0]['url']}"


def _tab_showing(screen: Desktop, url: str) -> Tab | None:
    return next((tab for tab in screen.tabs() if tab["url"].startswith(url)), None)


def _wait_for(screen: Desktop, tab: str, expression: str, timeout_s: float) -> bool:
    """Evaluate `expression` in the tab until it is true (a page still loading answers nothing)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if _evaluate(screen, tab, expression) is True:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def _evaluate(screen: Desktop, tab: str, expression: str) -> Any:
    try:
        return screen.evaluate(tab, expression)
    except RuntimeError:  # the page is navigating: its context is gone for a moment
        return None
