"""The sandbox backends by name: importing this module registers the built-in ones (`bwrap`,
`unsafe-local`); `open_sandbox` builds one for a task."""

from typing import Any

from daharness.core.errors import UserError
from daharness.core.family import SandboxAdditions
from daharness.core.limits import Limits
from daharness.core.registry import backends
from daharness.core.task import Task
from daharness.sandbox.bwrap import BwrapSandbox
from daharness.sandbox.kernel_client import KernelSandbox
from daharness.sandbox.local import LocalSandbox

BUILT_IN = (BwrapSandbox, LocalSandbox)  # registered as they are imported


def open_sandbox(
    backend: str,
    task: Task,
    limits: Limits | None = None,
    *,
    desktop: bool = False,
    additions: SandboxAdditions | None = None,
) -> KernelSandbox:
    """A (not yet started) sandbox of the named backend holding the task's visible files and what its
    family adds (`additions`), with a desktop when the task or the run asks for one (a one-line
    UserError where there can be none)."""
    cls = backends.get(backend).cls
    if desktop or task.desktop:
        cls.check_desktop()
        return cls(task, limits, desktop=True, additions=additions)
    return cls(task, limits, additions=additions)


def check_backend(backend: str) -> None:
    """Refuse, with a one-line reason, a backend that cannot work on this machine."""
    backends.get(backend).cls.check()


def check_desktop(backend: str) -> None:
    """Refuse, with a one-line reason, samples with a desktop where the named backend can give none."""
    backends.get(backend).cls.check_desktop()


def prepare_run(backend: str, limits: Limits) -> None:
    """Start what the named backend's sandboxes of this run will share (the kernel template of bwrap), so
    that even the first sample's kernel is ready when its agent first acts."""
    backends.get(backend).cls.prepare_run(limits)


def describe_desktop(backend: str) -> dict[str, Any]:
    """Whether the named backend can give a sample a desktop on this machine, and if not, why."""
    from daharness.sandbox.desktop.availability import desktop_status

    status = desktop_status()
    try:
        backends.get(backend).cls.check_desktop()
    except UserError as exc:
        status.update(available=False, problem=status["problem"] or str(exc))
    return status


def describe_isolation(backend: str, limits: Limits) -> dict[str, Any]:
    """What isolation the named backend gives on this machine under `limits` (its own description)."""
    return backends.get(backend).cls.describe_isolation(limits)
