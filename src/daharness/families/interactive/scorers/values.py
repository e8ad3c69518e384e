"""Comparing one intent's result of the agent's code with the reference's (Tapilot-Crossing, Appendix H).

Both results arrive as tagged JSON written by ``daharness/families/interactive/probe.py`` (its docstring
describes the tags). The rules, by mode:

* ``corrected`` (default):

  - dataframes and series (H.1): an index that is one unnamed level of integers is a row position and is
    dropped; any other index becomes columns, so a groupby result matches the same data with its keys
    as a column. A series is a table of its index and values, so a one-column dataframe may answer a
    series request. Row counts must be equal; column names are ignored: each reference column must be
    matched, one to one, by an agent column of equal values (the same-named column is tried first),
    numbers with ``numpy.isclose`` (relative ``tolerance``, absolute 1e-8, NaN equal to NaN), anything
    else as trimmed text. Extra agent columns are allowed, as the paper's comparison allows them. With
    ``ignore_row_order`` the rows are compared as a multiset.
  - scalars and containers (H.6): numbers with the same tolerance, text trimmed, ``None`` equal to NaN;
    a list may answer a tuple request and the reverse; sets and dicts without regard to order.
  - models: the same class, and the intent's probe expression (e.g. predictions) equal as above.

* ``official``: what the released evaluation scripts do, whose defects the corrected mode fixes: a
  dataframe's index must be exactly equal (a reset index fails), column data is compared with
  ``numpy.allclose`` defaults after searching a matching column by values; scalars and containers must be
  exactly equal (pickle equality: ``0.1 + 0.2`` is not ``0.3``, a tuple is not a list, ``True`` is
  ``1``); the kind of
  result must be the one asked (a series is not a dataframe); a model is judged by its probe only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from daharness.core.scoring import GoldProblem

Mode = str  # "corrected" | "official"
ABSOLUTE_TOLERANCE = 1e-8
_MISSING = "<NA>"


@dataclass(frozen=True)
class Verdict:
    right: bool
    reason: str


# ---- tables ------------------------------------------------------------------------------------------


@dataclass
class Table:
    """A dataframe or series as named columns of plain values, with its index kept apart."""

    columns: list[str]
    data: list[list[Any]]
    index_names: list[str | None]
    index_levels: list[list[Any]]
    index_dtypes: list[str]

    @property
    def rows(self) -> int:
        if self.data:
            return len(self.data[0])
        return len(self.index_levels[0]) if self.index_levels else 0

    def positional_index(self) -> bool:
        """One unnamed level of integers: a row number, not data."""
        return (
            len(self.index_levels) == 1
            and self.index_names[0] is None
            and self.index_dtypes[0].startswith(("int", "uint"))
        )

    def with_index_as_columns(self) -> Table:
        if self.positional_index():
            return Table(self.columns, self.data, [], [], [])
        names = [
            name or ("index" if len(self.index_levels) == 1 else f"level_{i}")
            for i, name in enumerate(self.index_names)
        ]
        return Table([*names, *self.columns], [*self.index_levels, *self.data], [], [], [])


def table_of(encoded: Any) -> Table | None:
    """The table a tagged dataframe or series stands for; None for any other value."""
    if not isinstance(encoded, dict):
        return None
    if "dataframe" in encoded:
        frame = encoded["dataframe"]
        index = frame["index"]
        return Table(
            list(frame["columns"]),
            [list(c) for c in frame["data"]],
            index["names"],
            index["levels"],
            index["dtypes"],
        )
    if "series" in encoded:
        series = encoded["series"]
        index = series["index"]
        name = series["name"] if series["name"] is not None else "values"
        return Table([name], [list(series["values"])], index["names"], index["levels"], index["dtypes"])
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def canonical(value: Any) -> str:
    """Text that stands for a plain value in comparisons of non-numeric data and in sorting."""
    if _is_missing(value):
        return _MISSING
    if isinstance(value, bool):
        return str(value)
    if _is_number(value):
        number = float(value)
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return str(int(number)) if number.is_integer() and abs(number) < 1e15 else f"{number:.10g}"
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict) and set(value) == {"time"}:
        return str(value["time"])
    return json.dumps(value, sort_keys=True, default=str)


def _numeric(column: Sequence[Any]) -> bool:
    return all(_is_number(v) or _is_missing(v) for v in column) and any(_is_number(v) for v in column)


def columns_equal(expected: Sequence[Any], actual: Sequence[Any], tolerance: float, mode: Mode) -> bool:
    import numpy as np

    if len(expected) != len(actual):
        return False
    if _numeric(expected) and _numeric(actual):
        a = np.array([np.nan if _is_missing(v) else float(v) for v in expected])
        b = np.array([np.nan if _is_missing(v) else float(v) for v in actual])
        if mode == "official":
            return bool(np.allclose(a, b, equal_nan=True))
        return bool(np.isclose(a, b, rtol=tolerance, atol=ABSOLUTE_TOLERANCE, equal_nan=True).all())
    return [canonical(v) for v in expected] == [canonical(v) for v in actual]


def _sort_key(value: Any) -> tuple[int, Any]:
    if _is_number(value) and not _is_missing(value):
        return (0, float(f"{float(value):.6g}"))
    return (1, canonical(value))


def _rows(table: Table, columns: list[int]) -> list[tuple[Any, ...]]:
    return sorted(
        zip(*(table.data[c] for c in columns), strict=True), key=lambda row: [_sort_key(v) for v in row]
    )


def _match_columns(
    expected: Table, actual: Table, tolerance: float, mode: Mode, any_order: bool
) -> tuple[list[int] | None, str]:
    """For each expected column, the agent column that holds its values (one to one)."""
    used: set[int] = set()
    chosen: list[int] = []
    for j, name in enumerate(expected.columns):
        wanted = expected.data[j]
        order = sorted(range(len(actual.columns)), key=lambda k: actual.columns[k] != name)
        for k in order:
            if k in used:
                continue
            left, right = wanted, actual.data[k]
            if any_order:
                left, right = sorted(left, key=_sort_key), sorted(right, key=_sort_key)
            if columns_equal(left, right, tolerance, mode):
                used.add(k)
                chosen.append(k)
                break
        else:
            return None, f"no column of the agent's table holds the values of {name!r}"
    return chosen, ""


def compare_tables(
    expected: Table, actual: Table, *, tolerance: float, mode: Mode, ignore_row_order: bool
) -> Verdict:
    if mode == "official":
        if [[canonical(v) for v in level] for level in expected.index_levels] != [
            [canonical(v) for v in level] for level in actual.index_levels
        ]:
            return Verdict(False, "the index differs")
        expected = Table(expected.columns, expected.data, [], [], [])
        actual = Table(actual.columns, actual.data, [], [], [])
    else:
        expected, actual = expected.with_index_as_columns(), actual.with_index_as_columns()
    if expected.rows != actual.rows:
        return Verdict(False, f"{actual.rows} rows, expected {expected.rows}")
    chosen, reason = _match_columns(expected, actual, tolerance, mode, ignore_row_order)
    if chosen is None:
        return Verdict(False, reason)
    if ignore_row_order and len(chosen) > 1:
        wanted = _rows(expected, list(range(len(expected.columns))))
        found = _rows(actual, chosen)
        for j in range(len(chosen)):
            if not columns_equal([row[j] for row in wanted], [row[j] for row in found], tolerance, mode):
                return Verdict(False, f"the rows differ (column {expected.columns[j]!r}, in any order)")
    extra = len(actual.columns) - len(chosen)
    return Verdict(True, "equal" + (f" ({extra} extra column{'s' * (extra != 1)} ignored)" if extra else ""))


# ---- scalars and containers --------------------------------------------------------------------------


_SEQUENCES = ("list", "tuple")
_ORDERED = ("list", "tuple", "array")


def _tag(value: Any) -> str | None:
    if isinstance(value, dict) and len(value) >= 1:
        for tag in ("list", "tuple", "set", "dict", "array", "dataframe", "series", "time", "object"):
            if tag in value:
                return tag
    return None


def values_equal(expected: Any, actual: Any, *, tolerance: float, mode: Mode) -> bool:
    """Tagged values equal under the mode's rule (recursively)."""
    import numpy as np

    exact = mode == "official"
    if _is_missing(expected) or _is_missing(actual):
        if exact:  # pickled values compared with ==: NaN is never equal to NaN
            return expected is None and actual is None
        return _is_missing(expected) and _is_missing(actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        if exact:  # pickled values compared with ==: True == 1
            return (_is_number(expected) or isinstance(expected, bool)) and expected == actual
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if _is_number(expected) or _is_number(actual):
        if not (_is_number(expected) and _is_number(actual)):
            return False
        if exact:
            return float(expected) == float(actual)
        return bool(np.isclose(float(expected), float(actual), rtol=tolerance, atol=ABSOLUTE_TOLERANCE))
    if isinstance(expected, str) or isinstance(actual, str):
        if not (isinstance(expected, str) and isinstance(actual, str)):
            return False
        return expected == actual if exact else expected.strip() == actual.strip()
    tag, other = _tag(expected), _tag(actual)
    if tag in ("dataframe", "series") or other in ("dataframe", "series"):
        left, right = table_of(expected), table_of(actual)
        if left is None or right is None or (exact and tag != other):
            return False
        return compare_tables(left, right, tolerance=tolerance, mode=mode, ignore_row_order=False).right
    if tag != other and not (not exact and tag in _ORDERED and other in _ORDERED):
        return False
    if tag in _ORDERED:
        left, right = expected[tag], actual[other]  # type: ignore[index]
        if tag == "array" and other == "array" and expected.get("shape") != actual.get("shape"):
            return False
        return len(left) == len(right) and all(
            values_equal(a, b, tolerance=tolerance, mode=mode) for a, b in zip(left, right, strict=True)
        )
    if tag == "set":
        return _pairs_up(expected["set"], actual["set"], tolerance, mode)
    if tag == "dict":
        left = {
            canonical(k) if not isinstance(k, dict) else json.dumps(k, sort_keys=True): v
            for k, v in expected["dict"]
        }
        right = {
            canonical(k) if not isinstance(k, dict) else json.dumps(k, sort_keys=True): v
            for k, v in actual["dict"]
        }
        return left.keys() == right.keys() and all(
            values_equal(left[k], right[k], tolerance=tolerance, mode=mode) for k in left
        )
    if tag == "time":
        return str(expected["time"]) == str(actual["time"])
    return json.dumps(expected, sort_keys=True) == json.dumps(actual, sort_keys=True)


def _pairs_up(expected: list[Any], actual: list[Any], tolerance: float, mode: Mode) -> bool:
    if len(expected) != len(actual):
        return False
    left = list(actual)
    for item in expected:
        for i, candidate in enumerate(left):
            if values_equal(item, candidate, tolerance=tolerance, mode=mode):
                del left[i]
                break
        else:
            return False
    return True


# ---- one intent --------------------------------------------------------------------------------------

_KIND_OF_TYPE = {
    "dataframe": ("dataframe",),
    "series": ("series",),
    "list": ("list",),
    "tuple": ("tuple",),
    "dict": ("dict",),
}


def describe(value: Any) -> str:
    """A short description of a tagged value, for explanations."""
    tag = _tag(value)
    if tag == "dataframe":
        frame = value["dataframe"]
        return f"a dataframe of {len(frame['data'][0]) if frame['data'] else 0} rows x {len(frame['columns'])} columns"
    if tag == "series":
        return f"a series of {len(value['series']['values'])} values"
    if tag is not None:
        return f"a {tag}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def compare_value(
    result_type: str,
    expected: Any,
    actual: Any,
    *,
    tolerance: float,
    mode: Mode,
    ignore_row_order: bool = False,
) -> Verdict:
    """Compare one non-plot intent's values (tagged JSON) by its result type."""
    if result_type in ("dataframe", "series"):
        wanted = table_of(expected)
        if wanted is None:
            raise GoldProblem(f"the reference's result is {describe(expected)}, not a {result_type}")
        if mode == "official" and _tag(actual) != result_type:
            return Verdict(False, f"got {describe(actual)}, not a {result_type}")
        found = table_of(actual)
        if found is None:
            return Verdict(False, f"got {describe(actual)}, not a table")
        return compare_tables(
            wanted, found, tolerance=tolerance, mode=mode, ignore_row_order=ignore_row_order
        )
    if mode == "official" and result_type in _KIND_OF_TYPE and _tag(actual) not in _KIND_OF_TYPE[result_type]:
        return Verdict(False, f"got {describe(actual)}, not a {result_type}")
    if values_equal(expected, actual, tolerance=tolerance, mode=mode):
        return Verdict(True, "equal")
    return Verdict(False, f"got {describe(actual)}, expected {describe(expected)}")
