"""What a confined scoring worker may read of one job, and nothing else: the agent's collected files, the
chart captures and evidence files the harness kept, and the task's gold files, copied into the worker's
inputs folder. Copied, never hard-linked: a link would raise the link count of the original, and a
folder that another daharness process is reading at that moment (the same outputs rescored twice at
once) would then have that file left out as "a hard link to a file outside the tree" (workspace.walk). The job's paths
are rewritten to where the worker sees that folder (`sandbox.bwrap.SCORING_INPUTS`).

Evidence files are the `Path` values inside `submission.evidence` (an interactive turn's results file
and plots, say): a family that wants a scorer to read a file puts its Path there.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from daharness.core.backend import Snapshot
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.sandbox.workspace import copy_file


def evidence_files(value: Any) -> list[Path]:
    """The files (Path values) inside a submission's evidence."""
    if isinstance(value, Path):
        return [value]
    if isinstance(value, dict):
        return [path for item in value.values() for path in evidence_files(item)]
    if isinstance(value, list | tuple):
        return [path for item in value for path in evidence_files(item)]
    return []


def stage(
    task: Task, submission: Submission, snapshot: Snapshot | None, folder: Path, seen_as: str
) -> tuple[Task, Submission, Snapshot | None]:
    """Put the job's files in `folder` (a new folder), which the worker sees at `seen_as`; the job as
    the worker must see it."""
    folder.mkdir(mode=0o755)
    where = _Placer(folder, Path(seen_as))
    gold = [
        gold.model_copy(
            update={"source": where.put(gold.source.resolve(), f"gold/{index}/{gold.source.name}")}
        )
        for index, gold in enumerate(task.gold.files)
    ]
    task = task.model_copy(update={"gold": task.gold.model_copy(update={"files": gold})})
    evidence = where.evidence(submission.evidence)
    submission = replace(submission, evidence=evidence)
    if snapshot is not None:
        staged = set()
        for name in sorted(snapshot.files):
            try:
                where.put(snapshot.root / name, f"files/{name}")
                staged.add(name)
            except OSError:  # a path longer than the system takes (a tree 1,000 folders deep, say)
                continue  # not there for the scorers, as if it had not been collected
        captures = None
        if snapshot.captures is not None and snapshot.captures.is_dir():
            captures = where.put(snapshot.captures, "captures")
        files = frozenset(staged)
        changed = tuple(name for name in snapshot.changed if name in files)
        snapshot = replace(
            snapshot, root=where.seen("files"), files=files, changed=changed, captures=captures
        )
    return task, submission, snapshot


class _Placer:
    def __init__(self, folder: Path, seen_as: Path) -> None:
        self.folder, self.seen_as, self.count = folder, seen_as, 0

    def seen(self, relative: str) -> Path:
        return self.seen_as / relative

    def put(self, source: Path, relative: str) -> Path:
        """Link or copy `source` (a file, or a folder's regular files) to `relative`; where it is seen."""
        target = self.folder / relative
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        if source.is_dir():
            target.mkdir(mode=0o755, exist_ok=True)
            for parent, folders, names in os.walk(source):
                for name in folders:
                    (target / Path(parent).relative_to(source) / name).mkdir(mode=0o755, exist_ok=True)
                for name in names:
                    path = Path(parent) / name
                    if path.is_file() and not path.is_symlink():
                        _copy_readable(path, target / path.relative_to(source))
        elif source.is_file():
            _copy_readable(source, target)
        return self.seen(relative)

    def evidence(self, value: Any) -> Any:
        if isinstance(value, Path):
            self.count += 1
            return self.put(value, f"evidence/{self.count}/{value.name}") if value.exists() else value
        if isinstance(value, dict):
            return {key: self.evidence(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.evidence(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self.evidence(item) for item in value)
        return value


def _copy_readable(source: Path, target: Path) -> None:
    """A copy readable by everyone (the worker runs as another user), holes kept, never through a link."""
    copy_file(source, target)
    target.chmod(0o644)
