"""compat table matching: how DA-Code's official ``compare_csv`` decides that a gold column was found.

The rule of ``csv_score`` in ``da_agent/evaluators/metrics/table.py`` (yiyihum/da-code b211daf), here on
columns already read; ``table.py`` reads the files, resolves the options and scores. A gold column is found
when some predicted column matches it by either of two tests, tried in this order:

1. **Hashed match.** Each column becomes a tuple of tokens: a missing value (``pandas.isna``) one token of
   its own, a Python ``float`` rounded to a multiple of the tolerance (``round(x / tol) * tol``: Python's
   ``round``, which sends halves to the even neighbour), a string lower-cased and stripped, anything else
   (``int``, ``bool``) as it is. With ``ignore_order`` the tokens are sorted by ``(missing, str(token))``.
   Equal tuples match (``==`` on their items, so ``5 == 5.0`` and ``True == 1``). Two numbers in the same
   0.01 bucket match even when ``isclose`` says no (0.015 and 0.025 as pandas parses them: both round to
   0.02), and with ``ignore_order`` text is sorted after lower-casing, so ``["b", "A"]`` finds
   ``["a", "B"]``.
2. **Cell by cell**, tried only when no tuple is equal: equal lengths, then with ``ignore_order`` each column
   sorted on its own by ``(not missing, str(value), is a number)`` (case-sensitively, numbers as text),
   then cell pairs compared: both missing; both numbers and ``math.isclose(a, b, abs_tol=tol)``; both
   strings equal after ``lower().strip()``; else ``a == b``.

The cells are those of ``frame.transpose().values.tolist()``, as officially: a table whose columns are all
numbers, some of them floats, hands its integers over as floats (rounded like any float by the hash).

``round`` of an infinite float raises ``OverflowError``: every predicted column is hashed before any gold
column is looked at, so one infinite number anywhere in the prediction (or in a gold column that is looked
at) makes the official evaluator fail and score the task 0 (``OfficialFailure`` here). Under ``all`` the
official loop stops at the first gold column not found; the columns after it are still compared here, for
the report, but an infinite number in them fails nothing, as officially.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

_MISSING = "__NA__"  # the official token of a missing value; no lower-cased string can equal it


class OfficialFailure(Exception):
    """The official code raises on this input: its evaluator's catch-all scores the task 0."""


def official_cells(frame: pd.DataFrame) -> list[list[Any]]:
    """The columns as the official code sees them: Python values of the transposed frame."""
    return frame.transpose().values.tolist()


def _tokens(column: Sequence[Any], tolerance: float, ignore_order: bool) -> tuple[Any, ...]:
    """The hashed form of a column; raises OverflowError where the official ``round`` does."""
    import pandas as pd

    tokens: list[Any] = []
    for value in column:
        if pd.isna(value):
            tokens.append(_MISSING)
        elif isinstance(value, float):
            tokens.append(round(value / tolerance) * tolerance)
        elif isinstance(value, str):
            tokens.append(value.lower().strip())
        else:
            tokens.append(value)
    if ignore_order:
        tokens.sort(key=lambda token: (isinstance(token, str) and token == _MISSING, str(token)))
    return tuple(tokens)


def _sort_key(value: Any) -> tuple[int, str, bool]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (0, "", False)
    return (1, str(value), isinstance(value, int | float))


def _cells_matcher(tolerance: float) -> Callable[[Any, Any], bool]:
    import pandas as pd

    def cells_match(a: Any, b: Any) -> bool:
        if pd.isna(a) and pd.isna(b):
            return True
        if isinstance(a, int | float) and isinstance(b, int | float):
            return math.isclose(float(a), float(b), abs_tol=tolerance)
        if isinstance(a, str) and isinstance(b, str):
            return a.lower().strip() == b.lower().strip()
        return bool(a == b)

    return cells_match


def _cells_agree(gold: list[Any], predicted: list[Any], tolerance: float, ignore_order: bool) -> bool:
    if len(gold) != len(predicted):
        return False
    if ignore_order:  # each column sorted on its own: the pairing of a row's cells is lost
        gold, predicted = sorted(gold, key=_sort_key), sorted(predicted, key=_sort_key)
    cells_match = _cells_matcher(tolerance)
    return all(cells_match(a, b) for a, b in zip(gold, predicted, strict=True))


def official_found(
    gold: dict[int, list[Any]],
    predicted: list[list[Any]],
    required: list[int],
    *,
    tolerance: float,
    ignore_order: bool,
    stop_at_first_miss: bool,
    check: Callable[[], None],
) -> list[tuple[int, int]]:
    """The (gold position, predicted position) pairs found, in the order of `required`.

    `check` is called between steps (the deadline); raises OfficialFailure where the official code raises.
    """
    hashed: dict[tuple[Any, ...], int] = {}
    for position, column in enumerate(predicted):
        check()
        try:
            hashed.setdefault(_tokens(column, tolerance, ignore_order), position)
        except OverflowError as exc:
            raise OfficialFailure(
                f"predicted column {position + 1} holds an infinite number; the official hashed match "
                f"fails on it (OverflowError: {exc})"
            ) from exc
    found: list[tuple[int, int]] = []
    reached = True  # whether the official loop still looks at gold columns
    for g in required:
        check()
        try:
            match = hashed.get(_tokens(gold[g], tolerance, ignore_order))
        except OverflowError as exc:
            if reached:
                raise OfficialFailure(
                    f"gold column {g + 1} holds an infinite number; the official hashed match fails on "
                    f"it (OverflowError: {exc})"
                ) from exc
            match = None
        if match is None:
            for position, column in enumerate(predicted):
                check()
                if _cells_agree(gold[g], column, tolerance, ignore_order):
                    match = position
                    break
        if match is None:
            reached = reached and not stop_at_first_miss
        else:
            found.append((g, match))
    return found
