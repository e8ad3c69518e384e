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
from daharness.core.family import FormatOption
from daharness.core.registry import SuiteFormatEntry, families, suite_formats
from daharness.core.suite import Suite
from daharness.suites.manifest import manifest_file, read_manifest


def builtin_suites() -> dict[str, Path]:
    """Built-in suite name -> its folder, from the registered families (in the order of their names)."""
    found = {}
    for _, entry in families.items():
        folder = entry.impl.suite_dir
        if folder is not None and folder.is_dir() and (manifest := manifest_file(folder)):
            found[json.loads(manifest.read_text())["name"]] = folder
    return found


def load_suite(spec: str, **options: Any) -> Suite:
    """Load a suite by built-in name or `PREFIX:PATH`; `options` are format options (e.g. labels=), each
    refused (one line naming its flag) when the suite's format does not read it."""
    options = {key: value for key, value in options.items() if value is not None}
    entry, location = _located(spec)
    refused = [name for name in options if not format_reads(entry.name, name)]
    if refused:
        raise UserError(_not_read(refused[0], [spec]))
    suite = entry.load(location, options)
    suite.spec, suite.options = spec, options
    return check_families(apply_manifest(suite, location))


def options_per_suite(specs: list[str], options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """For a command naming several suites: each suite's format options, those its format reads; an
    option that none of them reads is refused, naming it."""
    given = {name: value for name, value in options.items() if value is not None}
    formats = {spec: suite_format(spec) for spec in specs}
    for name in given:
        if not any(format_reads(found, name) for found in formats.values()):
            raise UserError(_not_read(name, specs))
    return {spec: {n: v for n, v in given.items() if format_reads(formats[spec], n)} for spec in specs}


def suite_format(spec: str) -> str:
    """The registered name of the format that loads the suite `spec` (`dabench` for `closed-form`)."""
    return _located(spec)[0].name


def format_reads(format_name: str, option: str) -> bool:
    """Whether suites of the format read the format option `option` (by its name: "labels"). An option no
    family declares, or declares without naming its formats, is not checked."""
    declared = [found for found in _format_options() if found.name == option]
    return not declared or any(not found.formats or format_name in found.formats for found in declared)


def _located(spec: str) -> tuple[SuiteFormatEntry, Path]:
    """The format that loads `spec` and where its files are; an unknown name is one line naming the
    built-in suites and the prefixes."""
    for _, entry in suite_formats.items():
        if entry.prefix and spec.startswith(entry.prefix):
            return entry, Path(spec.removeprefix(entry.prefix))
    folder = builtin_suites().get(spec)
    if folder is None:
        known = ", ".join(builtin_suites()) or "none"
        prefixes = ", ".join(f"{e.prefix}PATH" for _, e in suite_formats.items() if e.prefix)
        raise UserError(f"unknown suite {spec!r}: built-in suites are {known}; files are named as {prefixes}")
    manifest = read_manifest(folder)
    return suite_formats.get(str(manifest.get("format"))), folder


def _format_options() -> list[FormatOption]:
    return [option for _, entry in families.items() for option in entry.impl.format_options]


def _not_read(option: str, specs: list[str]) -> str:
    declared = next(found for found in _format_options() if found.name == option)
    readers = [
        f"{entry.prefix}PATH" if entry.prefix else name
        for name, entry in suite_formats.items()
        if name in declared.formats
    ]
    builtin = [
        name for name in builtin_suites() if declared.builtin and suite_format(name) in declared.formats
    ]
    built_in = f" (built-in: {', '.join(builtin)})" if builtin else ""
    return f"{declared.option}: only {' and '.join(readers)} suites read it{built_in}, not suite {' or '.join(repr(spec) for spec in specs)}"


def check_families(suite: Suite) -> Suite:
    """Refuse a suite whose loader gave a task a family that is not registered (a format of a plugin
    that is not installed, a misspelt name), naming the task."""
    for task in suite.tasks:
        if task.family not in families:
            known = ", ".join(families)
            raise UserError(
                f"suite {suite.name}: task {task.id}: unknown family {task.family!r}; available: {known}"
            )
    return suite


def apply_manifest(suite: Suite, location: Path) -> Suite:
    """What a suite folder's suite.json says of every format's suites: `hide`, more to mask in the sandbox
    than the defaults (the data folders of packages that ship the suite's source data), as globs relative
    to site-packages or absolute paths, which every task of the suite gets; and `version`, a whole number
    raised whenever the suite's data or scoring changes (run.json records it; a run is not resumed
    across versions)."""
    manifest_path = manifest_file(location) if location.is_dir() else None
    if manifest_path is None:
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


__all__ = ["Suite", "builtin_suites", "format_reads", "load_suite", "options_per_suite", "suite_format"]
