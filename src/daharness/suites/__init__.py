"""Suites: the built-in ones shipped in this folder, and suites named by path to official files.

A suite is named on the command line as either

* a built-in name, e.g. ``closed-form`` (see ``daharness suites list``), or
* ``FORMAT:PATH`` for files in a registered format, e.g. ``dabench:QUESTIONS.jsonl`` for official
  InfiAgent-DABench files (``daharness suites list`` lists the prefixes).

Built-in suites are data, not code: a folder with a ``suite.json`` naming its format, shipped inside the
family that owns it (``FamilyBase.suite_dir``: ``families/<name>/suite/``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.registry import families, suite_formats
from daharness.core.suite import Suite


def builtin_suites() -> dict[str, Path]:
    """Built-in suite name -> its folder, from the registered families (in the order of their names)."""
    found = {}
    for _, entry in families.items():
        folder = entry.impl.suite_dir
        if folder is not None and (folder / "suite.json").is_file():
            found[json.loads((folder / "suite.json").read_text())["name"]] = folder
    return found


def load_suite(spec: str, **options: Any) -> Suite:
    """Load a suite by built-in name or `PREFIX:PATH`; `options` are format options (e.g. labels=)."""
    options = {key: value for key, value in options.items() if value is not None}
    for _, entry in suite_formats.items():
        if entry.prefix and spec.startswith(entry.prefix):
            location = Path(spec.removeprefix(entry.prefix))
            suite = entry.load(location, options)
            suite.spec, suite.options = spec, options
            return apply_manifest(suite, location)
    folder = builtin_suites().get(spec)
    if folder is None:
        known = ", ".join(builtin_suites()) or "none"
        prefixes = ", ".join(f"{e.prefix}PATH" for _, e in suite_formats.items() if e.prefix)
        raise UserError(f"unknown suite {spec!r}: built-in suites are {known}; files are named as {prefixes}")
    manifest = json.loads((folder / "suite.json").read_text())
    suite = suite_formats.get(str(manifest.get("format"))).load(folder, options)
    suite.spec, suite.options = spec, options
    return apply_manifest(suite, folder)


def apply_manifest(suite: Suite, location: Path) -> Suite:
    """What a suite folder's suite.json says of every format's suites: `hide`, more to mask in the sandbox
    than the defaults (the data folders of packages that ship the suite's source data), as globs relative
    to site-packages or absolute paths, which every task of the suite gets; and `version`, a whole number
    raised whenever the suite's data or scoring changes (run.json records it; a run is not resumed
    across versions)."""
    manifest_path = location / "suite.json"
    if not manifest_path.is_file():
        return suite
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        hide = manifest.get("hide", [])
    except (ValueError, AttributeError):
        return suite  # the format's loader has already said what is wrong with the manifest
    if not isinstance(hide, list) or not all(isinstance(item, str) and item.strip() for item in hide):
        raise UserError(f"{manifest_path}: field 'hide' must be a list of paths (strings)")
    version = manifest.get("version")
    if version is not None and (type(version) is not int or version < 1):
        raise UserError(f"{manifest_path}: field 'version' must be a whole number from 1, got {version!r}")
    for task in suite.tasks:
        task.hidden_paths = list(dict.fromkeys([*task.hidden_paths, *hide]))
    suite.version = version
    return suite


__all__ = ["Suite", "builtin_suites", "load_suite"]
