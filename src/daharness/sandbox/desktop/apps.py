"""The applications tasks open on the screen, as commands the agent's kernel starts (they run as the
agent, since they read and write its files), detached from the step that starts them."""

from __future__ import annotations

import shlex
import sys

APPLICATION_LOGS = "/tmp/.daharness-apps"
JUPYTER_PORT = 8888


def launch_command(command: list[str], name: str) -> str:
    """A bash line that starts `command` in a session of its own, its output in a log of its own, so
    that the step returns at once and later steps' output stays clean."""
    log = f"{APPLICATION_LOGS}/{shlex.quote(name)}.log"
    return f"mkdir -p {APPLICATION_LOGS} && setsid {shlex.join(command)} > {log} 2>&1 < /dev/null &"


def calc(path: str) -> list[str]:
    """LibreOffice Calc on a file. Its profile goes to /tmp: the sandbox's user has no home folder of
    its own in the password database, where LibreOffice looks for one."""
    return [
        "soffice",
        "--calc",
        "--norestore",
        "--nologo",
        "-env:UserInstallation=file:///tmp/.libreoffice",
        path,
    ]


# the sandbox's Python draws with Agg (no screen); a notebook on the screen draws its plots inline, as in
# the official VM's JupyterLab (Agg there only warns "FigureCanvasAgg is non-interactive" and shows nothing)
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def jupyterlab(root: str, port: int = JUPYTER_PORT) -> list[str]:
    """JupyterLab serving `root` on the sandbox's loopback, without a token: only this sandbox's own
    processes can reach its network. Its kernels plot inline."""
    return [
        "env", f"MPLBACKEND={INLINE_BACKEND}", sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        f"--ServerApp.root_dir={root}", "--IdentityProvider.token=", "--ServerApp.password=",
    ]  # fmt: skip


def terminal(directory: str) -> list[str]:
    return ["lxterminal", f"--working-directory={directory}"]
