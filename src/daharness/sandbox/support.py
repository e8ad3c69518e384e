"""Read-only folders given to every sandbox: the kernel package, and the chart capture hooks.

They are copies (in memory for bwrap, in a folder of this process for the unisolated backend), so that
nothing else of daharness (the built-in suites' gold files above all) is reachable from inside.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import json
import marshal
import os
import py_compile
import sys
import tempfile
from pathlib import Path

from daharness.core.limits import Limits
from daharness.sandbox.bwrap_arguments import folder_files, memory_fd
from daharness.sandbox.font_cache import cache_root
from daharness.sandbox.once import computed_once
from daharness.sandbox.scratch import process_scratch
from daharness.sandbox.workspace import remove_tree

HERE = Path(__file__).parent
SANDBOX_KERNEL = "/daharness-kernel"
SANDBOX_HOOKS = "/daharness-hooks"  # chart capture hook and the sitecustomize that installs it
SANDBOX_LIBRARIES = "/daharness-lib"  # a task's private libraries, one numbered folder each
SANDBOX_TOOLS = "/daharness-tools"  # a family's folders of commands, first on PATH (read-only)
KERNEL_MODULE = "daharness_kernel.server"
_BOOTSTRAP = (  # the configuration comes on a descriptor, read and closed: no command line shows it
    "import importlib, json, os, sys\n"
    "sys.path.insert(0, {folder!r})\n"
    "entry = importlib.import_module({module!r})\n"
    "sys.path.remove({folder!r})\n"
    "with os.fdopen({fd}, encoding='utf-8') as config:\n"
    "    settings = json.load(config)\n"
    "entry.main(settings)\n"
)


def _private_copy(prefix: str) -> Path:
    """A new folder in this process's scratch folder (removed at exit, or reaped after a crash)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=process_scratch()))
    atexit.register(remove_tree, folder)
    return folder


def _readable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@computed_once
def hooks_files() -> dict[str, tuple[bytes, int]]:
    """Only `chart_capture.py` and `sitecustomize.py` (and their bytecode): their folder goes on the
    sandbox's PYTHONPATH, so nothing else may be in it (it would shadow the agent's modules)."""
    return with_bytecode(
        {
            "chart_capture.py": ((HERE / "chart_capture.py").read_bytes(), 0o644),
            "sitecustomize.py": ((HERE / "chart_sitecustomize.py").read_bytes(), 0o644),
        },
        SANDBOX_HOOKS,
    )


@computed_once
def kernel_files() -> dict[str, tuple[bytes, int]]:
    """The packages that run inside the sandbox, not on the agent's import path: the kernel, and the
    controller of a desktop."""
    files: dict[str, tuple[bytes, int]] = {}
    for package in ("daharness_kernel", "daharness_desktop"):
        for name, (content, _) in folder_files(HERE / package).items():
            files[f"{package}/{name}"] = (content, 0o644)
    return with_bytecode(files, SANDBOX_KERNEL)


def with_bytecode(files: dict[str, tuple[bytes, int]], folder: str) -> dict[str, tuple[bytes, int]]:
    """`files` and, for each Python module, its bytecode in `__pycache__` as an unchecked-hash .pyc
    (Python loads it without comparing times, which the copies in a sandbox do not keep). Sandboxes
    write no bytecode (PYTHONDONTWRITEBYTECODE), so without these every kernel, and every child Python
    with the chart hook, compiled the same sources again. Made once per machine and kept in the user's
    cache folder (compiling them takes longer than a sample's start)."""
    key = hashlib.sha256(f"{sys.version}\0{folder}".encode())
    for name, (content, _) in sorted(files.items()):
        key.update(f"\0{name}\0{len(content)}\0".encode() + content)
    cached = cache_root().parent / "bytecode" / f"{key.hexdigest()[:32]}.marshal"
    try:
        bytecode = marshal.loads(cached.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        bytecode = None
    valid = isinstance(bytecode, dict) and all(
        isinstance(name, str) and isinstance(content, bytes) for name, content in bytecode.items()
    )
    if not valid:  # missing, or not what this function writes: made again
        bytecode = _compiled(files, folder)
        with contextlib.suppress(OSError):  # another process may write it at the same time: atomic
            cached.parent.mkdir(parents=True, exist_ok=True)
            staged = cached.with_name(f".{cached.name}.{os.getpid()}")
            staged.write_bytes(marshal.dumps(bytecode))
            os.replace(staged, cached)
    return {**files, **{name: (content, 0o644) for name, content in bytecode.items()}}


def _compiled(files: dict[str, tuple[bytes, int]], folder: str) -> dict[str, bytes]:
    compiled = {}
    with tempfile.TemporaryDirectory(prefix="daharness-pyc-") as scratch:
        for name, (content, _) in files.items():
            if not name.endswith(".py"):
                continue
            source, target = Path(scratch) / "source.py", Path(scratch) / "compiled.pyc"
            source.write_bytes(content)
            py_compile.compile(
                str(source), cfile=str(target), dfile=f"{folder}/{name}", doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
            )  # fmt: skip
            compiled[importlib.util.cache_from_source(name)] = target.read_bytes()
    return compiled


def _written(prefix: str, files: dict[str, tuple[bytes, int]]) -> Path:
    folder = _private_copy(prefix)
    for name, (content, _) in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    _readable(folder)
    return folder


@computed_once
def hooks_dir() -> Path:
    """A folder holding `hooks_files()` (for a backend that runs the kernel without bwrap)."""
    return _written("daharness-hooks-", hooks_files())


@computed_once
def kernel_dir() -> Path:
    """A folder holding `kernel_files()` (for a backend that runs the kernel without bwrap)."""
    return _written("daharness-kernel-", kernel_files())


def kernel_command(
    python: str, folder: str, config: dict[str, object], module: str = KERNEL_MODULE
) -> tuple[list[str], int]:
    """Start `module`'s main(config) from the packages in `folder`, in isolated mode: the command line,
    and the descriptor holding its configuration (to pass to the child, then close)."""
    fd = memory_fd(json.dumps(config).encode())
    return [python, "-I", "-c", _BOOTSTRAP.format(folder=folder, module=module, fd=fd)], fd


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
