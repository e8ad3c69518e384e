"""The host's end of the chart-capture channel: captures arrive with the kernel's step replies and are
kept in a folder of the harness (never mounted in the sandbox), in the layout `Snapshot.captures`
describes. See `daharness_kernel/captures.py` for the sandbox's end."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from daharness.core.backend import CAPTURE_INDEX
from daharness.sandbox.scratch import process_scratch


class CaptureStore:
    def __init__(self) -> None:
        # in the process's scratch folder, which the next daharness removes if this one is killed
        self.folder = Path(tempfile.mkdtemp(prefix="captures-", dir=process_scratch()))
        self.count = 0
        self.dropped: list[str] = []

    def add(self, captures: Any, dropped: Any = ()) -> None:
        """Keep the captures of one reply (anything that is not a capture object is ignored)."""
        self.dropped += [str(reason) for reason in dropped or () if reason][:100]
        for capture in captures if isinstance(captures, list) else ():
            if not isinstance(capture, dict):
                continue
            image = capture.get("image") if isinstance(capture.get("image"), dict) else {}
            entry = {
                "n": self.count,
                "file": _text(capture.get("file")),
                "cwd": _text(capture.get("cwd")),
                "sha256": _text(image.get("sha256")),
                "event": _text(capture.get("event")),
            }
            (self.folder / f"{self.count}.json").write_text(json.dumps(capture), encoding="utf-8")
            with (self.folder / CAPTURE_INDEX).open("a", encoding="utf-8") as index:
                index.write(json.dumps(entry) + "\n")
            self.count += 1

    def file_for(self, sha256: str) -> Path | None:
        """The file of the latest capture of a save that wrote bytes of this SHA-256, or None."""
        index = self.folder / CAPTURE_INDEX
        lines = index.read_text(encoding="utf-8").splitlines() if index.is_file() else []
        found = [entry for entry in map(json.loads, lines) if entry.get("sha256") == sha256]
        return self.folder / f"{found[-1]['n']}.json" if found else None

    def copy_to(self, target: Path) -> Path:
        shutil.copytree(self.folder, target)
        return target

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
