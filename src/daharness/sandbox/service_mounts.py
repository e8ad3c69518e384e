"""What a sandbox that runs services needs besides the agent's workspace (`SandboxAdditions`): the
applications' environments read-only at their own paths, a few system files (`/etc/hosts` naming the
official containers, `/etc/passwd` naming the sandbox's user as the official VM's), empty folders for
servers' sockets, and a state folder of the sandbox's own that outlives its restarts, so that services
stopped with the agent's processes start again from their data for the checks.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path, PurePosixPath

from daharness.core.family import SandboxAdditions
from daharness.sandbox.bwrap_arguments import BwrapArguments
from daharness.sandbox.workspace import remove_tree


class ServiceState:
    """The host folder behind a sandbox's `state_dir`: made at its first start, removed at its close."""

    def __init__(self) -> None:
        self.root: Path | None = None

    def folder(self, parent: Path, uid: int | None) -> Path:
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="daharness-state-", dir=parent))
        if uid is not None:
            os.chown(self.root, uid, uid)
        return self.root

    def remove(self) -> None:
        root, self.root = self.root, None
        if root is not None:
            with contextlib.suppress(OSError):
                remove_tree(root)


def add_service_mounts(
    arguments: BwrapArguments,
    additions: SandboxAdditions,
    *,
    uid: int | None,
    workdir: str,
    state: Path | None,
) -> None:
    made: set[str] = {"/", "/etc", "/usr", "/tmp", "/dev", "/proc"}

    def parents(path: str) -> None:  # crossable parents (bwrap would make missing ones 0700)
        for parent in reversed(PurePosixPath(path).parents[:-1]):
            if str(parent) not in made:
                arguments.add("--perms", "0755", "--dir", str(parent))
                made.add(str(parent))

    for folder in additions.read_only_dirs:
        parents(str(folder))
        arguments.add("--ro-bind", str(folder), str(folder))
    for path, content in additions.files.items():
        parents(path)
        arguments.add("--perms", "0644", "--ro-bind-data", arguments.data(content.encode()), path)
    if additions.user_name:
        arguments.add("--perms", "0644", "--ro-bind-data", arguments.data(passwd(additions.user_name, uid, workdir)),
                      "/etc/passwd")  # fmt: skip
    for path in additions.run_dirs:
        parents(path)
        arguments.add("--perms", "1777", "--tmpfs", path)
    if additions.state_dir and state is not None:
        parents(additions.state_dir)
        arguments.add("--bind", str(state), additions.state_dir)
    for path, target in additions.links.items():
        parents(path)
        arguments.add("--symlink", target, path)


def passwd(name: str, uid: int | None, home: str) -> bytes:
    """The host's /etc/passwd with the sandbox's user id named `name` (its only entry)."""
    number = 65534 if uid is None else uid
    lines = [
        line
        for line in Path("/etc/passwd").read_text().splitlines()
        if line.split(":")[0] != name and line.split(":")[2:3] != [str(number)]
    ]
    return "\n".join([*lines, f"{name}:x:{number}:{number}:{name}:{home}:/bin/bash", ""]).encode()
