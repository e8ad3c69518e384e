"""`validate`'s mutations of what an instruction may fix: case, whitespace, order and precision.

For an output file (or the final answer) scored by a `table`, `database` or `text` scorer, each mutation
changes one thing:

* case changed: text values swap their case (`rain` -> `RAIN`);
* whitespace padded: a space before and after every text value;
* order changed: rows (tables) or lists (JSON) reversed;
* rounded: numbers rounded to the finest number of decimals that moves one of them by more than the
  scorer's tolerance (what the instruction allows), e.g. 4 decimals where it says "not rounded".

The scorer's options state what the instruction fixes (`case_sensitive`, `whitespace_sensitive`,
`ignore_order`, `tolerance`). A change they forbid must score lower than the reference; a change they
allow must keep the reference's score, since corrected mode checks exactly what the instruction
requires (rounding beyond the tolerance is never allowed). A mutation that changes nothing (no text,
one row, only integers) is left out.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daharness.core.task import ScorerSpec
from daharness.scoring.plain_number import PLAIN_NUMBER

if TYPE_CHECKING:  # imported where used, so that loading the family is cheap
    import pandas as pd

_DEFAULT_TOLERANCE = 1e-2
Change = Callable[[Any], Any]  # one value -> its changed version (the same value when it does not apply)


@dataclass(frozen=True)
class InstructionMutation:
    label: str
    change_file: Callable[[Path], bool]  # changes the file in place; False when nothing changed
    change_value: Callable[[Any], Any]  # the same change on a parsed JSON answer
    forbidden: bool


def instruction_mutations(spec: ScorerSpec) -> list[InstructionMutation]:
    """The four mutations for one scorer, each saying whether the scorer's options forbid it."""
    if spec.name not in ("table", "database", "text"):
        return []
    options = spec.options
    order_free = options.get("ignore_order")
    if order_free is None:
        order_free = spec.name == "database"  # a database's tables have no row order
    tolerance = float(options.get("tolerance") or _DEFAULT_TOLERANCE)
    changes: list[tuple[str, Change, bool]] = [
        ("case changed in", _text(str.swapcase), bool(options.get("case_sensitive"))),
        ("whitespace padded in", _text(lambda text: f" {text} "), bool(options.get("whitespace_sensitive"))),
    ]
    mutations = [
        InstructionMutation(label, _file_change(change), _json_change(change), forbidden)
        for label, change, forbidden in changes
    ]
    mutations.append(InstructionMutation("order changed in", _reverse_file, _reverse_lists, not order_free))
    mutations.append(
        InstructionMutation(
            "rounded where it must not be in",
            lambda path: _round_file(path, tolerance),
            lambda value: _round_json(value, tolerance),
            True,
        )
    )
    return mutations


# ---- value changes ------------------------------------------------------------------------------------


def _text(change: Callable[[str], str]) -> Change:
    """`change` applied to text values only (not numbers written as text, not empty cells)."""

    def apply(value: Any) -> Any:
        if isinstance(value, str) and value.strip() and not PLAIN_NUMBER.fullmatch(value.strip()):
            return change(value)
        return value

    return apply


def _json_change(change: Change) -> Callable[[Any], Any]:
    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return change(value)

    return walk


def _reverse_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reverse_lists(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_reverse_lists(item) for item in reversed(value)]
    return value


def _digits(tolerance: float) -> int:
    """The most decimals whose rounding can move a number by more than `tolerance`."""
    return max(0, math.ceil(math.log10(1 / (2 * tolerance))) - 1) if tolerance > 0 else 15


def _rounding(numbers: list[float], tolerance: float) -> int | None:
    """The finest rounding that moves one of `numbers` by more than `tolerance` (None: none does)."""
    for digits in range(_digits(tolerance), -1, -1):
        if any(abs(round(x, digits) - x) > tolerance for x in numbers if math.isfinite(x)):
            return digits
    return None


