"""Paths named by suite data, held inside the suite's own folder.

A suite folder is data from anyone (a download, a colleague's tables, a generated suite). Whatever it
names, by a field of its JSON, a table a question names, a link among its files or a file its format
expects (`suite.json`, `solution.py`), is a path the harness would read on the host: into a task, a
prompt sent to a model, a sandbox, a gold file. So every loader resolves such a path through
`SuiteFolder`: after links it must lie inside the suite's folder and be a regular file (or a folder
where a folder is wanted). Anything else (an absolute path, `..` climbing out, a link pointing out, a
FIFO, a device, a folder named as a file) is refused with a one-line reason, `Refused`, which the
loader turns into the task's entry in `Suite.unsupported` (or, for what every task needs, the error).

Only the kind of each entry is looked at (`stat`, never `open`), so a FIFO cannot block the loader.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Literal

from daharness.core.errors import UserError

Kind = Literal["file", "folder"]
# The built-in suites are files of this package, shipped and installed together: each may name the
# package's other files (the interactive suite reads the closed-form suite's tables), never beyond it.
PACKAGE = Path(__file__).resolve().parents[1]
_SPECIAL = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class Refused(UserError):
    """A path named by suite data that the harness will not read; the message is the one-line reason.
    `missing`: nothing at all is there (an optional file may be absent); `wrong_kind`: a regular file
    where a folder is wanted, or the other way round (a listing may pass over it)."""

    def __init__(self, message: str, *, missing: bool = False, wrong_kind: bool = False) -> None:
        super().__init__(message)
        self.missing, self.wrong_kind = missing, wrong_kind


@dataclass(frozen=True)
class SuiteFolder:
    """A suite's own folder (links resolved), where the names its data gives start, and `bound`, the
    only place they may lead to: the folder itself, or the package for a built-in suite."""

    root: Path
    bound: Path
    label: str = "suite folder"  # how reasons name it ("tables folder" for `generate --tables`)

    @classmethod
    def at(cls, location: Path, *, label: str = "suite folder") -> SuiteFolder:
        """The folder the user named (itself possibly a link: that is the user's choice, not the suite's)."""
        try:
            root = location.resolve(strict=True)
        except (OSError, RuntimeError):
            raise UserError(f"{location}: folder not found") from None
        if not root.is_dir():
            raise UserError(f"{location}: not a folder")
        return cls(root, PACKAGE if root.is_relative_to(PACKAGE) else root, label)

    # ---- single paths ------------------------------------------------------------------------------

    def file(self, name: str | PurePath, *, within: Path | None = None, what: str = "file") -> Path:
        """The real path of the regular file `name` (relative to `within`, a folder inside the suite,
        else to the suite's folder); Refused otherwise."""
        return self._resolved(name, within, _label(what, name), "file")

    def folder(self, name: str | PurePath, *, within: Path | None = None, what: str = "folder") -> Path:
        """The real path of the folder `name`; Refused otherwise."""
        return self._resolved(name, within, _label(what, name), "folder")

    def optional_file(
        self, name: str | PurePath, *, within: Path | None = None, what: str = "file"
    ) -> Path | None:
        """As `file`, but None when nothing at all is there (a broken link is not nothing: refused)."""
        return self._unless_missing(self.file, name, within, what)

    def optional_folder(
        self, name: str | PurePath, *, within: Path | None = None, what: str = "folder"
    ) -> Path | None:
        """As `folder`, but None when nothing at all is there."""
        return self._unless_missing(self.folder, name, within, what)

    @staticmethod
    def _unless_missing(
        find: Callable[..., Path], name: str | PurePath, within: Path | None, what: str
    ) -> Path | None:
        try:
            return find(name, within=within, what=what)
        except Refused as exc:
            if exc.missing:
                return None
            raise

    # ---- listings ----------------------------------------------------------------------------------

    def find(self, pattern: str) -> list[PurePosixPath]:
        """The names (relative to the suite folder, in order) of the entries at any depth whose names
        match the glob `pattern`, found without following links to folders; unchecked: each is read
        through `file`, so that one that is refused refuses only its task."""
        found = []
        for current, folders, names in os.walk(self.root):
            folders.sort()
            relative = PurePosixPath(Path(current).relative_to(self.root).as_posix())
            found += [relative / name for name in names if PurePosixPath(name).match(pattern)]
        return sorted(found)

    def names(self, folder: Path) -> list[str]:
        """The names in `folder` (a folder inside the suite), in order; unchecked (see `find`)."""
        return sorted(entry.name for entry in os.scandir(self._inside_folder(folder)))

    def entries(self, folder: Path, pattern: str = "*", *, what: str = "file") -> list[Path]:
        """The real paths of the entries of `folder` (a folder inside the suite) whose names match the
        glob `pattern`, in name order; each must be a regular file inside the suite."""
        inside = self._inside_folder(folder)
        names = sorted(entry.name for entry in os.scandir(inside) if PurePosixPath(entry.name).match(pattern))
        return [self.file(name, within=inside, what=what) for name in names]

    def tree(self, folder: Path, *, what: str = "file") -> list[tuple[str, Path]]:
        """Every file under `folder` (a folder inside the suite), at any depth, in name order: its path
        relative to `folder` (as it is placed in a workspace) and its real path. Links are followed
        while they stay inside the suite; one that points out, or back into a folder it is in, and
        anything that is neither a file nor a folder refuse the whole tree."""
        found: list[tuple[str, Path]] = []

        def walk(current: Path, relative: PurePosixPath, ancestors: frozenset[Path]) -> None:
            for name in sorted(entry.name for entry in os.scandir(current)):
                shown = (relative / name).as_posix()
                named = f"{what} {shown!r} in {folder.name}/"
                real = self._resolved(name, current, named, None)
                if real.is_dir():
                    if real in ancestors:
                        raise Refused(f"{named} is a link back into a folder it is in")
                    walk(real, relative / name, ancestors | {real})
                else:
                    found.append((shown, real))

        start = self._inside_folder(folder)
        walk(start, PurePosixPath(), frozenset({start}))
        return found

    # ---- the check ---------------------------------------------------------------------------------

    def _inside_folder(self, folder: Path) -> Path:
        real = Path(os.path.realpath(folder))
        if not real.is_relative_to(self.bound) or not real.is_dir():
            raise Refused(f"{folder}: not a folder inside the {self.label} {self.bound}")
        return real

    def _resolved(self, name: str | PurePath, within: Path | None, shown: str, kind: Kind | None) -> Path:
        """The check itself; `shown` names the path in the reason ("setup file 'a.csv'")."""
        text = str(name)
        if not text or "\0" in text:
            raise Refused(f"{shown}: not a file name", missing=not text)
        if PurePosixPath(text).is_absolute() or PurePath(text).is_absolute():
            raise Refused(f"{shown} is an absolute path; a suite names files inside its own folder")
        base = self._inside_folder(within) if within is not None else self.root
        named = base / text
        real = Path(os.path.realpath(named))
        if not real.is_relative_to(self.bound):
            if Path(os.path.normpath(named)).is_relative_to(self.bound):  # the words stay inside: a link
                raise Refused(
                    f"{shown} is a link to {_printable(real)}, outside the {self.label} {self.bound}"
                )
            raise Refused(f"{shown} leads outside the {self.label} {self.bound}")
        try:
            mode = os.stat(real).st_mode
        except FileNotFoundError:
            if os.path.lexists(named) or os.path.lexists(real):
                raise Refused(f"{shown} is a broken link") from None
            raise Refused(f"{shown} is not in the {self.label}", missing=True) from None
        except OSError as exc:
            raise Refused(f"{shown} cannot be read ({exc.strerror})") from None
        if stat.S_IFMT(mode) in _SPECIAL:
            raise Refused(f"{shown} is {_SPECIAL[stat.S_IFMT(mode)]}, not a regular file")
        if kind == "file" and stat.S_ISDIR(mode):
            raise Refused(f"{shown} is a folder, not a file", wrong_kind=True)
        if kind == "folder" and not stat.S_ISDIR(mode):
            raise Refused(f"{shown} is a file, not a folder", wrong_kind=True)
        return real


def _label(what: str, name: str | PurePath) -> str:
    return f"{what} {str(name)!r}"


def _printable(path: Path) -> str:
    """A path for a one-line reason: a link's target may hold a line break or other control character."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in str(path))
