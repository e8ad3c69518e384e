"""The only place agent code runs: isolated, resource-limited, stateful Python + Bash + SQL kernels.

The backends register when `daharness.sandbox.backends` is imported (the registry does); the names below
are imported on first use (PEP 562), so that `run` can start the kernel template (`template.py`) before
it imports any backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daharness.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from daharness.sandbox.backends import (
        check_backend,
        check_desktop,
        describe_desktop,
        describe_isolation,
        open_sandbox,
        prepare_run,
    )
    from daharness.sandbox.bwrap import BwrapSandbox
    from daharness.sandbox.kernel_client import (
        KernelSandbox,
        SandboxError,
        SandboxNotStarted,
        kill_all_sandboxes,
    )
    from daharness.sandbox.local import UNSAFE_BACKEND, UNSAFE_WARNING, LocalSandbox
    from daharness.sandbox.workspace import Workspace

_PROVIDERS: dict[str, tuple[str, ...]] = {
    "backends": (
        "check_backend",
        "check_desktop",
        "describe_desktop",
        "describe_isolation",
        "open_sandbox",
        "prepare_run",
    ),
    "bwrap": ("BwrapSandbox",),
    "kernel_client": ("KernelSandbox", "SandboxError", "SandboxNotStarted", "kill_all_sandboxes"),
    "local": ("UNSAFE_BACKEND", "UNSAFE_WARNING", "LocalSandbox"),
    "workspace": ("Workspace",),
}
__getattr__ = lazy_attributes(__name__, _PROVIDERS)


__all__ = [
    "UNSAFE_BACKEND",
    "UNSAFE_WARNING",
    "BwrapSandbox",
    "KernelSandbox",
    "LocalSandbox",
    "SandboxError",
    "SandboxNotStarted",
    "Workspace",
    "check_backend",
    "check_desktop",
    "describe_desktop",
    "describe_isolation",
    "kill_all_sandboxes",
    "open_sandbox",
    "prepare_run",
]
