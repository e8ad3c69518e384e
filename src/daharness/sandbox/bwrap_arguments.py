"""bubblewrap's options, given so that nothing inside the sandbox can read the host's paths in them.

The options go to bwrap through a file descriptor (`--args FD`), not its command line: the sandbox's
first process is bwrap itself, and `/proc/1/cmdline` would show every host folder it mounts (the
scratch folder, the masked paths). Files the sandbox needs from the host (the kernel, the chart hooks,
a private library, a family's commands) are copied in from memory (`--file FD`, into a tmpfs made
read-only afterwards) instead of bind-mounting a host folder, whose path `/proc/self/mountinfo` would
show as the mount's source; masked files are empty copies (`--ro-bind-data FD`). Each descriptor is a
memfd, read and closed by bwrap before the sandbox's code runs.
"""

from __future__ import annotations

import os
from pathlib import Path

# how many values each bwrap option that daharness uses takes (environment() walks the options with it)
_ARITY = {
    "--die-with-parent": 0, "--new-session": 0, "--unshare-ipc": 0, "--unshare-pid": 0, "--unshare-net": 0,
    "--unshare-uts": 0, "--unshare-cgroup-try": 0, "--unshare-user": 0, "--clearenv": 0,
    "--hostname": 1, "--uid": 1, "--gid": 1, "--proc": 1, "--dev": 1, "--tmpfs": 1, "--dir": 1,
    "--perms": 1, "--size": 1, "--remount-ro": 1, "--chdir": 1, "--unsetenv": 1,
    "--ro-bind": 2, "--ro-bind-try": 2, "--bind": 2, "--bind-try": 2, "--dev-bind": 2, "--file": 2,
    "--ro-bind-data": 2, "--bind-data": 2, "--symlink": 2, "--setenv": 2,
}  # fmt: skip


class BwrapArguments:
    """bwrap options, and the in-memory files they copy in. `close()` once bwrap has started."""

    def __init__(self) -> None:
        self.options: list[str] = []
        self.fds: list[int] = []

    def add(self, *options: str) -> None:
        self.options += options

    def data(self, content: bytes) -> str:
        """A descriptor holding `content`, for an option that reads one (`--file`, `--ro-bind-data`)."""
        fd = memory_fd(content)
        self.fds.append(fd)
        return str(fd)

    def empty_file(self, target: str) -> None:
        """An empty read-only file over `target`."""
        self.add("--perms", "0444", "--ro-bind-data", self.data(b""), target)

    def read_only_folder(self, target: str, files: dict[str, tuple[bytes, int]]) -> None:
        """A read-only folder at `target` holding `files` (relative path -> content and mode)."""
        self.add("--perms", "0755", "--tmpfs", target)
        made: set[str] = set()
        for name, (content, mode) in sorted(files.items()):
            for parent in reversed(Path(name).parents[:-1]):
                if str(parent) not in made:
                    self.add("--perms", "0755", "--dir", f"{target}/{parent}")
                    made.add(str(parent))
            readable = "0755" if mode & 0o111 else "0644"
            self.add("--perms", readable, "--file", self.data(content), f"{target}/{name}")
        self.add("--remount-ro", target)

    def environment(self) -> dict[str, str]:
        """The environment these options give the sandbox's first process (they start with --clearenv)."""
        env: dict[str, str] = {}
        workdir = None
        index = 0
        while index < len(self.options):
            option = self.options[index]
            if option not in _ARITY:
                raise ValueError(f"bwrap option {option!r} is not known to BwrapArguments.environment")
            if option == "--clearenv":
                env = {}
            elif option == "--setenv":
                env[self.options[index + 1]] = self.options[index + 2]
            elif option == "--unsetenv":
                env.pop(self.options[index + 1], None)
            elif option == "--chdir":
                workdir = self.options[index + 1]
            index += 1 + _ARITY[option]
        if workdir is not None:  # bwrap says where it started the command, as a shell would
            env["PWD"] = workdir
        return env

    def command(self, bwrap: str, argv: list[str]) -> list[str]:
        """bwrap's own command line: only `--args FD` and the command it runs."""
        arguments = "".join(f"{option}\0" for option in self.options).encode()
        return [bwrap, "--args", self.data(arguments), "--", *argv]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def memory_fd(content: bytes) -> int:
    """A memfd holding `content`, read from its start; close-on-exec (a child gets it by pass_fds only)."""
    fd = os.memfd_create("daharness-data")
    try:
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def folder_files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file under `folder` (no caches, no links): relative path -> content and mode."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts or path.is_symlink() or not path.is_file():
            continue
        files[path.relative_to(folder).as_posix()] = (path.read_bytes(), path.stat().st_mode & 0o777)
    return files
