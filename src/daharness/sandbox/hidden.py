"""What the sandbox hides although it is mounted: data that installed packages ship and that holds
benchmark answers, and daharness's own install metadata (and an editable install's pointers to its source).

scikit-learn, statsmodels and vega_datasets ship the very datasets the built-in suites were exported
from (the ML tasks' hidden test labels included), and a regular install's `RECORD` lists the SHA-256 of
every gold file. Inside the sandbox these are masked: a data folder becomes an empty read-only tmpfs,
a data file an empty read-only file, so `load_wine()` fails but `import sklearn.datasets` still works.

An entry to hide is either a glob relative to every site-packages folder of the mounted Python
installations (`sklearn/datasets`), or an absolute path. Inside what it names, folders that hold no
modules (an `__init__.py` alone does not count) are masked whole and, in folders that do, every file
that is not code (`.py`, `.so`, ...). A suite
adds its own entries with `"hide": [...]` in its suite.json (they reach the sandbox as
`Task.hidden_paths`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from daharness.sandbox.once import computed_once

# The packages that hold the built-in suites' source data, and daharness's own install metadata.
DEFAULT_HIDDEN = (
    "sklearn/datasets",
    "statsmodels/datasets",
    "vega_datasets/_data",
    "pydataset/resources",
    "daharness-*.dist-info",
)
# Hidden whole, code included: daharness itself (its suites hold labels, gold files and reference
# solutions), in every mounted site-packages folder, not only the one this process imports it from.
WHOLLY_HIDDEN = ("daharness",)
# An editable install's pointers to its source folder, code included (a finder module names the folder).
INSTALL_POINTERS = ("__editable__*daharness*",)
_CODE_SUFFIXES = {".py", ".pyc", ".pyi", ".so", ".pyd", ".pxd", ".pyx", ".typed"}
_SITE_GLOBS = (
    "lib/python3*/site-packages",
    "lib/python3*/dist-packages",
    "lib/python3/dist-packages",
    "local/lib/python3*/dist-packages",
    "local/lib/python3*/site-packages",
)


@dataclass(frozen=True)
class Mask:
    """A path hidden in the sandbox: a folder becomes an empty read-only tmpfs, a file an empty file."""

    path: Path
    folder: bool


def masks(entries: Sequence[str], mounted: Sequence[Path]) -> tuple[Mask, ...]:
    """What masks the default entries and `entries`, for folders mounted at `mounted`."""
    return _masks_of(tuple(dict.fromkeys([*DEFAULT_HIDDEN, *entries])), tuple(mounted))


@computed_once
def _masks_of(entries: tuple[str, ...], mounted: tuple[Path, ...]) -> tuple[Mask, ...]:
    sites = site_folders(mounted)
    targets: list[Path] = []
    for entry in entries:
        if entry.startswith("/"):
            path = Path(entry)
            if path.exists() and any(path.is_relative_to(root) for root in mounted):
                targets.append(path)
        else:
            targets += [match for site in sites for match in sorted(site.glob(entry))]
    found: list[Mask] = []
    seen: set[Path] = set()
    for folder in [site / name for site in sites for name in WHOLLY_HIDDEN]:
        if folder.is_dir() and not folder.is_symlink():
            found.append(Mask(folder, folder=True))
            seen.add(folder)
    for pointer in [
        match for site in sites for glob in INSTALL_POINTERS for match in sorted(site.glob(glob))
    ]:
        if pointer.is_file() and not pointer.is_symlink() and pointer not in seen:
            found.append(Mask(pointer, folder=False))
            seen.add(pointer)
    for target in targets:
        for folder, file in _masks(target):
            path = folder or file
            if path is None or path in seen:
                continue
            seen.add(path)
            found.append(Mask(path, folder=folder is not None))
    return tuple(found)


def site_folders(mounted: Iterable[Path]) -> list[Path]:
    """Every site-packages / dist-packages folder under the mounted roots."""
    found: list[Path] = []
    for root in mounted:
        if root.name in ("site-packages", "dist-packages"):
            found.append(root)
        for pattern in _SITE_GLOBS:
            found += [path for path in root.glob(pattern) if path.is_dir()]
    return list(dict.fromkeys(found))


def _masks(target: Path) -> list[tuple[Path | None, Path | None]]:
    """(folder to mask whole, None) or (None, file to mask) pairs for one hidden entry."""
    if target.is_symlink():
        return []
    if target.is_file():
        return [] if _is_code(target) else [(None, target)]
    if not target.is_dir():
        return []
    if not _holds_code(target):
        return [(target, None)]
    found: list[tuple[Path | None, Path | None]] = []
    for child in sorted(target.iterdir()):
        found += _masks(child)
    return found


def _is_code(path: Path) -> bool:
    return path.suffix in _CODE_SUFFIXES


def _holds_code(folder: Path) -> bool:
    """Whether a folder holds modules; an `__init__.py` alone marks a data folder (importlib.resources)."""
    return any(
        _is_code(Path(name)) and name.split(".")[0] != "__init__"
        for _, _, names in os.walk(folder)
        for name in names
    )
