"""What a Spider2-V task may need that a local sandbox cannot give, found by reading its files.

Each check returns the reason a task cannot run here, or None. The loader lists such tasks in
`Suite.unsupported` with the reason instead of dropping them.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# setup steps that only act on the GUI (open a window, a browser, wait): nothing to do without a desktop
GUI_STEPS = frozenset(
    {
        "launch",
        "open",
        "google_chrome_browser",
        "chrome_open_tabs",
        "activate_window",
        "close_window",
        "sleep",
    }
)
GUI_COMMAND = re.compile(r"\b(pyautogui|xdotool|wmctrl)\b")
# setup steps that need what only the official VM and its accounts have
_REMOTE_STEPS = {
    "download": "downloads files from the internet",
    "googledrive": "needs a Google Drive account",
    "login": "signs into a web account",
}
_SCRIPT_NEEDS = (
    (
        re.compile(r"\bdate\s+-s\b|\btimedatectl\b"),
        "moves the system clock (sudo date), which a sandbox cannot do",
    ),
    (re.compile(r"\bdocker\b"), "needs Docker"),
    (
        re.compile(r"\b(curl|wget)\b[^\n]*https?://(localhost|127\.0\.0\.1)\b"),
        "asks a server on localhost that must still run after the agent (its processes are stopped then)",
    ),
    (
        re.compile(r"\b(curl|wget)\b[^\n]*https?://|\bpip3? install\b|\bgit clone\b"),
        "downloads from the internet",
    ),
)
_NETWORK_CODE = re.compile(
    r"(requests\.(get|post)|urlopen|urlretrieve|read_(csv|json|html|excel|parquet))\(\s*[rfb]?['\"]https?://"
)
_NLTK_DATA = re.compile(r"\bnltk\.(download|corpus|data)\b")
OUTPUT_FUNCS = frozenset({"compare_notebook_outputs", "compare_ipynb_files"})


_URL_HOST = re.compile(r"https?://([A-Za-z0-9.-]+)")
# hosts named in code only as documentation links or in Astro's template files
_DOCUMENT_HOSTS = re.compile(
    r"^(docs\.|www\.bing\.com$|github\.com$|www\.esa\.int$|superset\.apache\.org$|developer\.mozilla\.org$|"
    r"localhost$|127\.)"
)
_TEMPLATE_FILES = re.compile(r"(^|/)(\.astro/|dags/exampledag\.py$)")


def web_api_need(folder: Path, instruction: str, standins: frozenset[str] = frozenset()) -> str | None:
    """Why a task's own code (its Python files, also inside its zip archives, Astro's template files
    aside) or its instruction calls a public web API that no sandbox here reaches, having no local
    stand-in (`standins`: the hosts that have one); else None."""
    verbose = folder / "verbose_instruction.txt"
    texts = [instruction, verbose.read_text(encoding="utf-8", errors="replace") if verbose.is_file() else ""]
    for path in sorted(folder.iterdir()):
        if path.suffix in (".py", ".sh"):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
        elif path.suffix == ".zip":
            with contextlib.suppress(zipfile.BadZipFile, OSError), zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    if name.endswith(".py") and not _TEMPLATE_FILES.search(name):
                        texts.append(archive.read(name).decode(errors="replace"))
    for text in texts:
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        for host in _URL_HOST.findall(code):
            if not _DOCUMENT_HOSTS.search(host) and host.lower() not in standins:
                return (
                    f"its code calls the web API {host}, which the sandbox cannot reach (no local stand-in)"
                )
    return None


# the official setup steps that start an application's web UI the harness does not run: a task with one
# needs that application all through (its init.sh starts it, its checks ask it), so it says so first
_APPLICATION_STEPS = {
    "airbyte_webui_init": "Airbyte, which the harness does not run (its platform is a set of Docker containers "
    "that init.sh starts with run-ab-platform.sh and the checks ask on localhost:8000; the applications run "
    "here are Dagster, Airflow and Superset)",
    "metabase_webui_init": "Metabase, which the harness does not run (a Java server that init.sh starts and the "
    "checks ask on localhost:3000; the applications run here are Dagster, Airflow and Superset)",
}


def application_need(config: list[Any]) -> str | None:
    """Why a task's setup (its `config` steps) needs an application the harness does not run, or None."""
    for step in config:
        kind = step.get("type") if isinstance(step, dict) else None
        if kind in _APPLICATION_STEPS:
            return f"setup step '{kind}' needs {_APPLICATION_STEPS[kind]}"
    return None


