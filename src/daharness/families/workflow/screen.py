"""The GUI steps of Spider2-V tasks (`open`, `launch`, `google_chrome_browser`, `activate_window`, a
pyautogui command...) done on a sandbox's desktop, as the official controller does them in its VM.

Without a desktop these steps do nothing (the file-based run). With one, setup steps open the task's
files and applications on the screen before the agent starts, and the GUI steps of the postconfig
(activate the workbook's window, press Ctrl+S; a script that asks the screen's applications on localhost,
`wait.sh`) run on the screen right after the agent, before anything it left running is stopped: they save
what the agent left unsaved in the application, as officially.

Pages on the internet (the official tasks open bing.com in the browser) cannot load here: the browser is
started and only pages of the sandbox's own loopback are opened.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from daharness.core.backend import SandboxBackend
from daharness.core.task import SetupStep
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


def settle(box: Any, since: float, timeout_s: float = 30.0) -> None:
    """Wait until what the screen's applications write in the home since `since` (time.time()) is
    written: a save after Ctrl+S (at most `timeout_s` when nothing is written)."""
    box.python(_SETTLE.replace("TIMEOUT", str(timeout_s)).replace("SINCE", repr(since)))


SCREEN_GETTERS = ("active_tab_info",)
_PAGE_LOAD_S = 30.0  # Playwright's `goto` waits this long by default


def collect_screen(box: Any, getters: set[str]) -> dict[str, Any]:
    """What the official getters read on the screen, read now (right after the agent, while what it left
    running still serves its pages): `active_tab_info`, the browser's shown tab (url, title, content);
    `active_tab_url`, its url and title only."""
    found: dict[str, Any] = {}
    if getters & {"active_tab_info", TAB_URL}:
        tabs = _shown_tabs(box)
        if tabs:
            tab = tabs[0]
            if TAB_URL in getters:
                found[TAB_URL] = {"url": tab["url"], "title": tab["title"]}
            if "active_tab_info" in getters:
                content = box.desktop_request("html", id=tab["id"]).get("html", "")
                found["active_tab_info"] = {"url": tab["url"], "title": tab["title"], "content": content}
    return found


def check_page(box: Any, output: str | None, css_paths: list[str], timeout_ms: float) -> dict[str, Any]:
    """The official `html_check` on the live browser: the script's `output` (None: it did not run) is a
    URL, opened in a new tab of the browser the agent leaves; each CSS path must then match a visible
    element within `timeout_ms` (the tab is closed after). What was found, for `getters.html_check`."""
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
    try:
        answer = box.desktop_request(
            "check_page", url=url, selectors=css_paths, wait=wait_s,
            timeout=_PAGE_LOAD_S + wait_s * len(css_paths) + 30,
        )  # fmt: skip
    except (RuntimeError, OSError) as exc:  # the browser's failure, or no desktop: the check failed
        found["error"] = f"{type(exc).__name__}: {exc}"
        return found
    found.update(error=answer.get("problem"), selectors=answer.get("selectors", []))
    return found


def _shown_tabs(box: Any, timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """The tab the browser shows. A window covered by another reports its page hidden: a browser with
    one tab shows that one. On a loaded machine a tab may be listed for a moment with no url yet: read
    again, for at most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        every = box.desktop_request("tabs")["tabs"]
        shown = [tab for tab in every if tab["active"]] or (every if len(every) == 1 else [])
        if (shown and all(tab["url"] for tab in shown)) or time.monotonic() > deadline:
            return shown
        time.sleep(0.2)


def has_desktop(box: SandboxBackend) -> bool:
    return bool(getattr(box, "has_desktop", False))


def is_gui_step(step: SetupStep) -> bool:
    return step.kind == "open"


def is_live_script(step: SetupStep) -> bool:
    """A postconfig script that asks the screen's applications on localhost (the loader's GUI step)."""
    return is_gui_step(step) and step.args.get("official") == "script_and_execute"


def run_gui_step(box: Any, step: SetupStep, home: str) -> str:
    """Do one GUI step on the box's screen; what was done, as one line for the trajectory."""
    args = step.args
    kind = str(args.get("official", ""))
    if kind == "open":
        return open_file(box, _in_home(str(args.get("path", "")), home))
    if kind == "launch":
        return launch(box, args.get("command", ""), home)
    if kind in ("google_chrome_browser", "chrome_open_tabs"):
        urls = args.get("urls") or args.get("urls_to_open") or []
        return open_pages(box, [str(url) for url in urls])
    if kind == "activate_window":
        return activate_window(box, str(args.get("window_name", "")), bool(args.get("strict", False)))
    if kind == "sleep":
        seconds = min(float(args.get("seconds", 1)), _SLEEP_CAP_S)
        time.sleep(seconds)
        return f"slept {seconds:g} s"
    if kind in ("execute", "command"):
        return execute(box, args.get("argv") or args.get("command", ""))
    return f"{kind}: not done on this desktop"


