"""Control groups per sandbox: every process the sandbox starts stays in them (setsid and double forks
included), so the sandbox can list and kill exactly its own processes, and its limits hold for the
sandbox as a whole rather than per process: memory (tmpfs pages included, since the kernel charges
them to the group that writes them), number of processes, and CPU (an equal share per sandbox, and an
optional hard cap).

Each controller comes from cgroup v2 where the unified hierarchy offers it, else from its v1
hierarchy; groups are made under `daharness/` below the harness's own group of that hierarchy (v1;
so a harness confined in a container keeps its sandboxes inside it) or below the v2 root (v2 forbids
controllers below a group that holds processes). A controller that is missing or not writable is left
out, and `hierarchies()` says what there is (`daharness doctor` prints it). `DAHARNESS_CGROUPS=off`
turns them all off. Groups left behind by a killed harness are removed at the next start.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from daharness.sandbox.once import computed_once

Controller = Literal["pids", "memory", "cpu"]
CONTROLLERS: tuple[Controller, ...] = ("pids", "memory", "cpu")
CGROUP_ROOT = Path(os.environ.get("DAHARNESS_CGROUP_ROOT", "/sys/fs/cgroup"))
_V1_PERIOD_US = 100_000
_V1_DEFAULT_SHARES = 1024


@dataclass(frozen=True)
class Hierarchy:
    """Where daharness makes the groups of one controller."""

    controller: Controller
    version: Literal[1, 2]
    root: Path  # .../daharness

    def describe(self) -> str:
        return f"cgroup v{self.version} ({self.root})"


def _own_paths() -> dict[str, str]:
    """This process's group in each hierarchy: controller name (or '' for v2) -> path."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            for name in names.split(",") if names else [""]:
                paths[name] = path
    return paths


def _unified_mount() -> Path | None:
    for candidate in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if (candidate / "cgroup.controllers").is_file():
            return candidate
    return None


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK)


def _v2_root(wanted: list[Controller]) -> tuple[Path, list[Controller]]:
    """The v2 folder for sandbox groups with the controllers it could enable for them."""
    mount = _unified_mount()
    if mount is None:
        return Path(), []
    try:
        offered = set((mount / "cgroup.controllers").read_text().split())
    except OSError:
        return Path(), []
    usable = [c for c in wanted if c in offered]
    root = mount / "daharness"
    if not usable or not _writable_dir(root):
        return root, []
    enabled = []
    for controller in usable:
        try:  # the mount root is exempt from "no processes in inner groups"; daharness/ holds none
            for folder in (mount, root):
                (folder / "cgroup.subtree_control").write_text(f"+{controller}")
        except OSError:
            continue
        enabled.append(controller)
    return root, enabled


def _v1_root(controller: Controller, own: dict[str, str]) -> Path | None:
    if controller == "pids" and "DAHARNESS_CGROUP_PIDS" in os.environ:
        return Path(os.environ["DAHARNESS_CGROUP_PIDS"]) / "daharness"
    mounts = [CGROUP_ROOT / controller] + ([CGROUP_ROOT / "cpu,cpuacct"] if controller == "cpu" else [])
    for mount in mounts:
        if (mount / "cgroup.procs").is_file():
            names = next((key for key in own if controller in key.split(",")), None)
            inside = own.get(names or "", "/").lstrip("/")
            root = mount / inside / "daharness"
            return root if _writable_dir(root) else None
    return None


@computed_once
def hierarchies() -> dict[Controller, Hierarchy]:
    """The controllers sandboxes get on this machine, each with its version and folder."""
    if os.environ.get("DAHARNESS_CGROUPS", "").lower() in ("off", "0", "no"):
        return {}
    found: dict[Controller, Hierarchy] = {}
    v2_root, v2 = _v2_root(list(CONTROLLERS))
    for controller in v2:
        found[controller] = Hierarchy(controller, 2, v2_root)
    own = _own_paths()
    for controller in CONTROLLERS:
        if controller not in found and (root := _v1_root(controller, own)) is not None:
            found[controller] = Hierarchy(controller, 1, root)
    if "cpu" in found:
        _weigh_all_sandboxes(found["cpu"])
    return found


