"""The sandbox backend interface: the only way agents, setup steps and scorers reach agent files.

A backend runs one sample's code in isolation, step by step, with state kept between steps. Agents
drive it through `python` / `bash` / `sql` / `write_file`, and its screen through `desktop` (a
`core.desktop.Desktop`, or None: every backend says which); the pipeline collects the agent's files
with `snapshot`, which copies regular files only (never through a link), so scorers read a frozen,
symlink-free copy and never a live workspace.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from daharness.core.desktop import Desktop, DesktopUnavailable
from daharness.core.limits import Limits
from daharness.core.observation import Observation

if TYPE_CHECKING:
    from daharness.core.submission import ActionEvent

SkipKind = Literal["symlink", "hardlink", "fifo", "socket", "device", "unreadable", "over_quota"]


@dataclass(frozen=True)
class SkippedEntry:
    """A workspace entry that was not copied out, and why."""

    path: str
    kind: SkipKind
    target: str | None = None  # where a symlink points


CAPTURE_INDEX = "index.jsonl"


class FileTooLarge(OSError):
    """A file larger than what the harness reads of it."""

    def __init__(self, name: str, size: int, limit: int) -> None:
        super().__init__(
            f"{name} takes {size / 2**20:,.1f} MB, more than the {limit / 2**20:,.0f} MB read of it"
        )
        self.size, self.limit = size, limit


@dataclass(frozen=True)
class Snapshot:
    """The agent's workspace after the sample, frozen: regular files under `root` and what was left out.

    `captures` is a folder the harness filled with the chart captures it received from the sandbox's
    capture channel (never from the agent's files): `index.jsonl`, one line `{"n", "file", "cwd",
    "sha256", "event"}` per capture in arrival order, and the capture itself in `<n>.json`. It is None
    for files that did not come from a daharness sandbox (an official agent's output folder, a run made
    before captures had their own channel): their captures, if any, lie beside the images."""

    root: Path
    files: frozenset[str]
    changed: tuple[str, ...] = ()
    skipped: tuple[SkippedEntry, ...] = ()
    removed: tuple[str, ...] = field(default=())  # task files the agent deleted
    captures: Path | None = None

    def capture_entries(self) -> list[dict[str, object]]:
        """The index of the received captures, oldest first ([] without any)."""
        index = self.captures / CAPTURE_INDEX if self.captures is not None else None
        if index is None or not index.is_file():
            return []
        return [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line]

    def path(self, name: str) -> Path | None:
        """The host path of a submitted file, or None when the agent left no regular file of that name."""
        clean = Path(name).as_posix().lstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        return self.root / clean if clean in self.files else None


@dataclass(frozen=True)
class ReadOnlyOverlay:
    """What the harness's own steps after the agent (a workflow task's checks) run with, in the agent's
    sandbox: host files and folders put read-only over paths of the workspace (relative paths, e.g.
    `.bashrc`), whatever the agent left there, and environment variables. The agent's files stay in the
    workspace, hidden from those steps."""

    files: dict[str, Path] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


class OverlayBlocked(Exception):
    """A path of the overlay holds what nothing can be put over (a link, a FIFO, a file where a folder
    goes): the message names it."""


class SandboxBackend(ABC):
    """One sample's isolated, stateful execution environment."""

    name: ClassVar[str]
    workdir: str  # the workspace as the agent's code sees it
    restarts: int = 0
    history: Sequence[ActionEvent] = ()  # every step run, as the sandbox saw it (a backend may keep none)

    def __enter__(self) -> SandboxBackend:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def check(cls) -> None:
        """Raise a UserError saying why this backend cannot work on this machine (default: it can)."""
        return None

    @classmethod
    def describe_isolation(cls, limits: Limits) -> dict[str, Any]:
        """What isolation this backend gives here and how each limit is enforced: `daharness doctor`
        prints it and every run keeps it in run.json. `isolated` is True or False when the backend says,
        None when it does not; `limits` maps a limit's name to {scope, via, limit} or to a sentence.

        The default claims nothing: a backend that does not override it is described as enforcing its
        limits its own way, unverified, rather than being credited with the built-in sandbox's."""
        return {
            "backend": cls.name,
            "isolated": None,
            "limits": {
                "all": {"scope": "unknown", "via": "the backend", "limit": "not described by the backend"}
            },
            "values": asdict(limits),
        }

    @abstractmethod
    def start(self) -> None:
        """Start the kernel (the workspace already holds the task's files)."""

    def start_soon(self) -> None:
        """Start the kernel, or begin to: a backend may start it in the background, and then whatever
        uses the sandbox first waits for it (so a sample's first model call need not)."""
        self.start()

    def restart_clock(self) -> None:  # noqa: B027 - a backend without a sample deadline has no clock
        """The sample's time starts now (for a sandbox started ahead of its sample)."""

    @abstractmethod
    def python(self, code: str, timeout: float | None = None) -> Observation: ...

    @abstractmethod
    def bash(self, command: str, timeout: float | None = None) -> Observation: ...

    @abstractmethod
    def sql(
        self, database: str, query: str, output: str | None = None, timeout: float | None = None
    ) -> Observation: ...

    def python_script(self, path: str, args: list[str], timeout: float | None = None) -> Observation:
        """`python PATH ARGS...` in the workspace, as a process of its own (a benchmark's official
        scripts); backends may run it faster where that changes nothing the script can tell."""
        command = " ".join(shlex.quote(part) for part in ("python", path, *args))
        return self.bash(command, timeout=timeout)

    @abstractmethod
    def write_file(self, path: str, content: str) -> Observation:
        """Write a text file as the sandbox's user (relative paths land in the workspace)."""

    @abstractmethod
    def read_file(self, path: str) -> bytes:
        """A regular workspace file's bytes (never through a link); FileNotFoundError otherwise."""

    @abstractmethod
    def changed_files(self) -> list[str]:
        """Workspace files created or modified since the sample started."""

    @abstractmethod
    def snapshot(self, target: Path) -> Snapshot:
        """Copy the workspace's regular files to `target` (a new folder) and describe the copy. Stops the
        sandbox's processes first (nothing may change the files while they are copied): a later step
        starts a fresh kernel."""

    def copy_file_out(self, path: str, target: Path, max_bytes: int) -> str:
        """Copy a regular workspace file to `target` on the host, unread, and return the SHA-256 of its
        bytes; FileNotFoundError without such a file, FileTooLarge (nothing copied) over `max_bytes`.
        This default reads the file whole first: backends should copy it in chunks."""
        data = self.read_file(path)
        if len(data) > max_bytes:
            raise FileTooLarge(path, len(data), max_bytes)
        target.write_bytes(data)
        return hashlib.sha256(data).hexdigest()

    def chart_capture_file(self, sha256: str) -> Path | None:
        """The harness's file of the latest chart capture it received for a save of exactly these bytes
        (their SHA-256), or None. Backends without a capture channel have none."""
        return None

    def restart_with_overlay(self, overlay: ReadOnlyOverlay) -> None:
        """Stop every process of the sandbox and start it again with `overlay` for the rest of its life.
        Raises OverlayBlocked, before anything starts, when a path of the overlay cannot be covered. A
        backend that cannot cover paths must not pretend to: the default refuses."""
        raise NotImplementedError(f"the {self.name} sandbox cannot put the harness's files over the agent's")

    @property
    @abstractmethod
    def desktop(self) -> Desktop | None:
        """The sample's screen, or None (a sandbox opened without one, a backend that has none). Abstract,
        so that a backend says which: one that forgot cannot be built, rather than skip every GUI step."""

    def resource_usage(self) -> dict[str, Any]:
        """What the sandbox used and hit (memory peak, restarts, limits): {} when the backend does not say."""
        return {}

    @abstractmethod
    def interrupt(self) -> None:
        """Stop whatever runs now (the next step starts from a fresh state if it cannot be interrupted)."""

    @abstractmethod
    def close(self) -> None:
        """Stop every process of the sandbox and remove its workspace."""

    @property
    @abstractmethod
    def time_left_s(self) -> float:
        """Wall time left of the sample's budget."""


def require_desktop(box: SandboxBackend) -> Desktop:
    """The sandbox's desktop, for a step that cannot go without one (as inspect_ai's `as_type` narrows a
    sandbox): DesktopUnavailable, saying so, when it has none."""
    if box.desktop is None:
        raise DesktopUnavailable(f"the {box.name} sandbox of this sample has no desktop")
    return box.desktop
