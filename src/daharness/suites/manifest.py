"""`suite.json`: the manifest of a suite folder (its name, format, description and files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.jsonl import read_json

MANIFEST = "suite.json"


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise UserError(f"{path}: expected a JSON object")
    for key in ("name", "format"):
        if not isinstance(manifest.get(key), str):
            raise UserError(f"{path}: field {key!r} is missing or not a string")
    return manifest
