"""The folder a suite generator writes into (`daharness generate closed-form | interactive`): its tables,
the settings it was generated with, its manifest. Both generators resume in it from their journal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.jsonl import read_json, write_atomic
from daharness.core.paths import SuiteFolder


def prepare_generated_suite(
    out: Path,
    settings_file: str,
    wanted: dict[str, Any],
    model: str,
    tables: dict[str, Path],
    manifest: dict[str, Any],
) -> None:
    """Copy the tables (name in the suite -> the user's file, each a regular file inside its folder:
    a link out of it is refused, `core/paths.py`), record the settings (`wanted`, and the model) and
    write the manifest. Resuming in a folder generated with other settings, or in a folder that holds
    something else, is refused."""
    recorded = out / settings_file
    if recorded.is_file():
        before = read_json(recorded)
        changed = [
            key for key, value in wanted.items() if not isinstance(before, dict) or before.get(key) != value
        ]
        if changed:
            was = before.get(changed[0]) if isinstance(before, dict) else None
            raise UserError(
                f"{recorded}: this folder was generated with another {changed[0].replace('_', '-')} "
                f"({was!r}); use a new --out"
            )
    elif out.exists() and not out.is_dir():
        raise UserError(f"{out}: not a folder; choose another --out")
    elif out.exists() and any(out.iterdir()):
        raise UserError(f"{out}: not empty and not a generated suite (no {settings_file})")
    (out / "tables").mkdir(parents=True, exist_ok=True)
    for name, source in tables.items():
        checked = SuiteFolder.at(source.parent, label="tables folder").file(source.name, what="table")
        shutil.copyfile(checked, out / "tables" / name)
    write_atomic(recorded, json.dumps({**wanted, "model": model}, indent=2) + "\n")
    suite = {"name": out.name, "version": 1, **manifest}
    write_atomic(out / "suite.json", json.dumps(suite, indent=2) + "\n")
