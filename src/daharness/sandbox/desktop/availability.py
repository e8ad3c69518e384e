"""Whether this machine can give a sandbox a desktop, and if not, why (for `daharness doctor`)."""

from __future__ import annotations

import importlib.util
import os
import shutil
from typing import Any

from daharness.core.errors import UserError
from daharness.sandbox.once import computed_once

INSTALL_HINT = "pip install -e '.[desktop]' and bash scripts/setup-desktop.sh (see README)"
# program -> the Debian package that has it
PROGRAMS = {
    "Xvfb": "xvfb",
    "openbox": "openbox",
    "chromium": "chromium",
    "dbus-daemon": "dbus",
    "/usr/libexec/at-spi2-registryd": "at-spi2-core",
    "nsenter": "util-linux",
}
# the applications a task may open on the screen: program -> Debian package
APPLICATIONS = {"soffice": "libreoffice-calc", "lxterminal": "lxterminal"}
# import name -> the PyPI package of the `desktop` extra
MODULES = {
    "Xlib": "python-xlib",
    "PIL": "pillow",
    "jeepney": "jeepney",
    "pyautogui": "pyautogui",
    "jupyterlab": "jupyterlab",
}


def _program(name: str) -> str | None:
    return name if name.startswith("/") and os.access(name, os.X_OK) else shutil.which(name)


@computed_once
def desktop_problem() -> str | None:
    """Why a desktop cannot start here (None: it can)."""
    if os.getuid() != 0:
        return (
            "the desktop needs daharness to run as root: its display and the harness's observer run under "
            "a user id of their own, which agent code cannot signal or trace"
        )
    missing = [f"{name} ({package})" for name, package in PROGRAMS.items() if _program(name) is None]
    if missing:
        return f"missing programs: {', '.join(missing)}; install them with {INSTALL_HINT}"
    absent = [f"{module} ({package})" for module, package in MODULES.items() if not _importable(module)]
    if absent:
        return f"missing Python packages: {', '.join(absent)}; install them with {INSTALL_HINT}"
    return None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_desktop() -> None:
    """Refuse, with the one-line reason, a desktop this machine cannot give."""
    problem = desktop_problem()
    if problem:
        raise UserError(f"no desktop here: {problem}")


def desktop_status() -> dict[str, Any]:
    """What `daharness doctor` says about the desktop."""
    problem = desktop_problem()
    return {
        "available": problem is None,
        "problem": problem,
        "programs": {name: _program(name) for name in PROGRAMS},
        "applications": {name: _program(name) for name in APPLICATIONS},
        "python_packages": {package: _importable(module) for module, package in MODULES.items()},
        "install": INSTALL_HINT,
    }
