"""What a Spider2-V task may need that a local sandbox cannot give, found by reading its files.

Each check returns the reason a task cannot run here, or None. The loader lists such tasks in
`Suite.unsupported` with the reason instead of dropping them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
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


def setup_step_need(step_type: str) -> str | None:
    if step_type in _REMOTE_STEPS:
        return f"setup step '{step_type}' {_REMOTE_STEPS[step_type]}"
    return None


def script_need(path: Path) -> str | None:
    """Why a setup or evaluation script cannot run in a sandbox, if it cannot."""
    text = path.read_text(encoding="utf-8", errors="replace")
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for pattern, reason in _SCRIPT_NEEDS:
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
