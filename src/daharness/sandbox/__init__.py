"""The only place agent code runs: isolated, resource-limited, stateful Python + Bash + SQL kernels.

Importing this package registers its backends (`bwrap`, `unsafe-local`); `open_sandbox` builds one by
name for a task.
"""

from typing import Any

from daharness.core.limits import Limits
from daharness.core.registry import backends
from daharness.core.task import Task
from daharness.sandbox.bwrap import BwrapSandbox
from daharness.sandbox.kernel_client import KernelSandbox, SandboxError, kill_all_sandboxes
from daharness.sandbox.local import UNSAFE_BACKEND, UNSAFE_WARNING, LocalSandbox
from daharness.sandbox.workspace import Workspace


def open_sandbox(backend: str, task: Task, limits: Limits | None = None) -> KernelSandbox:
    """A (not yet started) sandbox of the named backend holding the task's visible files."""
    return backends.get(backend).cls(task, limits)


def check_backend(backend: str) -> None:
    """Refuse, with a one-line reason, a backend that cannot work on this machine."""
    backends.get(backend).cls.check()


def describe_isolation(backend: str, limits: Limits) -> dict[str, Any]:
    """What isolation the named backend gives on this machine under `limits` (its own description)."""
    return backends.get(backend).cls.describe_isolation(limits)


__all__ = [
    "UNSAFE_BACKEND",
    "UNSAFE_WARNING",
    "BwrapSandbox",
    "KernelSandbox",
    "Limits",
    "LocalSandbox",
    "SandboxError",
    "Workspace",
    "check_backend",
    "describe_isolation",
    "kill_all_sandboxes",
    "open_sandbox",
]