def _floats(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [x for item in value.values() for x in _floats(item)]
    if isinstance(value, list):
        return [x for item in value for x in _floats(item)]
    return [value] if isinstance(value, float) else []


def _round_json(value: Any, tolerance: float) -> Any:
    digits = _rounding(_floats(value), tolerance)
    if digits is None:
        return value
    return _json_change(lambda x: round(x, digits) if isinstance(x, float) else x)(value)


# ---- files ---------------------------------------------------------------------------------------------


def _file_change(change: Change) -> Callable[[Path], bool]:
    def apply(path: Path) -> bool:
        kind = path.suffix.lower()
        if kind == ".csv":
            frame = _read_text_csv(path)
            changed = frame.map(change)
            return _write_if_changed(path, frame, changed)
        if kind == ".json":
            return _rewrite_json(path, _json_change(change))
        if kind in (".db", ".sqlite", ".sqlite3"):
            return _rewrite_sqlite(path, lambda rows: [tuple(change(v) for v in row) for row in rows])
        return False

    return apply


def _reverse_file(path: Path) -> bool:
    kind = path.suffix.lower()
    if kind == ".csv":
        frame = _read_text_csv(path)
        return _write_if_changed(path, frame, frame.iloc[::-1])
    if kind == ".json":
        return _rewrite_json(path, _reverse_lists)
    if kind in (".db", ".sqlite", ".sqlite3"):
        return _rewrite_sqlite(path, lambda rows: rows[::-1])
    return False


def _round_file(path: Path, tolerance: float) -> bool:
    kind = path.suffix.lower()
    if kind == ".csv":
        frame = _read_text_csv(path)
        numbers = [
            float(v) for v in frame.to_numpy().ravel() if PLAIN_NUMBER.fullmatch(v.strip()) and "." in v
        ]
        digits = _rounding(numbers, tolerance)
        if digits is None:
            return False
        rounded = frame.map(
            lambda v: repr(round(float(v), digits)) if PLAIN_NUMBER.fullmatch(v.strip()) and "." in v else v
        )
        return _write_if_changed(path, frame, rounded)
    if kind == ".json":
        return _rewrite_json(path, lambda value: _round_json(value, tolerance))
    if kind in (".db", ".sqlite", ".sqlite3"):
        return _round_sqlite(path, tolerance)
    return False


def _read_text_csv(path: Path) -> pd.DataFrame:
    """The CSV's cells as written (no type inference, empty cells stay empty)."""
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _write_if_changed(path: Path, before: pd.DataFrame, after: pd.DataFrame) -> bool:
    if before.reset_index(drop=True).equals(after.reset_index(drop=True)):
        return False
    after.to_csv(path, index=False)
    return True


def _rewrite_json(path: Path, change: Callable[[Any], Any]) -> bool:
    value = json.loads(path.read_text(encoding="utf-8"))
    changed = change(value)
    if changed == value:
        return False
    path.write_text(json.dumps(changed), encoding="utf-8")
    return True


def _rewrite_sqlite(path: Path, change: Callable[[list[tuple[Any, ...]]], list[tuple[Any, ...]]]) -> bool:
    """Replace every user table's rows by `change(rows)`; the schema stays as it is."""
    connection = sqlite3.connect(path)
    try:
        changed = False
        for table in _tables(connection):
            rows = connection.execute(f'select * from "{table}"').fetchall()
            new = change(rows)
            if new != rows:
                changed = True
                connection.execute(f'delete from "{table}"')
                if new:
                    marks = ", ".join("?" * len(new[0]))
                    connection.executemany(f'insert into "{table}" values ({marks})', new)
        connection.commit()
        return changed
    finally:
        connection.close()


def _round_sqlite(path: Path, tolerance: float) -> bool:
    connection = sqlite3.connect(path)
    try:
        numbers = [
            value
            for table in _tables(connection)
            for row in connection.execute(f'select * from "{table}"')
            for value in row
            if isinstance(value, float)
        ]
    finally:
        connection.close()
    digits = _rounding(numbers, tolerance)
    if digits is None:
        return False
    return _rewrite_sqlite(
        path,
        lambda rows: [tuple(round(v, digits) if isinstance(v, float) else v for v in row) for row in rows],
    )


def _tables(connection: sqlite3.Connection) -> list[str]:
    query = "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'"
    return [row[0] for row in connection.execute(query)]
