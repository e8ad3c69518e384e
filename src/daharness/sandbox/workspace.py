"""A sample's workspace on the host: a fresh folder holding the task's visible files, and the frozen,
symlink-free copy of it that scorers read once the agent is done."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from daharness.core.backend import SkipKind, SkippedEntry, Snapshot
from daharness.core.task import Task

_COPY_CHUNK = 1 << 20


@dataclass
class Workspace:
    """Created per sample; remembers file digests to tell which files the agent produced or changed."""

    root: Path
    _initial: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def create(cls, task: Task, parent: Path | None = None) -> Workspace:
        root = Path(tempfile.mkdtemp(prefix=f"daharness-{_safe(task.id)}-", dir=parent))
        for item in task.files:
            target = root / item.path
            if not target.resolve().is_relative_to(root.resolve()):
                raise ValueError(f"task {task.id}: workspace path {item.path!r} leaves the workspace")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(item.source, target)
        workspace = cls(root)
        workspace._initial = {name: _digest(root, name) for name in walk(root)[0]}
        return workspace

    def snapshot_state(self) -> dict[str, tuple[int, int]]:
        """Cheap per-step state: size and modification time of every regular file."""
        found = {}
        for name in walk(self.root)[0]:
            try:
                info = os.lstat(self.root / name)
            except OSError:  # removed meanwhile by a process of the sandbox
                continue
            found[name] = (info.st_size, info.st_mtime_ns)
        return found

    def changed_since(self, before: dict[str, tuple[int, int]]) -> list[str]:
        return sorted(name for name, state in self.snapshot_state().items() if before.get(name) != state)

    def changed_files(self) -> list[str]:
        """Files created or modified since the workspace was made, as relative paths."""
        return sorted(
            name for name in walk(self.root)[0] if self._initial.get(name) != _digest(self.root, name)
        )

    def read_file(self, name: str) -> bytes:
        try:
            descriptor = open_beneath(self.root, name)
        except OSError:
            raise FileNotFoundError(f"{name}: not a regular file in the workspace") from None
        with os.fdopen(descriptor, "rb") as handle:
            return handle.read()

    def collect(self, target: Path) -> Snapshot:
        """Copy every regular file to `target`; links, devices, FIFOs and sockets are left out and listed."""
        files, skipped = walk(self.root)
        target.mkdir(parents=True, exist_ok=True)
        copied, changed = [], []
        for name in files:
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                digest = _copy_no_follow(self.root, name, destination)
            except OSError:
                skipped.append(SkippedEntry(name, "unreadable"))
                continue
            copied.append(name)
            if self._initial.get(name) != digest:
                changed.append(name)
        removed = sorted(set(self._initial) - set(copied))
        return Snapshot(target, frozenset(copied), tuple(sorted(changed)), tuple(skipped), tuple(removed))

    def hand_to(self, uid: int, gid: int) -> None:
        """Give the workspace to the sandbox's unprivileged user so that it can write there."""
        for path in [self.root, *self.root.rglob("*")]:
            os.lchown(path, uid, gid)

    def remove(self) -> None:
        remove_tree(self.root)


def walk(root: Path) -> tuple[list[str], list[SkippedEntry]]:
    """Regular files under `root` (relative POSIX paths, sorted) and every entry that is not one.

    Iterative, never follows a link, and leaves out a regular file that has hard links outside the
    tree (its link count exceeds the names found for it here)."""
    files: dict[str, tuple[int, int]] = {}
    skipped: list[SkippedEntry] = []
    names_of: dict[tuple[int, int], int] = {}
    links_of: dict[tuple[int, int], int] = {}
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            entries = list(os.scandir(root / prefix if prefix else root))
        except OSError:
            skipped.append(SkippedEntry(prefix or ".", "unreadable"))
            continue
        for entry in entries:
            name = f"{prefix}/{entry.name}" if prefix else entry.name
            if not _printable(entry.name):  # not UTF-8: it could not be recorded, so it is not collected
                skipped.append(SkippedEntry(_escaped(name), "bad_name"))
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                skipped.append(SkippedEntry(name, "unreadable"))
                continue
            mode = info.st_mode
            if stat.S_ISDIR(mode):
                stack.append(name)
            elif stat.S_ISREG(mode):
                key = (info.st_dev, info.st_ino)
                files[name] = key
                names_of[key] = names_of.get(key, 0) + 1
                links_of[key] = info.st_nlink
            else:
                skipped.append(SkippedEntry(name, _kind(mode), _link_target(entry.path, mode)))
    regular = []
    for name, key in files.items():
        if links_of[key] > names_of[key]:
            skipped.append(SkippedEntry(name, "hardlink"))
        else:
            regular.append(name)
    return sorted(regular), sorted(skipped, key=lambda entry: entry.path)


def remove_tree(root: Path) -> None:
    """Remove a folder however deep it is (shutil.rmtree recurses and fails on very deep trees)."""
    if not root.exists() and not root.is_symlink():
        return
    stack = [str(root)]
    dirs: list[str] = []
    while stack:
        current = stack.pop()
        dirs.append(current)
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    os.chmod(entry.path, 0o700)
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue
    for folder in reversed(dirs):
        try:
            os.rmdir(folder)
        except OSError:
            continue


def _kind(mode: int) -> SkipKind:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def _link_target(path: str, mode: int) -> str | None:
    if not stat.S_ISLNK(mode):
        return None
    try:
        return os.readlink(path)
    except OSError:
        return None


def _printable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def open_beneath(root: Path, name: str) -> int:
    """A read descriptor of the regular file `name` under `root`, opened one path component at a time
    without following any link (so a folder swapped for a link meanwhile cannot lead out of `root`);
    FIFOs and devices are refused without blocking."""
    parts = [part for part in Path(name).parts if part not in ("", ".")]
    if not parts or ".." in parts or Path(name).is_absolute():
        raise OSError(f"{name}: not a path inside the workspace")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        descriptor = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(f"{name}: not a regular file")
    return descriptor


def _copy_no_follow(root: Path, name: str, destination: Path) -> str:
    """Copy a regular file without following links; returns its SHA-1."""
    digest = hashlib.sha1()
    with os.fdopen(open_beneath(root, name), "rb") as reader, destination.open("wb") as writer:
        while chunk := reader.read(_COPY_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
    return digest.hexdigest()


def _digest(root: Path, name: str) -> str | None:
    """SHA-1 of a workspace file (None when it cannot be read as a regular file any more)."""
    digest = hashlib.sha1()
    try:
        with os.fdopen(open_beneath(root, name), "rb") as handle:
            while chunk := handle.read(_COPY_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:40]


def folder_snapshot(root: Path, changed: tuple[str, ...] = (), captures: Path | None = None) -> Snapshot:
    """A snapshot of a folder that already holds submitted files (rescoring, damaged copies), with the
    chart captures the harness received for them (None: files from outside a daharness sandbox)."""
    files, skipped = walk(root)
    return Snapshot(root, frozenset(files), changed, tuple(skipped), captures=captures)
