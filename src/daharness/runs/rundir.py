"""The run directory: run.json, append-only samples.jsonl, trajectories/ and artifacts/.

Each finished sample is one line appended, flushed and fsynced, so a crash loses at most the sample in
flight. A line cut short by `kill -9` is dropped when the run is opened again, and that sample is redone.
The files' schemas are in `daharness.core.runlog` and `daharness.core.record`. A family or a scoring
mode group written under a former name (`closed_form` before format 3) is read under its name now.
"""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from daharness.core.backend import Snapshot
from daharness.core.errors import UserError, first_problem, located, plain_message
from daharness.core.jsonl import json_text, read_json, read_text
from daharness.core.record import SampleRecord
from daharness.core.registry import families, mode_groups
from daharness.core.runlog import RunSpec, TrajectoryFile, file_safe
from daharness.sandbox.workspace import copy_file, display_name

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"


class RunDir:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.samples_path = root / SAMPLES_FILE
        self._lock = threading.Lock()

    # ---- opening ------------------------------------------------------------------------------------

    @classmethod
    def open_for_writing(cls, root: Path, spec: RunSpec) -> RunDir:
        """Create a new run directory, or reopen one made by the same command (to resume)."""
        run = cls(root)
        run_file = root / RUN_FILE
        if run_file.exists():
            conflict = run.spec().conflicts_with(spec)
            if conflict:
                raise UserError(
                    f"{run_file}: this folder holds a different run ({conflict}); "
                    "resume with the same settings or choose another --out"
                )
        else:
            if root.exists() and not root.is_dir():
                raise UserError(f"{root}: not a folder; choose another --out")
            if root.exists() and any(root.iterdir()):
                raise UserError(f"{root}: folder exists, is not empty and holds no {RUN_FILE}")
        try:
            root.mkdir(parents=True, exist_ok=True)
            if not run_file.exists():
                write_atomic(run_file, spec.model_dump_json(indent=2))
            (root / "trajectories").mkdir(exist_ok=True)
            (root / "artifacts").mkdir(exist_ok=True)
        except OSError as exc:
            raise UserError(f"{root}: cannot write the run directory ({exc.strerror or exc})") from None
        run._drop_partial_last_line()
        return run

    @classmethod
    def open_for_reading(cls, root: Path) -> RunDir:
        if not (root / RUN_FILE).is_file():
            raise UserError(f"{root}: not a run directory (no {RUN_FILE})")
        return cls(root)

    def spec(self) -> RunSpec:
        path = self.root / RUN_FILE
        raw = read_json(path)
        if not isinstance(raw, dict):
            raise UserError(f"{path}: expected a JSON object")
        try:
            spec = RunSpec.from_json_dict(raw)  # refuses a format_version newer than this daharness reads
        except ValidationError as exc:
            raise UserError(f"{path}: {first_problem(exc)}") from None
        renamed = former_mode_groups()
        spec.scoring.modes = {renamed.get(group, group): mode for group, mode in spec.scoring.modes.items()}
        return spec

    def _samples_bytes(self) -> bytes:
        """samples.jsonl as bytes (a line cut off by kill -9 may end inside a character); none yet: b""."""
        try:
            return self.samples_path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise UserError(f"{self.samples_path}: cannot read ({exc.strerror or exc})") from None

    def _drop_partial_last_line(self) -> None:
        data = self._samples_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with self.samples_path.open("r+b") as handle:
                handle.truncate(keep)

    # ---- records ------------------------------------------------------------------------------------

    def records(self) -> list[SampleRecord]:
        """Every complete record, in the order written (a trailing partial line is ignored)."""
        records = []
        # the text after the last newline is empty or a cut-off line
        complete = self._samples_bytes().split(b"\n")[:-1]
        renamed = former_families() if complete else {}
        for number, line in enumerate(complete, start=1):
            if not line.strip():
                continue
            try:
                record = SampleRecord.model_validate_json(line)
            except ValidationError as exc:
                raise located(
                    self.samples_path, f"not a sample record ({plain_message(exc.errors()[0])})", number
                ) from None
            if record.family in renamed:
                record.family = renamed[record.family]
            records.append(record)
        return records

    def latest_records(self) -> dict[str, SampleRecord]:
        """The last record of each sample, by its key (the task id, with `@epoch` for a repeat): a
        retried error is superseded by its retry."""
        return {record.key: record for record in self.records()}

    def finished_ids(self) -> set[str]:
        return {rid for rid, record in self.latest_records().items() if record.status == "scored"}

    def append(self, record: SampleRecord) -> None:
        line = json_text(record) + "\n"
        with self._lock, self.samples_path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def write_trajectory(self, trajectory: TrajectoryFile) -> None:
        write_atomic(trajectory_path(self.root, trajectory.id), json_text(trajectory, indent=2))

    def read_trajectory(self, sample_id: str) -> TrajectoryFile | None:
        path = trajectory_path(self.root, sample_id)
        if not path.is_file():
            return None
        try:
            return TrajectoryFile.model_validate_json(read_text(path))
        except ValidationError as exc:
            raise UserError(f"{path}: not a trajectory ({plain_message(exc.errors()[0])})") from None

    def artifacts_dir(self, sample_id: str) -> Path:
        return self.root / "artifacts" / file_safe(sample_id)

    def attachments_dir(self, sample_id: str) -> Path:
        """What the harness made for a sample's record (the screenshots its model was sent)."""
        return self.root / "attachments" / file_safe(sample_id)

    def write_attachments(self, sample_id: str, files: dict[str, bytes]) -> None:
        """Keep a sample's attachments, each under its plain file name (a name with a folder in it is
        not one the harness makes, and is left out)."""
        for name, data in files.items():
            if name != file_safe(name) or name.startswith("."):
                continue
            target = self.attachments_dir(sample_id) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic_bytes(target, data)

    def captures_dir(self, sample_id: str) -> Path:
        """The chart captures the harness received for a sample (never the agent's files)."""
        return self.root / "captures" / file_safe(sample_id)

    def save_artifacts(
        self,
        sample_id: str,
        snapshot: Snapshot,
        *,
        max_files: int | None = None,
        max_bytes: int | None = None,
    ) -> ArtifactsSaved:
        """Keep the files the agent created or changed (from the collected snapshot), in name order up to
        `max_files` files and `max_bytes` bytes (apparent size; holes stay holes), the symbolic links it
        left (as links to the same target, never followed) and the chart captures the harness received.
        Names that are not UTF-8 are saved as written in the record (bytes as `\\xNN`)."""
        target = self.artifacts_dir(sample_id)
        saved = ArtifactsSaved()
        for name in snapshot.changed:
            source = snapshot.root / name
            try:
                size = source.stat().st_size
            except OSError:
                continue
            if (max_files is not None and len(saved.names) >= max_files) or (
                max_bytes is not None and saved.bytes + size > max_bytes
            ):
                saved.left_out.append(display_name(name))
                continue
            destination = target / display_name(name)
            try:
                destination.parent.mkdir(parents=True, exist_ok=True)
                copy_file(source, destination)
            except OSError as exc:
                saved.failed.append(f"{display_name(name)} ({exc.strerror or exc})")
                continue
            saved.names.append(display_name(name))
            saved.bytes += size
        for entry in snapshot.skipped:
            link = target / display_name(entry.path)
            if entry.kind != "symlink" or entry.target is None or link.is_symlink() or link.exists():
                continue
            try:
                link.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(entry.target, link)
            except OSError as exc:
                saved.failed.append(f"{display_name(entry.path)} ({exc.strerror or exc})")
        if snapshot.captures is not None and snapshot.captures.is_dir():
            shutil.copytree(snapshot.captures, self.captures_dir(sample_id), dirs_exist_ok=True)
        return saved


@dataclass
class ArtifactsSaved:
    names: list[str] = field(default_factory=list)
    bytes: int = 0
    left_out: list[str] = field(default_factory=list)  # over the caps
    failed: list[str] = field(default_factory=list)  # could not be written (a path too long, say)


def former_families() -> dict[str, str]:
    """A registered family's former name -> its name."""
    return {old: name for name, entry in families.items() for old in entry.impl.former_names}


def former_mode_groups() -> dict[str, str]:
    """A scoring mode group's former name -> its name."""
    return {old: name for name, group in mode_groups().items() for old in group.former_names}


def trajectory_path(run_root: Path, sample_id: str) -> Path:
    return run_root / "trajectories" / f"{file_safe(sample_id)}.json"


def _write_atomic_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_atomic(path: Path, text: str) -> None:
    """Write a text file whole or not at all (a crash leaves the old one)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
