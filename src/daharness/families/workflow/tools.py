"""Commands that Spider2-V scripts call and a sandbox has no use for, as harmless stand-ins on PATH.

The official scripts were written for a desktop VM: they `conda activate` an environment, open
`gnome-terminal`, VS Code or a browser, and may pipe a password to `sudo`. In a sandbox the tools are on
PATH already and there is no screen, so `conda activate` and the GUI launchers do nothing, and `sudo`
runs its command as the sandbox's own user (what needs root still fails, as it should). The scripts
also `source ~/anaconda3/etc/profile.d/conda.sh`: the checks get a stand-in `~/anaconda3` whose files
define nothing (`conda_home`).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from daharness.families.workflow.apps import conda_sh

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


_SOURCED = "# a stand-in of conda's file: `conda` is a stand-in command on PATH, nothing to define here\n"


@functools.cache
def tools_dir() -> Path:
    """A private folder of the stand-in commands (made once per process, removed at exit)."""
    return _folder(
        "daharness-workflow-tools-",
        {name: _NO_OP for name in GUI_LAUNCHERS} | {"conda": _CONDA, "sudo": _SUDO},
    )


@functools.cache
def conda_home(*, apps: bool = False) -> Path:
    """A stand-in of `~/anaconda3` for the checks: the files scripts source define nothing, its `conda`
    is the stand-in command (made once per process, removed at exit). `apps`: its `conda.sh` defines
    the `conda` that activates the applications' environments (Dagster, Airflow, Superset tasks)."""
    files = {
        "etc/profile.d/conda.sh": conda_sh() if apps else _SOURCED, "bin/activate": _SOURCED, "bin/deactivate": _SOURCED,
        "bin/conda": _CONDA, "condabin/conda": _CONDA,
    }  # fmt: skip
    return _folder("daharness-workflow-conda-", files)


def _folder(prefix: str, files: dict[str, str]) -> Path:
    """A new folder holding `files` (executable, readable by the sandbox's user), removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
    return folder
