"""The GUI steps of Spider2-V tasks (`open`, `launch`, `google_chrome_browser`, `activate_window`, a
pyautogui command...) done on a sandbox's desktop, as the official controller does them in its VM.

Without a desktop these steps do nothing (the file-based run). With one, setup steps open the task's
files and applications on the screen before the agent starts, and the GUI steps of the postconfig
(activate the workbook's window, press Ctrl+S; a script that asks the screen's applications on localhost,
`wait.sh`) run on the screen right after the agent, before anything it left running is stopped: they save
what the agent left unsaved in the application, as officially. Then every process of the agent is
stopped, and only then does the harness read what the browser shows (`collect_screen`); page checks
(`check_page`) run later, in the checks' environment (see the family's `finish`).

Pages on the internet (the official tasks open bing.com in the browser) cannot load here: the browser is
started and only pages of the sandbox's own loopback are opened.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Set as AbstractSet
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, urlsplit

from daharness.core.backend import SandboxBackend, require_desktop
from daharness.core.desktop import Desktop, PageCheck, Tab, Window
from daharness.core.record import Suspicion
from daharness.core.task import SetupStep
from daharness.families.workflow import getters
from daharness.families.workflow.getters import TAB_URL
from daharness.sandbox.desktop import apps

_WINDOW_WAIT_S = 90.0
_SLEEP_CAP_S = 10.0
_SPREADSHEETS = (".xlsx", ".xls", ".xlsm", ".ods", ".csv")
_JUPYTER = re.compile(r"\bjupyter(?:-|\s+)(?:lab|notebook)\b((?:\s+[^\s;&|]+)*)")
_LOCAL_URL = re.compile(r"^https?://(127\.0\.0\.1|localhost)(:\d+)?(/|$)")
_PYTHON_C = re.compile(r"^python[0-9.]*$")
# LibreOffice's profile setting that keeps Ctrl+S from asking "keep the current format?" for xlsx
# (the official VM's snapshot answers it once and for all)
_NO_FORMAT_QUESTION = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="WarnAlienFormat" oor:op="fuse">\
<value>false</value></prop></item>
</oor:items>
"""
_PROFILE = "/tmp/.libreoffice/user/registrymodifications.xcu"


# until a file of the home was written since the GUI steps began, no LibreOffice save is under way (it
# writes `lu*.tmp` beside the file, then renames it) and the files stood still for half a second: a save
# that Ctrl+S started on a loaded machine may begin seconds after the keys were sent
_SETTLE = """
import os, time
def listing():
    found = {}
    for folder, dirs, files in os.walk('.'):
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        for name in files:
            try:
                info = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            found[os.path.join(folder, name)] = (info.st_size, info.st_mtime)
    return found
deadline = time.monotonic() + TIMEOUT
last = None
while time.monotonic() < deadline:
    now = listing()
    saving = any(os.path.basename(p).startswith('lu') and p.endswith('.tmp') for p in now)
    written = any(mtime >= SINCE for _, mtime in now.values())
    if now == last and written and not saving:
        break
    last = now
    time.sleep(0.5)
"""


def settle(box: SandboxBackend, since: float, timeout_s: float = 30.0) -> None:
    """Wait until what the screen's applications write in the home since `since` (time.time()) is
    written: a save after Ctrl+S (at most `timeout_s` when nothing is written)."""
    box.python(_SETTLE.replace("TIMEOUT", str(timeout_s)).replace("SINCE", repr(since)))


SCREEN_GETTERS = ("active_tab_info",)
_PAGE_LOAD_S = 30.0  # Playwright's `goto` waits this long by default
_SETTLE_PAGES_S = 15.0


def collect_screen(screen: Desktop, getters: AbstractSet[str]) -> dict[str, Any]:
    """What the official getters read on the screen, read once the agent's processes are stopped (the
    pages the browser holds stay as they were): `active_tab_info`, the browser's shown tab (url, title,
    content); `active_tab_url`, its url and title only. The tabs come from the browser process and the
    content from the page's DOM, each read with a time limit (a RuntimeError when the page does not
    answer)."""
    found: dict[str, Any] = {}
    if getters & {"active_tab_info", TAB_URL}:
        tabs = _shown_tabs(screen)
        if tabs:
            tab = tabs[0]
            if TAB_URL in getters:
                found[TAB_URL] = {"url": tab["url"], "title": tab["title"]}
            if "active_tab_info" in getters:
                content = screen.page_html(tab["id"])
                found["active_tab_info"] = {"url": tab["url"], "title": tab["title"], "content": content}
    return found


