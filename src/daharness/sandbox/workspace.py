"""A sample's workspace on the host: a fresh folder holding the task's visible files, and the frozen,
symlink-free copy of it that scorers read once the agent is done."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daharness.core.backend import FileTooLarge, SkipKind, SkippedEntry, Snapshot
from daharness.core.task import Task

_COPY_CHUNK = 1 << 20


@dataclass
class Workspace:
    """Created per sample; remembers file digests to tell which files the agent produced or changed."""

    root: Path
    _initial: dict[str, str] = field(default_factory=dict)

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
        workspace._initial = {name: _digest(root / name) for name in walk(root)[0]}
        return workspace

    def snapshot_state(self) -> dict[str, tuple[int, int]]:
        """Cheap per-step state: size and modification time of every regular file."""
        found = {}
        for name in walk(self.root)[0]:
            try:
                info = os.lstat(self.root / name)
            except OSError:  # gone meanwhile, or a path too long for the kernel
                continue
            found[name] = (info.st_size, info.st_mtime_ns)
        return found

    def changed_since(self, before: dict[str, tuple[int, int]]) -> list[str]:
        return sorted(name for name, state in self.snapshot_state().items() if before.get(name) != state)

    def changed_files(self) -> list[str]:
        """Files created or modified since the workspace was made, as relative paths."""
        return sorted(
            name for name in walk(self.root)[0] if self._initial.get(name) != _digest_or_none(self.root, name)
        )

    def read_file(self, name: str) -> bytes:
        try:
            descriptor = open_beneath(self.root, name)
        except OSError:
            raise FileNotFoundError(f"{name}: not a regular file in the workspace") from None
        with os.fdopen(descriptor, "rb") as handle:
            return handle.read()

    def copy_file_out(self, name: str, target: Path, max_bytes: int) -> str:
        """Copy a regular workspace file to `target` in chunks (never through a link), unless it is
        larger than `max_bytes` (FileTooLarge, nothing copied); the SHA-256 of what was copied."""
        try:
            descriptor = open_beneath(self.root, name)
        except OSError:
            raise FileNotFoundError(f"{name}: not a regular file in the workspace") from None
        size = os.fstat(descriptor).st_size
        if size > max_bytes:
            os.close(descriptor)
            raise FileTooLarge(name, size, max_bytes)
        digest, copied = hashlib.sha256(), 0
        with os.fdopen(descriptor, "rb") as reader, target.open("wb") as writer:
            while (chunk := reader.read(_COPY_CHUNK)) and copied + len(chunk) <= max_bytes:
                copied += len(chunk)
                digest.update(chunk)
                writer.write(chunk)
        if chunk:  # it grew past the limit while being copied
            target.unlink()
            raise FileTooLarge(name, copied + len(chunk), max_bytes)
        return digest.hexdigest()

    def collect(self, target: Path, quota: CopyQuota | None = None) -> Snapshot:
        """Copy every regular file to `target` (holes of sparse files stay holes); links, devices, FIFOs
        and sockets are left out and listed, and so are the agent's files beyond `quota` (the task's
        own files always fit; the others are taken in name order, by apparent size)."""
        files, skipped = walk(self.root)
        files.sort(key=lambda name: name not in self._initial)  # stable: the task's files first
        target.mkdir(parents=True, exist_ok=True)
        copied, changed = [], []
        room = _Room(quota)
        for name in files:
            source = self.root / name
            try:
                size = os.lstat(source).st_size
                if not room.take(name in self._initial, size):
                    skipped.append(SkippedEntry(name, "over_quota"))
                    continue
                destination = target / name
                destination.parent.mkdir(parents=True, exist_ok=True)
                # opened one component at a time: a folder swapped for a link cannot lead out
                digest = copy_descriptor(open_beneath(self.root, name), destination)
            except OSError:
                skipped.append(SkippedEntry(name, "unreadable"))
                continue
            copied.append(name)
            if self._initial.get(name) != digest:
                changed.append(name)
        removed = sorted(set(self._initial) - set(copied) - {entry.path for entry in skipped})
        skipped.sort(key=lambda entry: entry.path)
        return Snapshot(target, frozenset(copied), tuple(sorted(changed)), tuple(skipped), tuple(removed))

    def hand_to(self, uid: int, gid: int) -> None:
        """Give the workspace to the sandbox's unprivileged user so that it can write there."""
        for path in [self.root, *self.root.rglob("*")]:
            os.lchown(path, uid, gid)

    def remove(self) -> None:
        remove_tree(self.root)


