"""A sample's workspace: a fresh directory holding the task's visible files and nothing else."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from daharness.tasks.model import Task


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
        workspace._initial = workspace._digests()
        return workspace

    def _files(self) -> list[Path]:
        return [p for p in self.root.rglob("*") if p.is_file() and not p.is_symlink()]

    def _digests(self) -> dict[str, str]:
        return {p.relative_to(self.root).as_posix(): _digest(p) for p in self._files()}

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """Cheap per-step state: size and modification time of every file."""
        found = {}
        for path in self._files():
            stat = path.stat()
            found[path.relative_to(self.root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
        return found

    def changed_since(self, before: dict[str, tuple[int, int]]) -> list[str]:
        return sorted(name for name, state in self.snapshot().items() if before.get(name) != state)

    def changed_files(self) -> list[str]:
        """Files created or modified since the workspace was made, as relative paths."""
        return sorted(name for name, digest in self._digests().items() if self._initial.get(name) != digest)

    def copy_changed_to(self, target: Path) -> list[str]:
        changed = self.changed_files()
        for name in changed:
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.root / name, destination)
        return changed

    def hand_to(self, uid: int, gid: int) -> None:
        """Give the workspace to the sandbox's unprivileged user so that it can write there."""
        for path in [self.root, *self.root.rglob("*")]:
            os.lchown(path, uid, gid)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _digest(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:40]