def check_page(
    box: SandboxBackend, output: str | None, css_paths: list[str], timeout_ms: float
) -> dict[str, Any]:
    """The official `html_check` in the checks' environment: the script's `output` (None: it did not run)
    is a URL, opened in a new tab of that environment's browser once its server answers; each CSS path
    must then match a visible element within `timeout_ms` (the tab is closed after). What was found, for
    `getters.html_check`."""
    found: dict[str, Any] = {
        "output": output,
        "url": None,
        "css_paths": css_paths,
        "error": None,
        "selectors": [],
    }
    if output is None:
        return found
    found["url"] = url = output.strip()
    if not url:
        found["error"] = "the script printed no URL"
        return found
    wait_s = timeout_ms / 1000
    wait_for_server(box, url)
    try:
        answer: PageCheck = require_desktop(box).check_page(
            url, css_paths, wait_s, timeout=_PAGE_LOAD_S + wait_s * len(css_paths) + 30
        )
    except (RuntimeError, OSError) as exc:  # the browser's failure, or no desktop: the check failed
        found["error"] = f"{type(exc).__name__}: {exc}"
        return found
    found.update(error=answer["problem"], selectors=answer["selectors"])
    return found


def superset_tabs(screen: Desktop) -> list[dict[str, str]]:
    """The official `superset_localhost_page`, first half, once the agent's processes are stopped: every tab
    of the browser the agent leaves (url, title); the second half (`superset_checks`) loads the ones the
    getter looks at in the checks' environment."""
    return _settled_tabs(screen)


def superset_checks(box: SandboxBackend, tabs: list[dict[str, str]], url: str, title: str) -> dict[str, Any]:
    """The official `superset_localhost_page`, second half, in the checks' environment (its browser logged
    into Superset as the setup did, Superset started again): each tab the getter looks at loaded again in
    a new tab, where the home link must be visible (`getters.superset_localhost_page`)."""
    checks = [
        check_page(box, tab["url"], [getters.SUPERSET_HOME_LINK], 5000)  # Playwright's default wait, 5 s
        for tab in tabs
        if getters.superset_candidate(tab, url, title)
    ]
    return {"tabs": tabs, "checks": checks}