def setup_step_need(step_type: str) -> str | None:
    if step_type in _REMOTE_STEPS:
        return f"setup step '{step_type}' {_REMOTE_STEPS[step_type]}"
    return None


_LOCAL_PORT = re.compile(r"\b(curl|wget)\b[^\n]*https?://(?:localhost|127\.0\.0\.1)(?::(\d+))?")


_PIP_INSTALL = re.compile(r"\bpip3? install\b([^\n;&|<>]*)")  # up to a redirection or the next command


def _installed_pip_lines(code: str, installed: Callable[[str], bool]) -> str:
    """The code without its `pip install` commands whose packages are all installed already (pip is
    then satisfied without an index)."""

    def drop(match: re.Match[str]) -> str:
        names = [
            re.split(r"[\[<>=~!]", word)[0] for word in match.group(1).split() if not word.startswith("-")
        ]
        return "" if names and all(installed(name) for name in names) else match.group(0)

    return _PIP_INSTALL.sub(drop, code)


def script_need(
    path: Path,
    services: frozenset[int] | None = None,
    *,
    setup: bool = False,
    live: bool = False,
    installed: Callable[[str], bool] | None = None,
    agent_servers: bool = False,
) -> str | None:
    """Why a setup or evaluation script cannot run in a sandbox, if it cannot. `services`: the ports
    of the services the harness runs for the task (Docker's commands then have local stand-ins, and
    only a server on another port, one the agent starts, is out of reach after the agent). `live`: the
    script runs before the agent's processes are stopped (a postconfig step on a sample's desktop),
    while the servers on localhost still answer. `installed`: whether a Python package is installed
    where the script's `pip install` would put it. `agent_servers`: the application's servers the agent
    starts on other ports are started again for the checks (Dagster's)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    if installed is not None:
        code = _installed_pip_lines(code, installed)
    if live:
        code = _LOCAL_PORT.sub("", code)
    if services is not None:
        for match in _LOCAL_PORT.finditer(code):
            port = int(match.group(2) or 80)
            if port not in services and not agent_servers:
                return f"{path.name} asks a server on localhost:{port}, which the agent starts and which is stopped before the checks"
        code = _LOCAL_PORT.sub("", code)
        if setup and "172.17.0.1" in code:
            return f"{path.name} connects to Docker's host address 172.17.0.1, which the sandbox's loopback lacks"
    for pattern, reason in _SCRIPT_NEEDS:
        if services is not None and reason == "needs Docker":
            continue
        if pattern.search(code):
            return f"{path.name} {reason}"
    return None


def notebook_code(path: Path) -> str:
    """The code cells of a notebook, joined (empty for an unreadable file)."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    cells = notebook.get("cells", []) if isinstance(notebook, dict) else []
    return "\n".join(
        _source(cell) for cell in cells if isinstance(cell, dict) and cell.get("cell_type") == "code"
    )


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def executed_code_need(code: str, where: str) -> str | None:
    """Why code whose outputs are compared with a gold run cannot give the same outputs here."""
    if match := _NETWORK_CODE.search(code):
        return f"{where} reads from the internet ({match.group(0)}...)"
    if _NLTK_DATA.search(code):
        return f"{where} needs NLTK data, which is downloaded from the internet"
    missing = sorted(name for name in imported_modules(code) if importlib.util.find_spec(name) is None)
    if missing:
        return f"{where} needs Python packages that are not installed: {', '.join(missing)}"
    return None


def imported_modules(code: str) -> set[str]:
    """Top-level module names that `import` statements of the code name (magics and shell lines skipped)."""
    lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names
