"""Read-only folders mounted into every sandbox: the kernel package, and the chart capture hooks.

They are copies made once per process, so that nothing else of daharness (the built-in suites' gold
files above all) is reachable from inside the sandbox.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

from daharness.core.family import SandboxAdditions
from daharness.core.limits import Limits
from daharness.core.registry import families
from daharness.core.task import Task
from daharness.sandbox.scratch import process_scratch
from daharness.sandbox.workspace import remove_tree

HERE = Path(__file__).parent
SANDBOX_KERNEL = "/daharness-kernel"
SANDBOX_HOOKS = "/daharness-hooks"  # chart capture hook and the sitecustomize that installs it
SANDBOX_LIBRARIES = "/daharness-lib"  # a task's private libraries, one numbered folder each
SANDBOX_TOOLS = "/daharness-tools"  # a family's folders of commands, first on PATH (read-only)
_BOOTSTRAP = (
    "import importlib, json, sys; sys.path.insert(0, {folder!r}); entry = importlib.import_module({module!r}); "
    "sys.path.remove({folder!r}); entry.main(json.loads(sys.argv[1]))"
)


def _private_copy(prefix: str) -> Path:
    """A new folder in this process's scratch folder (removed at exit, or reaped after a crash)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=process_scratch()))
    atexit.register(remove_tree, folder)
    return folder


def _readable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@functools.cache
def hooks_dir() -> Path:
    """A folder holding only `chart_capture.py` and `sitecustomize.py`: it goes on the sandbox's
    PYTHONPATH, so nothing else may be in it (it would shadow the agent's modules)."""
    folder = _private_copy("daharness-hooks-")
    shutil.copyfile(HERE / "chart_capture.py", folder / "chart_capture.py")
    shutil.copyfile(HERE / "chart_sitecustomize.py", folder / "sitecustomize.py")
    _readable(folder)
    return folder


@functools.cache
def kernel_dir() -> Path:
    """A folder holding the packages that run inside the sandbox (not on the agent's import path): the
    kernel, and the controller of a desktop."""
    folder = _private_copy("daharness-kernel-")
    for package in ("daharness_kernel", "daharness_desktop"):
        shutil.copytree(HERE / package, folder / package, ignore=shutil.ignore_patterns("__pycache__"))
    _readable(folder)
    return folder


def kernel_command(
    python: str, folder: str, config: dict[str, object], module: str = "daharness_kernel.server"
) -> list[str]:
    """Start `module`'s main(config) from the packages in `folder`, in isolated mode."""
    return [python, "-I", "-c", _BOOTSTRAP.format(folder=folder, module=module), json.dumps(config)]


def kernel_config(
    limits: Limits,
    *,
    workdir: str,
    uid: int | None,
    hooks: str,
    own_pid_namespace: bool,
    python_path: list[str] | None = None,
) -> dict:
    return {
        "python_path": python_path or [],
        "chart_capture": f"{hooks}/chart_capture.py",
        "count_processes": own_pid_namespace,
        "limits": limits.kernel_limits(),
        "output_cap": limits.output_bytes,
        "workdir": workdir,
        "uid": uid,
        "gid": uid,
    }


def common_env() -> dict[str, str]:
    return {
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def sandbox_additions(task: Task) -> SandboxAdditions:
    """What the task's family adds to its sandboxes (nothing for a family that is not registered)."""
    if task.family in families:
        return families.get(task.family).impl.sandbox_additions(task)
    return SandboxAdditions()
