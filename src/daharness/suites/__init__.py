"""Suites: the built-in ones shipped in this folder, and suites named by path to official files.

A suite is named on the command line as either

* a built-in name, e.g. ``closed-form`` (see ``daharness suites list``), or
* ``FORMAT:PATH`` for files in a registered format, e.g. ``dabench:QUESTIONS.jsonl`` for official
  InfiAgent-DABench files (``daharness suites formats`` lists the prefixes).

Built-in suites are data, not code: a folder with a ``suite.json`` naming its format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.registry import suite_formats
from daharness.core.suite import Suite

BUILTIN_ROOT = Path(__file__).resolve().parent


def builtin_suites() -> dict[str, Path]:
    """Built-in suite name -> its folder."""
    found = {}
    for manifest in sorted(BUILTIN_ROOT.glob("*/suite.json")):
        found[json.loads(manifest.read_text())["name"]] = manifest.parent
    return found


def load_suite(spec: str, **options: Any) -> Suite:
    """Load a suite by built-in name or `PREFIX:PATH`; `options` are format options (e.g. labels=)."""
    options = {key: value for key, value in options.items() if value is not None}
    for _, entry in suite_formats.items():
        if entry.prefix and spec.startswith(entry.prefix):
            suite = entry.load(Path(spec.removeprefix(entry.prefix)), options)
            suite.spec, suite.options = spec, options
            return suite
    folder = builtin_suites().get(spec)
    if folder is None:
        known = ", ".join(builtin_suites()) or "none"
        prefixes = ", ".join(f"{e.prefix}PATH" for _, e in suite_formats.items() if e.prefix)
        raise UserError(f"unknown suite {spec!r}: built-in suites are {known}; files are named as {prefixes}")
    manifest = json.loads((folder / "suite.json").read_text())
    suite = suite_formats.get(str(manifest.get("format"))).load(folder, options)
    suite.spec, suite.options = spec, options
    return suite


__all__ = ["BUILTIN_ROOT", "Suite", "builtin_suites", "load_suite"]
