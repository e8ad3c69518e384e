"""The environment a workflow task's checks run in: from outside what the agent could write.

The checks (`vm_script_output` scripts and postconfig steps) run in the agent's sandbox after it, with
the home as HOME, because what they look at is there. They may execute the task's project files that
the task asks the agent to change (a dbt model, a DAG), and nothing else the agent could write:

- `~/anaconda3` is the harness's stand-in, whose `etc/profile.d/conda.sh` defines nothing;
- the shells' start-up files (`~/.bashrc`, `~/.profile`, `~/.sqliterc`...) are what the setup left there
  (empty when it left none), so no function, alias, PATH or BASH_ENV of the agent's comes with them;
- a `profiles.yml` the setup made is the setup's, and `DBT_PROFILES_DIR` names `~/.dbt` when the setup
  put one there (dbt would otherwise take a `profiles.yml` the agent put in the project folder first); a
  task whose setup makes no profile asks the agent for one, and the agent's is used;
- Python skips the user's site folder (`.pth` files, `usercustomize`) and the current folder (a
  `jupyter.py` in the home), IPython and Jupyter read their settings from a fresh folder, git reads no
  global configuration; PATH and every other variable are the sandbox's own as it starts.

The files are mounted read-only over the home for the checks (`ReadOnlyOverlay`); the agent's stay in
its workspace and artifacts. An agent file at one of these paths, or one that would shadow a command or
a module the checks run, is flagged as a suspicious action; one that nothing can be mounted over (a link,
a FIFO) is flagged too, and the checks do not run.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import sys
from dataclasses import dataclass
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path, PurePosixPath

from daharness.core.backend import ReadOnlyOverlay, SandboxBackend
from daharness.core.record import Suspicion
from daharness.core.task import Task
from daharness.families.workflow.tools import conda_home, tools_dir

START_UP_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout", ".bash_aliases", ".inputrc",
    ".sqliterc", ".duckdbrc",
)  # fmt: skip
CONDA_HOME = "anaconda3"
PROFILES = "profiles.yml"
_SETUP_STATE = "setup-state"
_DIGESTS = "digests.json"
CHECK_ENV = {
    "PYTHONNOUSERSITE": "1",
    "PYTHONSAFEPATH": "1",
    "IPYTHONDIR": "/tmp/ipython",  # the sandbox's /tmp is new at every start: nothing of the agent's
    "JUPYTER_CONFIG_DIR": "/tmp/jupyter",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


@dataclass(frozen=True)
class SetupState:
    """What the setup left at the paths the checks' environment comes from, kept in the harness's
    scratch folder before the agent starts: a copy of each such file, and its digest."""

    folder: Path
    digests: dict[str, str]

    @property
    def profiles(self) -> list[str]:
        return sorted(name for name in self.digests if PurePosixPath(name).name == PROFILES)

    def copy_of(self, name: str) -> Path:
        return self.folder / "files" / name


def keep_setup_state(task: Task, box: SandboxBackend, scratch: Path) -> None:
    """After the setup, before the agent: keep what the setup left at the checks' paths."""
    folder = scratch / _SETUP_STATE
    (folder / "files").mkdir(parents=True)
    digests: dict[str, str] = {}
    for name in sorted({*box.changed_files(), *(item.path for item in task.files)}):
        if _role(name, profiles_protected=True) is None:
            continue
        try:
            content = box.read_file(name)
        except FileNotFoundError:
            continue
        digests[name] = hashlib.sha256(content).hexdigest()
        if name in START_UP_FILES or PurePosixPath(name).name == PROFILES:
            copy = folder / "files" / name
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(content)
    (folder / _DIGESTS).write_text(json.dumps(digests))


def setup_state(scratch: Path) -> SetupState:
    folder = scratch / _SETUP_STATE
    return SetupState(folder, json.loads((folder / _DIGESTS).read_text()))