def _settled_tabs(screen: Desktop, timeout_s: float = 15.0) -> list[dict[str, str]]:
    """Every tab's url and title, read again until each tab has a url and a read half a second later is the
    same: a page still loading (the agent's last Enter) changes both, and the official getter waits for each
    page's load first. At most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    previous = None
    while True:
        tabs = [{"url": tab["url"], "title": tab["title"]} for tab in screen.tabs()]
        if (tabs == previous and all(tab["url"] for tab in tabs)) or time.monotonic() > deadline:
            return tabs
        previous = tabs
        time.sleep(0.5)


def _shown_tabs(screen: Desktop, timeout_s: float = 10.0) -> list[Tab]:
    """The tab the browser shows (its window's active tab; one per window). On a loaded machine a tab may
    be listed for a moment with no url yet: read again, for at most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        shown = [tab for tab in screen.tabs() if tab["active"]]
        if (shown and all(tab["url"] for tab in shown)) or time.monotonic() > deadline:
            return shown
        time.sleep(0.2)


def settle_pages(screen: Desktop, timeout_s: float = _SETTLE_PAGES_S) -> str | None:
    """Before the agent's processes are stopped: wait (at most `timeout_s`) until the pages the browser
    shows have loaded, as one would look at a page once it has (a page still coming from a server of the
    agent's would never come after). A note when they had not, or could not be awaited."""
    try:
        settled = screen.settle_pages(timeout_s, timeout=timeout_s + 30)
    except (RuntimeError, OSError) as exc:  # no browser left, say: reading it says why
        return f"the browser's pages were not awaited: {exc}"
    return None if settled else f"the browser's shown pages had not loaded after {timeout_s:g} s"


def stop_agent(screen: Desktop) -> None:
    """Stop every process of the agent's, the desktop left running (`Desktop.stop_agent`): from here on,
    what the screen shows is what the agent left."""
    screen.stop_agent()


def wait_for_server(box: SandboxBackend, url: str, timeout_s: float = _PAGE_LOAD_S) -> None:
    """Wait (at most `timeout_s`) until the sandbox's loopback server of `url` takes connections: a server
    the checks' environment started again may still be starting (a page that does not load fails its
    check)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.hostname not in ("localhost", "127.0.0.1"):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    tries = int(timeout_s / 0.1)
    box.bash(
        f"for i in $(seq {tries}); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && exit 0; "
        "sleep 0.1; done; exit 1",
        timeout=timeout_s + 30,
    )


def debugging_connections(screen: Desktop) -> list[Suspicion]:
    """Connections made to the official VM's DevTools ports since the desktop started (its controller
    holds them: the browser's DevTools is its pipe), as a suspicious action."""
    counts = screen.trapped_connections()
    return [
        Suspicion(kind="browser_debugging", detail=(
            f"{count} connection(s) to 127.0.0.1:{port}, where the official VM's browser takes DevTools "
            "commands (the harness's browser has no such port)"
        ))
        for port, count in sorted(counts.items())
    ]  # fmt: skip


def is_gui_step(step: SetupStep) -> bool:
    return step.kind == "open"


def is_launch(step: SetupStep) -> bool:
    """A setup step that starts a program (a server, say) as the official `launch` does."""
    return is_gui_step(step) and step.args.get("official") == "launch"


def is_live_script(step: SetupStep) -> bool:
    """A postconfig script that asks the screen's applications on localhost (the loader's GUI step)."""
    return is_gui_step(step) and step.args.get("official") == "script_and_execute"


def run_gui_step(box: SandboxBackend, step: SetupStep, home: str) -> str:
    """Do one GUI step on the box's screen (DesktopUnavailable without one); what was done, as one line
    for the trajectory."""
    args = step.args
    kind = str(args.get("official", ""))
    if kind == "open":
        return open_file(box, _in_home(str(args.get("path", "")), home))
    if kind == "launch":
        return launch(box, args.get("command", ""), home)
    if kind in ("google_chrome_browser", "chrome_open_tabs"):
        urls = args.get("urls") or args.get("urls_to_open") or []
        return open_pages(require_desktop(box), [str(url) for url in urls])
    if kind == "activate_window":
        strict = bool(args.get("strict", False))
        return activate_window(require_desktop(box), str(args.get("window_name", "")), strict)
    if kind == "sleep":
        seconds = min(float(args.get("seconds", 1)), _SLEEP_CAP_S)
        time.sleep(seconds)
        return f"slept {seconds:g} s"
    if kind in ("execute", "command"):
        return execute(box, args.get("argv") or args.get("command", ""))
    return f"{kind}: not done on this desktop"


def open_file(box: SandboxBackend, path: str) -> str:
    """Open a file in its application (a spreadsheet in LibreOffice Calc) and wait for its window."""
    screen = require_desktop(box)
    name = PurePosixPath(path).name
    spreadsheet = path.lower().endswith(_SPREADSHEETS)
    if spreadsheet:
        prepare_calc(box)
        screen.start_program(apps.calc(path), "calc")
    else:
        screen.start_program(["xdg-open", path], "open")
    window = wait_for_window(screen, name)
    if window is None:
        return f"opened {path} (no window showed it in time)"
    if spreadsheet and not wait_for_cells(screen):
        return f"opened {path} (its cells were not shown in time)"
    screen.activate(window["id"])  # the keyboard goes to it, as in the official VM
    return f"opened {path}"


def wait_for_cells(screen: Desktop, timeout_s: float = _WINDOW_WAIT_S) -> bool:
    """Whether the sheet's cells came on the screen (its window shows before the document is loaded and
    drawn, and keys pressed before then are lost)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if screen.cells_shown():  # no walk of every cell of a loading sheet
            return True
        time.sleep(0.2)
    return False


def prepare_calc(box: SandboxBackend) -> None:
    """LibreOffice's profile, written before its first start: saving an xlsx asks no question."""
    box.bash(
        f"[ -e {_PROFILE} ] || {{ mkdir -p {PurePosixPath(_PROFILE).parent} && "
        f"printf %s {shlex.quote(_NO_FORMAT_QUESTION)} > {_PROFILE}; }}"
    )


def launch(box: SandboxBackend, command: Any, home: str) -> str:
    """Start a program as the official `launch` does; JupyterLab (`jupyter lab DIR`, as the notebook tasks
    start it) is started on the sandbox's loopback and shown in the browser."""
    argv = [str(part) for part in command] if isinstance(command, list) else ["bash", "-c", str(command)]
    if match := _JUPYTER.search(" ".join(argv)):
        words = [w for w in match.group(1).split() if not w.startswith("-")]
        return open_jupyterlab(box, _in_home(words[0], home) if words else home)
    require_desktop(box).start_program(argv, "launch")
    return f"launched {shlex.join(argv)[:200]}"


def open_jupyterlab(box: SandboxBackend, path: str) -> str:
    """JupyterLab as `jupyter lab PATH` opens it: a folder is its root; a file (a notebook) is opened,
    its folder the root (JupyterLab refuses a file as its root folder)."""
    is_file = box.bash(f"test -f {shlex.quote(path)}").exit_status == 0
    root = str(PurePosixPath(path).parent) if is_file else path
    screen = require_desktop(box)
    screen.start_program(apps.jupyterlab(root), "jupyterlab")
    base = f"http://127.0.0.1:{apps.JUPYTER_PORT}/lab"
    url = f"{base}/tree/{quote(PurePosixPath(path).name)}" if is_file else base
    probe = f"import urllib.request; urllib.request.urlopen('{base}', timeout=2)"
    waited = box.bash(
        f'for i in $(seq 600); do python -c "{probe}" 2>/dev/null && exit 0; sleep 0.1; done; exit 1'
    )
    if waited.exit_status != 0:
        return f"JupyterLab in {root} did not answer in time"
    tab = screen.open_url(url, timeout=60)
    # the page loads before JupyterLab's application draws itself: wait for its shell
    deadline = time.monotonic() + _WINDOW_WAIT_S
    while "jp-main-dock-panel" not in screen.page_html(tab["id"]):
        if time.monotonic() > deadline:
            return f"JupyterLab on {root} opened, not drawn in time"
        time.sleep(0.2)
    return f"JupyterLab opened on {path}"


def open_pages(screen: Desktop, urls: list[str]) -> str:
    """The browser with the pages of the sandbox's loopback among `urls` (internet pages cannot load)."""
    local = [url for url in urls if _LOCAL_URL.match(url)]
    for url in local:
        screen.open_url(url)
    screen.tabs()  # the browser answers (it is started with the desktop)
    skipped = len(urls) - len(local)
    return f"browser: {len(local)} page(s) opened" + (
        f", {skipped} internet page(s) skipped" if skipped else ""
    )


def activate_window(screen: Desktop, title: str, strict: bool) -> str:
    window = wait_for_window(screen, title, strict=strict)
    if window is None:
        return f"no window titled {title!r}"
    screen.activate(window["id"])
    return f"activated {window['title']!r}"


def execute(box: SandboxBackend, command: Any) -> str:
    """A GUI command: `python -c CODE` with pyautogui runs on the screen, anything else in bash."""
    argv = shlex.split(command) if isinstance(command, str) else [str(part) for part in command]
    if len(argv) == 3 and _PYTHON_C.match(PurePosixPath(argv[0]).name) and argv[1] == "-c":
        observation = require_desktop(box).act(argv[2])
    else:
        observation = box.bash(f"cd ~ && {shlex.join(argv)}")
    status = "done" if observation.ok else f"failed: {observation.stderr[-200:] or observation.error}"
    return f"{shlex.join(argv)[:120]}: {status}"


def wait_for_window(
    screen: Desktop, title: str, *, strict: bool = False, timeout_s: float = _WINDOW_WAIT_S
) -> Window | None:
    """The first window whose title is `title` (strict) or holds it, once one shows; None after the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        for window in screen.windows():
            if window["title"] == title or (not strict and title in window["title"]):
                return window
        if time.monotonic() > deadline:
            return None
        time.sleep(0.2)


def _in_home(path: str, home: str) -> str:
    """A path of the official VM's home (/home/user) in the sandbox's home."""
    for prefix in ("/home/user/", "~/"):
        if path.startswith(prefix):
            return f"{home.rstrip('/')}/{path.removeprefix(prefix)}"
    return path.rstrip("/") if path.startswith("/") else f"{home.rstrip('/')}/{path}"
