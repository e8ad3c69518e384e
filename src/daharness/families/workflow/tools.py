"""Commands that Spider2-V scripts call and a sandbox has no use for, as harmless stand-ins on PATH.

The official scripts were written for a desktop VM: they `conda activate` an environment, open
`gnome-terminal`, VS Code or a browser, and may pipe a password to `sudo`. In a sandbox the tools are on
PATH already and there is no screen, so `conda activate` and the GUI launchers do nothing, and `sudo`
runs its command as the sandbox's own user (what needs root still fails, as it should).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

_NO_OP = "#!/bin/sh\n# a desktop application: there is no screen in the sandbox, so it does nothing\nexit 0\n"
GUI_LAUNCHERS = (
    "gnome-terminal", "code", "google-chrome", "chromium", "chromium-browser", "firefox", "xdg-open", "nautilus",
)  # fmt: skip
_CONDA = """#!/bin/sh
# the tools are on PATH already: activating an environment changes nothing
case "$1" in
  activate|deactivate) exit 0 ;;
esac
echo "conda: only 'conda activate' and 'conda deactivate' exist in this sandbox" >&2
exit 1
"""
_SUDO = """#!/bin/sh
# no root in the sandbox: run the command as the sandbox's user (after reading a piped password)
while [ $# -gt 0 ]; do
  case "$1" in
    -S) read -r _ || true; shift ;;
    -E|-H|-n|-k) shift ;;
    -u) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -eq 0 ] && exit 0
exec "$@"
"""


@functools.cache
def tools_dir() -> Path:
    """A private folder of the stand-in commands (made once per process, removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="daharness-workflow-tools-"))
    atexit.register(shutil.rmtree, folder, True)
    scripts = {name: _NO_OP for name in GUI_LAUNCHERS} | {"conda": _CONDA, "sudo": _SUDO}
    for name, text in scripts.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    folder.chmod(0o755)
    return folder
