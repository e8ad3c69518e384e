"""The unisolated backend: the kernel as a plain child process (explicit opt-in only)."""

from __future__ import annotations

import os
import sys
from typing import Any

from daharness.core.limits import Limits
from daharness.core.registry import backend
from daharness.sandbox.environment import common_env
from daharness.sandbox.isolation import kernel_limit_scopes
from daharness.sandbox.kernel_client import KernelSandbox, Launch
from daharness.sandbox.support import (
    hooks_dir,
    kernel_command,
    kernel_config,
    kernel_dir,
)

UNSAFE_BACKEND = "unsafe-local"
UNSAFE_WARNING = (
    "warning: --sandbox unsafe-local runs agent code WITHOUT isolation, and scores its files unconfined: "
    "it can read your files and API keys, use the network and outlive the run. Use it only for code you trust."
)


@backend(UNSAFE_BACKEND)
class LocalSandbox(KernelSandbox):
    """No isolation: agent code runs as you, with your files and network (for trusted code only).

    An overlay (the environment of a workflow task's checks) brings its variables but not its files:
    without a mount namespace the checks see the files the agent left."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.workdir = str(self.workspace.root)

    def launch(self) -> Launch:
        hooks = str(hooks_dir())
        workdir = str(self.workspace.root)
        libraries = [str(library.source) for library in self.task.libraries]
        config = kernel_config(
            self.limits,
            workdir=workdir,
            uid=None,
            hooks=hooks,
            own_pid_namespace=False,
            python_path=libraries,
        )
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": workdir, **common_env()}
        env.update(PYTHONPATH=":".join([hooks, *libraries]))  # the kernel names the capture channel itself
        env.update(self.additions.env)  # HOME is the workspace here anyway
        if self.additions.path_dirs:
            env["PATH"] = ":".join([*map(str, self.additions.path_dirs), env["PATH"]])
        if self.overlay is not None:  # its variables only: nothing here can be made read-only
            env.update(self.overlay.env)
        command, config_fd = kernel_command(sys.executable, str(kernel_dir()), config)
        return Launch(command, env, None, fds=(config_fd,), after_start=lambda: os.close(config_fd))

    @classmethod
    def check(cls) -> None:
        return None

    @classmethod
    def describe_isolation(cls, limits: Limits) -> dict[str, Any]:
        scopes = kernel_limit_scopes(limits, contained=False, sized_tmpfs=False)
        return {"backend": cls.name, "isolated": False, **scopes}