def check_overlay(state: SetupState, workdir: str, *, app_conda: bool = False) -> ReadOnlyOverlay:
    """The files and variables the checks run with (see the module's docstring); `app_conda`: the
    `conda.sh` that activates the applications' environments (Dagster, Airflow, Superset tasks)."""
    files: dict[str, Path] = {CONDA_HOME: conda_home(apps=app_conda)}
    for name in START_UP_FILES:
        copy = state.copy_of(name)
        if not copy.is_file():  # the setup left none: the checks get an empty one
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(b"")
        files[name] = copy
    env = dict(CHECK_ENV)
    for name in state.profiles:
        files[name] = state.copy_of(name)
        if name == f".dbt/{PROFILES}":
            env["DBT_PROFILES_DIR"] = f"{workdir}/.dbt"
    for copy in files.values():
        if copy.is_relative_to(state.folder):
            copy.chmod(0o644)  # readable by the sandbox's user, read-only once mounted
    return ReadOnlyOverlay(files=files, env=env)


def agent_files_at_check_paths(box: SandboxBackend, state: SetupState) -> list[Suspicion]:
    """Files the agent wrote where the checks' environment comes from, or that would shadow a command
    or module the checks run (what the setup left there is not the agent's)."""
    found = []
    for name in box.changed_files():
        why = _role(name, profiles_protected=bool(state.profiles))
        if why is None:
            continue
        try:
            digest = hashlib.sha256(box.read_file(name)).hexdigest()
        except FileNotFoundError:
            continue
        if state.digests.get(name) != digest:
            found.append(Suspicion(kind="check_environment", detail=f"~/{name}: {why}"))
    return found


def _role(name: str, *, profiles_protected: bool) -> str | None:
    """Why a file at this path of the home would matter to the checks, or None."""
    path = PurePosixPath(name)
    if path.parts[0] == CONDA_HOME:
        return "written in ~/anaconda3, which the checks source (they get the harness's stand-in)"
    if name in START_UP_FILES:
        return "a shell start-up file (the checks get the one the setup left)"
    if path.name == PROFILES and profiles_protected:
        return "a dbt profile besides the setup's (the checks use the setup's)"
    if path.name in ("sitecustomize.py", "usercustomize.py") or path.suffix == ".pth":
        return "Python start-up code (the checks' Python does not load it)"
    if path.parts[0] in (".ipython", ".jupyter") and path.suffix == ".py":
        return "IPython or Jupyter start-up code (the checks read their settings elsewhere)"
    if name == ".gitconfig" or name.startswith(".config/git/"):
        return "git configuration (the checks' git reads none)"
    if str(path.parent) in ("bin", ".local/bin") and shutil.which(path.name, path=_check_path()):
        return f"named like the command {path.name!r} (not on the checks' PATH)"
    if len(path.parts) <= 2 and _shadowed_module(path) in _installed_modules():
        return f"named like the module {_shadowed_module(path)!r} (the checks' Python does not import it)"
    return None


def _shadowed_module(path: PurePosixPath) -> str | None:
    """The top-level module a file at the top of the home would be imported as from there."""
    if len(path.parts) == 1 and path.suffix == ".py":
        return path.stem
    if len(path.parts) == 2 and path.name == "__init__.py":
        return path.parts[0]
    return None


@cache
def _installed_modules() -> frozenset[str]:
    """Top-level modules of the installed distributions (what the tools the checks run import); names
    of the standard library left out, since an honest `test.py` is common."""
    return frozenset(
        name
        for name in packages_distributions()
        if name.isidentifier() and name not in sys.stdlib_module_names
    )


@cache
def _check_path() -> str:
    """The folders of commands on the checks' PATH (the stand-ins, then the sandbox's Python and system)."""
    return ":".join(
        [str(tools_dir()), str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    )


def clear_check_made_files(box: SandboxBackend, paths: list[str]) -> list[Suspicion]:
    """Expected files that the checks make (a gold project run after the agent, `vm_file` as the expected
    value): a file the agent left at such a path is removed before the checks run, so that it cannot
    stand for the gold; files the agent wrote in the folder the checks build it in are flagged."""
    found = []
    for path in paths:
        top = PurePosixPath(path).parts[0]
        written = [name for name in box.changed_files() if name == path or name.startswith(f"{top}/")]
        if written:
            found.append(Suspicion(kind="check_environment", detail=(
                f"~/{top}/: the agent wrote {len(written)} file(s) where the checks make the expected "
                f"~/{path}"
            )))  # fmt: skip
        box.bash(f"rm -f -- {shlex.quote(path)}")
    return found