def open_file(box: Any, path: str) -> str:
    """Open a file in its application (a spreadsheet in LibreOffice Calc) and wait for its window."""
    name = PurePosixPath(path).name
    spreadsheet = path.lower().endswith(_SPREADSHEETS)
    if spreadsheet:
        prepare_calc(box)
        box.start_program(apps.calc(path), "calc")
    else:
        box.start_program(["xdg-open", path], "open")
    window = wait_for_window(box, name)
    if window is None:
        return f"opened {path} (no window showed it in time)"
    if spreadsheet and not wait_for_cells(box):
        return f"opened {path} (its cells were not shown in time)"
    box.desktop_request("activate", window=window["id"])  # the keyboard goes to it, as in the official VM
    return f"opened {path}"


def wait_for_cells(box: Any, timeout_s: float = _WINDOW_WAIT_S) -> bool:
    """Whether the sheet's cells came on the screen (its window shows before the document is loaded and
    drawn, and keys pressed before then are lost)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(e.tag == "table-cell" for e in box.observe_desktop("a11y_tree").elements):
            return True
        time.sleep(0.2)
    return False


def prepare_calc(box: Any) -> None:
    """LibreOffice's profile, written before its first start: saving an xlsx asks no question."""
    box.bash(
        f"[ -e {_PROFILE} ] || {{ mkdir -p {PurePosixPath(_PROFILE).parent} && "
        f"printf %s {shlex.quote(_NO_FORMAT_QUESTION)} > {_PROFILE}; }}"
    )


def launch(box: Any, command: Any, home: str) -> str:
    """Start a program as the official `launch` does; JupyterLab (`jupyter lab DIR`, as the notebook tasks
    start it) is started on the sandbox's loopback and shown in the browser."""
    argv = [str(part) for part in command] if isinstance(command, list) else ["bash", "-c", str(command)]
    if match := _JUPYTER.search(" ".join(argv)):
        words = [w for w in match.group(1).split() if not w.startswith("-")]
        return open_jupyterlab(box, _in_home(words[0], home) if words else home)
    box.start_program(argv, "launch")
    return f"launched {shlex.join(argv)[:200]}"


def open_jupyterlab(box: Any, path: str) -> str:
    """JupyterLab as `jupyter lab PATH` opens it: a folder is its root; a file (a notebook) is opened,
    its folder the root (JupyterLab refuses a file as its root folder)."""
    is_file = box.bash(f"test -f {shlex.quote(path)}").exit_status == 0
    root = str(PurePosixPath(path).parent) if is_file else path
    box.start_program(apps.jupyterlab(root), "jupyterlab")
    base = f"http://127.0.0.1:{apps.JUPYTER_PORT}/lab"
    url = f"{base}/tree/{quote(PurePosixPath(path).name)}" if is_file else base
    probe = f"import urllib.request; urllib.request.urlopen('{base}', timeout=2)"
    waited = box.bash(
        f'for i in $(seq 600); do python -c "{probe}" 2>/dev/null && exit 0; sleep 0.1; done; exit 1'
    )
    if waited.exit_status != 0:
        return f"JupyterLab in {root} did not answer in time"
    tab = box.desktop_request("open_url", url=url, timeout=60)["tab"]
    # the page loads before JupyterLab's application draws itself: wait for its shell
    deadline = time.monotonic() + _WINDOW_WAIT_S
    while "jp-main-dock-panel" not in box.desktop_request("html", id=tab["id"]).get("html", ""):
        if time.monotonic() > deadline:
            return f"JupyterLab on {root} opened, not drawn in time"
        time.sleep(0.2)
    return f"JupyterLab opened on {path}"


def open_pages(box: Any, urls: list[str]) -> str:
    """The browser with the pages of the sandbox's loopback among `urls` (internet pages cannot load)."""
    local = [url for url in urls if _LOCAL_URL.match(url)]
    for url in local:
        box.desktop_request("open_url", url=url)
    box.desktop_request("tabs")  # the browser answers (it is started with the desktop)
    skipped = len(urls) - len(local)
    return f"browser: {len(local)} page(s) opened" + (
        f", {skipped} internet page(s) skipped" if skipped else ""
    )


def activate_window(box: Any, title: str, strict: bool) -> str:
    window = wait_for_window(box, title, strict=strict)
    if window is None:
        return f"no window titled {title!r}"
    box.desktop_request("activate", window=window["id"])
    return f"activated {window['title']!r}"


def execute(box: Any, command: Any) -> str:
    """A GUI command: `python -c CODE` with pyautogui runs on the screen, anything else in bash."""
    argv = shlex.split(command) if isinstance(command, str) else [str(part) for part in command]
    if len(argv) == 3 and _PYTHON_C.match(PurePosixPath(argv[0]).name) and argv[1] == "-c":
        observation = box.act_on_desktop(argv[2])
    else:
        observation = box.bash(f"cd ~ && {shlex.join(argv)}")
    status = "done" if observation.ok else f"failed: {observation.stderr[-200:] or observation.error}"
    return f"{shlex.join(argv)[:120]}: {status}"


def wait_for_window(
    box: Any, title: str, *, strict: bool = False, timeout_s: float = _WINDOW_WAIT_S
) -> dict[str, Any] | None:
    """The first window whose title is `title` (strict) or holds it, once one shows; None after the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        for window in box.desktop_request("windows")["windows"]:
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
