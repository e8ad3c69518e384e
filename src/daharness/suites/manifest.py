"""`suite.json`: the manifest of a suite folder (its name, format, description and files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.jsonl import read_json
from daharness.core.paths import SuiteFolder

MANIFEST = "suite.json"


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of the suite folder `folder`: a JSON object with a name and a format, itself a
    file inside the folder (`core/paths.py`: not a link out of it)."""
    path = manifest_file(folder)
    if path is None:
        raise UserError(f"{folder}/{MANIFEST}: file not found")
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise UserError(f"{path}: expected a JSON object")
    for key in ("name", "format"):
        if not isinstance(manifest.get(key), str):
            raise UserError(f"{path}: field {key!r} is missing or not a string")
    return manifest


def manifest_file(folder: Path) -> Path | None:
    """The checked path of `folder`'s suite.json, None when it has none."""
    return SuiteFolder.at(folder).optional_file(MANIFEST, what="manifest")