@dataclass(frozen=True)
class CopyQuota:
    """What may be copied out beyond the task's own files: bytes (apparent size) and files."""

    max_bytes: int
    max_files: int


class _Room:
    def __init__(self, quota: CopyQuota | None) -> None:
        self.quota, self.bytes, self.files = quota, 0, 0

    def take(self, task_file: bool, size: int) -> bool:
        if self.quota is None or task_file:
            return True
        if self.files + 1 > self.quota.max_files or self.bytes + size > self.quota.max_bytes:
            return False
        self.files, self.bytes = self.files + 1, self.bytes + size
        return True


def display_name(name: str) -> str:
    """A workspace name as text that any JSON writer accepts: bytes that are not UTF-8 (kept in `name`
    as surrogate escapes) are written as `\\xNN`, so the record still says exactly what the file was."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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
    """Remove a folder however deep it is and however long its paths get: iterative, one folder
    descriptor at a time and names relative to it (a full path could exceed the kernel's limit), never
    through a link, and never raising (what cannot be removed stays)."""
    try:
        info = os.lstat(root)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(OSError):
            os.unlink(root)
        return
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return
    stack: list[tuple[str, list[str]]] = []  # (folder entered, its parent's subfolders still to do)
    pending = _clear_folder(fd)
    while True:
        if pending:
            name = pending.pop()
            child = _enter(fd, name)
            if child is None:
                continue
            stack.append((name, pending))
            os.close(fd)
            fd, pending = child, _clear_folder(child)
            continue
        if not stack:
            break
        name, pending = stack.pop()
        try:
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
        except OSError:
            break
        os.close(fd)
        fd = parent
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=fd)
    os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(root)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _clear_folder(fd: int) -> list[str]:
    """Unlink every non-folder entry of an open folder; returns the names of its subfolders."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o700)  # the agent may have made it read-only
    try:
        entries = list(os.scandir(fd))
    except OSError:
        return []
    folders = []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
        except OSError:
            continue
    return folders


def _enter(parent: int, name: str) -> int | None:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except PermissionError:
        pass
    except OSError:
        return None
    try:  # a folder the agent made unreadable: it is ours, so make it readable again
        os.chmod(name, 0o700, dir_fd=parent)
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        return None


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


def _open_no_follow(path: Path) -> int:
    """A descriptor of a regular file, refusing links, FIFOs and devices (no blocking open of a FIFO)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(f"{path}: not a regular file")
    return descriptor


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


def copy_file(source: Path, destination: Path) -> str:
    """Copy a regular file without following links, keeping its holes (a sparse file stays sparse, so a
    1 GB file of nothing costs no disk); returns the SHA-1 of its content. At most the size it had
    when opened is copied, even if something keeps writing to it."""
    return copy_descriptor(_open_no_follow(source), destination)


def copy_descriptor(descriptor: int, destination: Path) -> str:
    """`copy_file` from an open descriptor of a regular file (closed when done)."""
    digest = hashlib.sha1()
    with os.fdopen(descriptor, "rb", buffering=0) as reader, destination.open("wb") as writer:
        size = os.fstat(reader.fileno()).st_size
        offset = 0
        for start, end in _data_ranges(reader.fileno(), size):
            _hash_zeros(digest, start - offset)
            writer.seek(start)
            reader.seek(start)
            remaining = end - start
            while remaining > 0 and (chunk := reader.read(min(_COPY_CHUNK, remaining))):
                digest.update(chunk)
                writer.write(chunk)
                remaining -= len(chunk)
            offset = end - remaining
        _hash_zeros(digest, size - offset)
        writer.truncate(size)
    return digest.hexdigest()


def _data_ranges(fd: int, size: int) -> list[tuple[int, int]]:
    """The (start, end) ranges of a file that hold data; all of it where holes cannot be asked for."""
    ranges = []
    offset = 0
    try:
        while offset < size:
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole is left
                    break
                raise
            if start >= size:
                break
            end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
            ranges.append((start, end))
            offset = end
    except (OSError, AttributeError):  # no SEEK_DATA here: copy everything
        return [(0, size)] if size else []
    return ranges


_ZEROS = bytes(_COPY_CHUNK)


def _hash_zeros(digest: Any, count: int) -> None:
    while count > 0:
        digest.update(_ZEROS[: min(count, _COPY_CHUNK)])
        count -= _COPY_CHUNK


def _digest(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as handle:
        while chunk := handle.read(_COPY_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _digest_or_none(root: Path, name: str) -> str | None:
    """SHA-1 of a workspace file, opened as `open_beneath` does (None when it is not a regular file any
    more: the agent's processes may change it meanwhile)."""
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