def _weigh_all_sandboxes(hierarchy: Hierarchy) -> None:
    """Give `daharness/` the weight of one busy process per CPU: it competes with the host's processes
    as one entity, and at the default weight all sandboxes together would get what one process gets."""
    cpus = os.cpu_count() or 1
    name, value = (
        ("cpu.weight", min(10_000, 100 * cpus)) if hierarchy.version == 2 else ("cpu.shares", 1024 * cpus)
    )
    with contextlib.suppress(OSError):
        (hierarchy.root / name).write_text(str(value))


def available() -> bool:
    """Whether sandboxes get a group of their own that lists their processes."""
    return bool(hierarchies())


def pids_root() -> Path | None:
    """The folder of the sandboxes' groups that list their processes (tests look there)."""
    found = hierarchies()
    chosen = found.get("pids") or next(iter(found.values()), None)
    return chosen.root if chosen else None


def __getattr__(name: str) -> Path:
    if name == "PIDS_ROOT":  # what older callers read: the folder of the groups that list processes
        return pids_root() or CGROUP_ROOT / "pids" / "daharness"
    raise AttributeError(name)


class SandboxCgroup:
    """The groups of one sandbox (one folder per hierarchy; one for all controllers under v2)."""

    def __init__(self, folders: dict[Controller, Path], versions: dict[Controller, int]) -> None:
        self.folders = folders
        self.versions = versions
        self.path = folders.get("pids") or next(iter(folders.values()))

    @property
    def controllers(self) -> list[Controller]:
        return list(self.folders)

    @classmethod
    def create(
        cls,
        max_processes: int | None = None,
        *,
        memory_bytes: int | None = None,
        cpus: float | None = None,
    ) -> SandboxCgroup | None:
        """New, empty groups with these limits, or None when this machine gives none."""
        found = hierarchies()
        if not found:
            return None
        _remove_stale_once(os.getpid())
        name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        folders: dict[Controller, Path] = {}
        versions: dict[Controller, int] = {}
        for controller, hierarchy in found.items():
            folder = hierarchy.root / name
            try:
                folder.mkdir(exist_ok=hierarchy.version == 2)
            except OSError:
                continue
            folders[controller], versions[controller] = folder, hierarchy.version
        if not folders:
            return None
        group = cls(folders, versions)
        try:
            group._configure(max_processes, memory_bytes, cpus)
        except OSError:
            group.remove()
            return None
        return group

    def _configure(self, max_processes: int | None, memory_bytes: int | None, cpus: float | None) -> None:
        if max_processes and "pids" in self.folders:
            (self.folders["pids"] / "pids.max").write_text(str(max_processes))
        if memory_bytes and "memory" in self.folders:
            folder = self.folders["memory"]
            if self.versions["memory"] == 2:
                (folder / "memory.max").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):  # no swap: the limit is the memory the sandbox gets
                    (folder / "memory.swap.max").write_text("0")
            else:
                (folder / "memory.limit_in_bytes").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):  # absent without swap accounting
                    (folder / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
        if "cpu" in self.folders:
            folder = self.folders["cpu"]
            # an explicit equal weight: each sandbox weighs as much as any other, however many processes
            if self.versions["cpu"] == 2:
                (folder / "cpu.weight").write_text("100")
                if cpus:
                    (folder / "cpu.max").write_text(f"{int(cpus * _V1_PERIOD_US)} {_V1_PERIOD_US}")
            else:
                (folder / "cpu.shares").write_text(str(_V1_DEFAULT_SHARES))
                if cpus:
                    (folder / "cpu.cfs_period_us").write_text(str(_V1_PERIOD_US))
                    (folder / "cpu.cfs_quota_us").write_text(str(int(cpus * _V1_PERIOD_US)))

    def join_command(self, command: list[str]) -> list[str]:
        """`command`, started so that its process is in the groups before it runs anything."""
        joins = " && ".join(f'echo $$ > "{folder}/cgroup.procs"' for folder in self._unique_folders())
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "daharness-sandbox", *command]

    def _unique_folders(self) -> list[Path]:
        return list(dict.fromkeys(self.folders.values()))

    def join_folders(self) -> list[Path]:
        """The folders whose cgroup.procs a process writes its pid to, to join the groups."""
        return self._unique_folders()

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def memory_peak_bytes(self) -> int | None:
        """The most memory the sandbox held at once (tmpfs included), from the group's accounting."""
        if "memory" not in self.folders:
            return None
        name = "memory.peak" if self.versions["memory"] == 2 else "memory.max_usage_in_bytes"
        return _read_int(self.folders["memory"] / name)

    def cpu_seconds(self) -> float | None:
        """CPU time the sandbox's processes used so far: cgroup v2's cpu.stat, else the sum over the
        group's processes of their own and their waited-for children's times (ended processes that
        nothing in the group waited for are left out)."""
        folder = self.folders.get("cpu")
        if folder is not None and self.versions["cpu"] == 2:
            with contextlib.suppress(OSError, ValueError):
                for line in (folder / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
        ticks = 0
        for pid in self.pids():
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                ticks += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        return ticks / os.sysconf("SC_CLK_TCK")

    def oom_kills(self) -> int:
        """Processes the kernel killed because the sandbox reached its memory limit."""
        if "memory" not in self.folders:
            return 0
        name = "memory.events" if self.versions["memory"] == 2 else "memory.oom_control"
        return _keyed_value(self.folders["memory"] / name, "oom_kill")

    def cpu_throttled(self) -> int:
        """Periods in which the CPU cap held the sandbox back."""
        return _keyed_value(self.folders["cpu"] / "cpu.stat", "nr_throttled") if "cpu" in self.folders else 0

    def kill_all(self, wait_s: float = 2.0) -> None:
        """SIGKILL every process of the group until none is left (or `wait_s` passes)."""
        kill_until_gone(self.pids, wait_s)

    def remove(self) -> None:
        self.kill_all()
        for folder in self._unique_folders():
            for _ in range(50):  # a killed process leaves its group a moment after it is gone
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


@computed_once
def _remove_stale_once(pid: int) -> None:
    """Once per process (a harness that dies while this one runs leaves its groups to the next run)."""
    remove_stale()


def remove_stale() -> None:
    """Remove the groups of sandboxes whose harness died (kill -9 leaves them behind): a group is named
    after the harness's pid, and one whose harness is gone is emptied and removed."""
    for hierarchy in hierarchies().values():
        with contextlib.suppress(OSError):
            for group in hierarchy.root.iterdir():
                owner = group.name.split("-", 1)[0]
                if group.is_dir() and owner.isdigit() and not _alive(int(owner)):
                    SandboxCgroup({hierarchy.controller: group}, {hierarchy.controller: 1}).remove()


def kill_until_gone(listing: Callable[[], list[int]], wait_s: float) -> None:
    """SIGKILL every process `listing` names, again and again, until it names none and each one killed
    has exited (or `wait_s` passes). A control group stops listing a process as soon as it begins to
    exit, before it is done: a PID namespace's first process, for one, ends only once every other
    process of its namespace has been reaped. The exits are awaited on pidfds, which also keep a pid
    that is reused after its process ended from being killed again."""
    started = time.monotonic()
    deadline = started + wait_s
    killed: dict[int, int] = {}  # pid -> its pidfd
    try:
        while pids := listing():
            for pid in pids:
                _kill(pid, killed)
            now = time.monotonic()
            if now > deadline:
                return
            # a killed kernel takes 5-10 ms to free its memory and leave: look every 0.5 ms meanwhile (a
            # look reads one small file), then less often; doubling pauses found it gone 5 ms late on average
            time.sleep(0.0005 if now - started < 0.03 else 0.005)
        _await_exits(list(killed.values()), deadline)
    finally:
        for pidfd in killed.values():
            os.close(pidfd)


def _kill(pid: int, killed: dict[int, int]) -> None:
    """SIGKILL `pid` through its pidfd (opened once and kept in `killed`); plain kill without pidfds."""
    if pid not in killed:
        try:
            killed[pid] = os.pidfd_open(pid)
        except ProcessLookupError:
            return
        except OSError:  # no pidfds (a kernel older than 5.3)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            return
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(killed[pid], signal.SIGKILL)


def _await_exits(pidfds: list[int], deadline: float) -> None:
    """Wait until every pidfd says its process has exited (a pidfd turns readable then)."""
    poller = select.poll()
    for pidfd in pidfds:
        poller.register(pidfd, select.POLLIN)
    waiting = len(pidfds)
    while waiting:
        left_ms = (deadline - time.monotonic()) * 1000
        if left_ms <= 0:
            return
        for pidfd, _ in poller.poll(left_ms):
            poller.unregister(pidfd)
            waiting -= 1


def _keyed_value(path: Path, key: str) -> int:
    """The number after `key` in a "key value" per line control file (0 when absent)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
