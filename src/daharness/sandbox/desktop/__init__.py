"""A desktop in a sample's sandbox: a 1920x1080 screen with a window manager, Chromium (its DevTools a
pipe of the controller's, out of agent code's reach), and the applications tasks open (LibreOffice Calc,
JupyterLab in the browser, a terminal), all on the sandbox's own network and process table.

Who runs what: agent-visible actions (pyautogui code, the JSON actions) run in the agent's kernel, as
the agent's user; the display, the window manager, the accessibility bus and Chromium run under a user
id of their own with the controller (`daharness_desktop`), which is the only source of screenshots and
accessibility trees, read over connections it opened before any agent code ran. Applications the
agent works in (LibreOffice, JupyterLab, the terminal) run as the agent, since they read and write its
files.

The names below are imported when first used (PEP 562): a run whose samples have no desktop imports
none of the session's modules, nor the action models they build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daharness.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from daharness.sandbox.desktop.apps import launch_command
    from daharness.sandbox.desktop.availability import check_desktop, desktop_problem, desktop_status
    from daharness.sandbox.desktop.session import AGENT_ENV, DESKTOP_PROCESSES, DEVTOOLS_PORTS, DesktopSession
    from daharness.sandbox.desktop.views import build_view, mark_elements

_PROVIDERS: dict[str, tuple[str, ...]] = {
    "apps": ("launch_command",),
    "availability": ("check_desktop", "desktop_problem", "desktop_status"),
    "session": ("AGENT_ENV", "DESKTOP_PROCESSES", "DEVTOOLS_PORTS", "DesktopSession"),
    "views": ("build_view", "mark_elements"),
}
__getattr__ = lazy_attributes(__name__, _PROVIDERS)


__all__ = [
    "AGENT_ENV",
    "DESKTOP_PROCESSES",
    "DEVTOOLS_PORTS",
    "DesktopSession",
    "build_view",
    "check_desktop",
    "desktop_problem",
    "desktop_status",
    "launch_command",
    "mark_elements",
]
