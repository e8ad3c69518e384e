"""The run directory: run.json, append-only samples.jsonl, trajectories/ and artifacts/.

Each finished sample is one line appended, flushed and fsynced, so a crash loses at most the sample in
flight. A line cut short by `kill -9` is dropped when the run is opened again, and that sample is redone.
The files' schemas are in `daharness.core.runlog` and `daharness.core.record`.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

from pydantic import ValidationError

from daharness.core.backend import Snapshot
from daharness.core.errors import UserError, located
from daharness.core.record import SampleRecord
from daharness.core.runlog import IDENTITY_KEYS, RunSpec, TrajectoryFile, file_safe

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
            existing, wanted = run.spec().identity(), spec.identity()
            for key in IDENTITY_KEYS:
                if existing[key] != wanted[key]:
                    raise UserError(
                        f"{run_file}: this folder holds a different run ({key} = {existing[key]!r}, "
                        f"now {wanted[key]!r}); choose another --out"
                    )
        else:
            if root.exists() and any(root.iterdir()):
                raise UserError(f"{root}: folder exists, is not empty and holds no {RUN_FILE}")
            root.mkdir(parents=True, exist_ok=True)
            _write_atomic(run_file, spec.model_dump_json(indent=2))
        (root / "trajectories").mkdir(exist_ok=True)
        (root / "artifacts").mkdir(exist_ok=True)
        run._drop_partial_last_line()
        return run

    @classmethod
    def open_for_reading(cls, root: Path) -> RunDir:
        if not (root / RUN_FILE).is_file():
            raise UserError(f"{root}: not a run directory (no {RUN_FILE})")
        return cls(root)

    def spec(self) -> RunSpec:
        path = self.root / RUN_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise located(path, f"not valid JSON ({exc.msg})", exc.lineno) from None
        try:
            return RunSpec.from_json_dict(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise UserError(f"{path}: field {'.'.join(map(str, first['loc']))!r}: {first['msg']}") from None

    def _drop_partial_last_line(self) -> None:
        if not self.samples_path.exists():
            return
        data = self.samples_path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with self.samples_path.open("r+b") as handle:
                handle.truncate(keep)

    # ---- records ------------------------------------------------------------------------------------

    def records(self) -> list[SampleRecord]:
        """Every complete record, in the order written (a trailing partial line is ignored)."""
        if not self.samples_path.exists():
            return []
        records = []
        lines = self.samples_path.read_text(encoding="utf-8").split("\n")
        complete = lines[:-1]  # the text after the last newline is empty or a cut-off line
        for number, line in enumerate(complete, start=1):
            if not line.strip():
                continue
            try:
                records.append(SampleRecord.model_validate_json(line))
            except ValidationError as exc:
                raise located(
                    self.samples_path, f"not a sample record ({exc.errors()[0]['msg']})", number
                ) from None
        return records

    def latest_records(self) -> dict[str, SampleRecord]:
        """The last record of each sample id (a retried error is superseded by its retry)."""
        return {record.id: record for record in self.records()}

    def finished_ids(self) -> set[str]:
        return {rid for rid, record in self.latest_records().items() if record.status == "scored"}

    def append(self, record: SampleRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock, self.samples_path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def write_trajectory(self, trajectory: TrajectoryFile) -> None:
        _write_atomic(trajectory_path(self.root, trajectory.id), trajectory.model_dump_json(indent=2))

    def read_trajectory(self, sample_id: str) -> TrajectoryFile | None:
        path = trajectory_path(self.root, sample_id)
        if not path.is_file():
            return None
        try:
            return TrajectoryFile.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise UserError(f"{path}: not a trajectory ({exc.errors()[0]['msg']})") from None

    def artifacts_dir(self, sample_id: str) -> Path:
        return self.root / "artifacts" / file_safe(sample_id)

    def captures_dir(self, sample_id: str) -> Path:
        """The chart captures the harness received for a sample (never the agent's files)."""
        return self.root / "captures" / file_safe(sample_id)

    def save_artifacts(self, sample_id: str, snapshot: Snapshot) -> None:
        """Keep the files the agent created or changed (from the collected snapshot), the symbolic links
        it left (as links to the same target, never followed) and the chart captures received."""
        target = self.artifacts_dir(sample_id)
        for name in snapshot.changed:
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(snapshot.root / name, destination)
        for entry in snapshot.skipped:
            link = target / entry.path
            if entry.kind != "symlink" or entry.target is None or link.is_symlink() or link.exists():
                continue
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(entry.target, link)
        if snapshot.captures is not None and snapshot.captures.is_dir():
            shutil.copytree(snapshot.captures, self.captures_dir(sample_id), dirs_exist_ok=True)


def trajectory_path(run_root: Path, sample_id: str) -> Path:
    return run_root / "trajectories" / f"{file_safe(sample_id)}.json"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
