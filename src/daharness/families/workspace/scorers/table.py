"""DA-Code table scoring: an agent's CSV (or data frame) against one or more gold tables.

The rule (DA-Code paper §3.4, "table match score"): every required gold column must equal some predicted
column. Column names and column order are ignored and extra predicted columns are allowed; numbers match
within an absolute tolerance, missing values (NaN) match each other. ``condition_cols`` picks the gold
columns that are required (all of them by default), ``ignore_order`` compares regardless of row order,
``score_rule`` is ``all`` (1 only if every required column is found) or ``divide`` (fraction found), and
with several gold candidates the best one counts. In both modes one predicted column may match several
identical gold columns, as officially.

Two modes:

* ``compat`` reproduces the official evaluator (``da_agent/evaluators/metrics/table.py``, ``compare_csv``,
  run under ``da_agent/evaluators/evaluation.py``) so that per-task scores equal the official ones:

  - CSVs are read with ``pandas.read_csv(low_memory=False, nrows=10000)``: first line is the header,
    pandas infers each column's type and turns ``""``, ``NA``, ``null``, ``NaN`` ... into NaN, and only
    the first 10,000 rows of either file are compared. A missing predicted file scores 0; an unreadable
    one raises inside the evaluator, whose catch-all scores the task 0; an empty one (no rows) scores 0.
    A gold file pandas finds empty or cannot parse counts 0 and the next gold candidate is tried.
  - A gold column is found by a hashed match first, then cell by cell (``table_compat.py`` gives both):
    the hash rounds floats to a multiple of 0.01 and lower-cases text, so values in the same 0.01 bucket
    match although ``isclose`` says no (0.015 and 0.025), and an infinite number anywhere in the
    prediction makes the official code raise (score 0). Cell by cell, two cells match if both are NaN,
    or both are Python numbers (``bool`` counts as one) and ``math.isclose(a, b, abs_tol=0.01)`` holds,
    or both are strings equal after ``lower().strip()``, or else ``a == b``. A number never equals a
    string: ``"5"`` in a text column is not ``5``.
  - The tolerance is hard-coded to 0.01 (plus ``isclose``'s relative 1e-9); it is the default here.
    (Older official revisions used 1e-3 and compared strings exactly; compat follows DA-Code's HEAD.)
  - ``score_rule`` defaults to ``divide`` (the current official default; an earlier revision used
    ``all``, as does the paper's 0/1 rule). ``condition_cols`` are positions, ``[]`` means every column
    (names are accepted here too, in both modes, though the official code would fail on them).
  - The official ``total_scores`` option (a multiplier of the score, 1 by default) is not offered.
  - Any other error on the gold side (a missing or undecodable gold file, ``condition_cols`` out of range)
    scores 0, also when another gold candidate would have matched: the official exception ends the task.
  - **Defect 1, ignore_order.** Each column is sorted on its own (the hash sorts its tokens as text; the
    cell rule sorts by ``str(value)``, numbers as text and case-sensitively) before the comparison. Row
    pairing is lost: a table whose rows are scrambled across columns, e.g. every name given the wrong
    value, still scores 1.
  - **Defect 2, timeout.** The evaluator runs each task's metrics under a 10 s ``signal.alarm`` and scores
    0 when it fires, so a correct answer on a large table can score 0, depending on the machine. compat
    applies ``timeout_s=10`` to each call by default (the official budget is shared by all metrics of a
    task, and its check is a signal; ours is checked between steps, so it also works in a worker thread).

* ``corrected`` (default) keeps the rule and fixes what is unfair:

  - ignore_order keeps row pairing: a gold column is found only if the rows of all found columns, taken
    together, are the same multiset of rows in both tables. Rows are sorted jointly, exact-valued columns
    first and numbers bucketed at the tolerance so that near-equal values do not break ties, then compared
    pair by pair. Found columns are grown greedily in gold order, so for ``divide`` a column that is
    consistent with the earlier found ones counts. (Near-ties straddling a bucket edge in several columns
    at once can in rare cases pair rows differently.)
  - No timeout unless ``timeout_s`` is given.
  - Tolerance 1e-2, absolute only: ``|a - b| <= 0.01`` on the values as read, never a shared rounding
    bucket (the official buckets pass 0.015/0.025 and fail 0.025/0.035, both pairs 0.01 apart, by where
    the bucket edges fall), and no number makes the comparison fail. Strings compare after trimming and
    case-folding (unless the task's
    ``case_sensitive`` / ``whitespace_sensitive`` say its instruction fixes them, see ``exactness.py``),
    a blank string counts as missing (a CSV cannot tell them apart), and a number written as text
    (``"5"``, ``"5.0"``) compares as the number.
  - ``score_rule`` defaults to ``all``, the paper's rule.
  - Errors on the gold side raise ``ValueError``: they are benchmark defects, never a wrong answer.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import Field

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import GoldProblem, ScoringContext
from daharness.families.workspace.modes import WORKSPACE_MODES
from daharness.families.workspace.scorers.table_compat import OfficialFailure, official_cells, official_found
from daharness.scoring.exactness import TextRules, text_key
from daharness.scoring.outputs import OutputFileOptions, nothing_collected
from daharness.scoring.plain_number import PLAIN_NUMBER

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np
    import pandas as pd

    _Column = np.ndarray | list[Any]

Mode = Literal["corrected", "compat"]
ScoreRule = Literal["all", "divide"]
MODES: tuple[Mode, ...] = ("corrected", "compat")
SCORE_RULES: tuple[ScoreRule, ...] = ("all", "divide")

# The official evaluator's settings, used by compat when an option is left unset.
OFFICIAL_TOLERANCE = 1e-2
OFFICIAL_MAX_ROWS = 10_000  # the official reader's nrows
OFFICIAL_TIMEOUT_S = 10.0
OFFICIAL_SCORE_RULE: ScoreRule = "divide"
CORRECTED_TOLERANCE = 1e-2
CORRECTED_SCORE_RULE: ScoreRule = "all"


class ComparisonTimeout(Exception):
    """The comparison ran past its deadline."""


class GoldTableError(GoldProblem, ValueError):
    """The gold side (file, table or options) is unusable: a benchmark defect, not the agent's fault."""


class Deadline:
    """A time limit checked between steps (no signals), so it works in any thread."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._end = None if seconds is None else time.monotonic() + seconds

    def check(self) -> None:
        if self._end is not None and time.monotonic() > self._end:
            raise ComparisonTimeout(f"comparison exceeded {self.seconds:g} s")


@dataclass(frozen=True)
class TableOptions:
    """The options of one comparison with the mode's defaults filled in."""

    mode: Mode
    condition_cols: tuple[int | str, ...]
    ignore_order: bool
    score_rule: ScoreRule
    tolerance: float
    timeout_s: float | None
    case_sensitive: bool = False  # corrected mode: text compared with its case (see exactness.py)
    whitespace_sensitive: bool = False

    @classmethod
    def resolve(
        cls,
        mode: Mode,
        *,
        condition_cols: Sequence[int | str] | None,
        ignore_order: bool,
        score_rule: ScoreRule | None,
        tolerance: float | None,
        timeout_s: float | None,
        case_sensitive: bool = False,
        whitespace_sensitive: bool = False,
    ) -> TableOptions:
        if mode not in MODES:
            raise ValueError(f"unknown table mode {mode!r}; choose one of {', '.join(MODES)}")
        compat = mode == "compat"
        if score_rule is None:
            score_rule = OFFICIAL_SCORE_RULE if compat else CORRECTED_SCORE_RULE
        if score_rule not in SCORE_RULES:
            raise ValueError(f"unknown score_rule {score_rule!r}; choose one of {', '.join(SCORE_RULES)}")
        if tolerance is None:
            tolerance = OFFICIAL_TOLERANCE if compat else CORRECTED_TOLERANCE
        if not tolerance >= 0:
            raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
        if timeout_s is None and compat:
            timeout_s = OFFICIAL_TIMEOUT_S
        elif timeout_s == math.inf:
            timeout_s = None
        elif timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 (or math.inf for no limit), got {timeout_s!r}")
        if isinstance(condition_cols, str | int):  # a lone column is a common slip
            condition_cols = [condition_cols]
        return cls(
            mode, tuple(condition_cols or ()), bool(ignore_order), score_rule, tolerance, timeout_s,
            case_sensitive, whitespace_sensitive,
        )  # fmt: skip

    def summary(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "score_rule": self.score_rule,
            "ignore_order": self.ignore_order,
            "tolerance": self.tolerance,
            "timeout_s": self.timeout_s,
            "condition_cols": list(self.condition_cols) or None,
            "case_sensitive": self.case_sensitive,
            "whitespace_sensitive": self.whitespace_sensitive,
        }


# ---- reading ----------------------------------------------------------------------------------------


def read_csv(source: str | Path | IO[str], *, compat: bool = False) -> pd.DataFrame:
    """Read a CSV as the mode does: pandas' defaults, no chunking; compat keeps only the first 10,000 rows
    (as the official evaluator does)."""
    import pandas as pd

    return pd.read_csv(source, low_memory=False, nrows=OFFICIAL_MAX_ROWS if compat else None)


# ---- the comparison ---------------------------------------------------------------------------------


@dataclass
class _Result:
    score: float
    found: list[tuple[int, int]]  # (gold position, predicted position)
    missed: list[int]
    required: list[int]


def compare_frames(
    predicted: pd.DataFrame, gold: pd.DataFrame, options: TableOptions, deadline: Deadline
) -> tuple[float, dict[str, Any]]:
    """Compare two loaded tables; raises ComparisonTimeout past the deadline and GoldTableError on bad gold."""
    required = _required_columns(gold, options)
    if options.mode == "compat" and predicted.empty:  # the official compare_csv returns 0 at once
        result = _Result(0.0, [], list(required), required)
    elif options.mode == "compat":
        result = _compare_official(predicted, gold, required, options, deadline)
    else:
        result = _compare_corrected(predicted, gold, required, options, deadline)
    return result.score, _describe(predicted, gold, result)


def compare_tables(
    predicted: pd.DataFrame,
    gold: pd.DataFrame,
    *,
    mode: Mode = "corrected",
    condition_cols: Sequence[int | str] | None = None,
    ignore_order: bool = False,
    score_rule: ScoreRule | None = None,
    tolerance: float | None = None,
    timeout_s: float | None = None,
) -> tuple[float, dict[str, Any]]:
    """Compare a predicted table with one gold table by the rule of the module docstring.

    Args:
        predicted: the agent's table; its column names and order do not matter, extra columns are allowed.
        gold: the reference table.
        mode: ``corrected`` (default) or ``compat`` (the official evaluator, defects included).
        condition_cols: the gold columns that must be found, as positions (negative ones count from the
            end) or names; ``None`` or empty means every gold column. Out of range or unknown: in compat
            the score is 0 (the official evaluator fails), in corrected ``ValueError``.
        ignore_order: compare regardless of row order (compat sorts each column on its own, corrected
            keeps rows together).
        score_rule: ``all`` -> 1.0 only if every required column is found, ``divide`` -> the fraction
            found; ``None`` means the mode's default (compat ``divide``, corrected ``all``).
        tolerance: absolute tolerance for numbers; ``None`` means the mode's default (1e-2 in both).
        timeout_s: give up and score 0 after this many seconds; ``None`` means the mode's default
            (compat 10 s, corrected no limit), ``math.inf`` no limit.

    Returns ``(score, details)``; details list the ``found`` gold columns with the predicted column that
    matched each (``matches``), the ``missed`` ones, row counts, the options used and ``timed_out``.
    """
    options = TableOptions.resolve(
        mode,
        condition_cols=condition_cols,
        ignore_order=ignore_order,
        score_rule=score_rule,
        tolerance=tolerance,
        timeout_s=timeout_s,
    )
    deadline = Deadline(options.timeout_s)
    try:
        score, details = compare_frames(predicted, gold, options, deadline)
    except ComparisonTimeout as exc:
        return 0.0, {**options.summary(), "timed_out": True, "error": str(exc)}
    except (GoldTableError, OfficialFailure) as exc:
        if options.mode != "compat":
            raise
        return 0.0, {**options.summary(), "timed_out": False, "error": str(exc)}
    return score, {**options.summary(), "timed_out": False, **details}


def _required_columns(gold: pd.DataFrame, options: TableOptions) -> list[int]:
    width = gold.shape[1]
    if not options.condition_cols:
        if width == 0 and (options.mode != "compat" or options.score_rule == "divide"):
            # compat "divide" divides by zero here and the official evaluator scores 0
            raise GoldTableError("the gold table has no columns")
        return list(range(width))
    names = [str(name) for name in gold.columns]
    positions: list[int] = []
    for column in options.condition_cols:
        if isinstance(column, numbers.Integral) and not isinstance(column, bool):
            index = int(column)
            if not -width <= index < width:
                raise GoldTableError(f"condition column {index} is out of range ({width} gold columns)")
            positions.append(index % width)
        elif isinstance(column, str):
            positions.append(_column_by_name(names, column))
        else:
            raise GoldTableError(f"condition column {column!r} is neither a position nor a name")
    if options.mode == "compat":
        return positions  # the official iloc keeps duplicates, each counted
    return list(dict.fromkeys(positions))


def _column_by_name(names: list[str], wanted: str) -> int:
    if wanted in names:
        return names.index(wanted)
    folded = [name.strip().casefold() for name in names]
    if wanted.strip().casefold() in folded:
        return folded.index(wanted.strip().casefold())
    raise GoldTableError(f"condition column {wanted!r} is not a gold column (gold columns: {names})")


def _describe(predicted: pd.DataFrame, gold: pd.DataFrame, result: _Result) -> dict[str, Any]:
    gold_names = [str(name) for name in gold.columns]
    predicted_names = [str(name) for name in predicted.columns]
    return {
        "score": result.score,
        "found": [gold_names[g] for g, _ in result.found],
        "missed": [gold_names[g] for g in result.missed],
        "matches": [[gold_names[g], predicted_names[p]] for g, p in result.found],
        "required": len(result.required),
        "rows": {"predicted": len(predicted), "gold": len(gold)},
    }


def _score(found: int, required: int, rule: ScoreRule) -> float:
    if rule == "divide":
        return found / required if required else 0.0
    return 1.0 if found == required else 0.0


# ---- compat: the official rule (table_compat.py) ----------------------------------------------------


def _compare_official(
    predicted: pd.DataFrame,
    gold: pd.DataFrame,
    required: list[int],
    options: TableOptions,
    deadline: Deadline,
) -> _Result:
    if not required:  # the official "all" loop over no columns keeps its initial full score
        return _Result(1.0, [], [], [])
    # The official code transposes the required gold columns together (iloc keeps duplicates).
    gold_columns = dict(zip(required, official_cells(gold.iloc[:, required]), strict=True))
    found = official_found(
        gold_columns,
        official_cells(predicted),
        required,
        tolerance=options.tolerance,
        ignore_order=options.ignore_order,
        stop_at_first_miss=options.score_rule == "all",
        check=deadline.check,
    )
    found_gold = {g for g, _ in found}
    missed = [g for g in required if g not in found_gold]
    return _Result(_score(len(found), len(required), options.score_rule), found, missed, required)


# ---- corrected --------------------------------------------------------------------------------------

# A normalized column is a float array (every cell a number or missing, NaN = missing) or a list whose
# cells are None (missing), float or str and that holds at least one str.


def _cell_reader(rules: TableOptions) -> Callable[[Any], float | str | None]:
    """One cell as the rules compare it; numpy and pandas are imported once per column, not per cell."""
    import numpy as np
    import pandas as pd

    def cell(value: Any) -> float | str | None:
        if value is None or value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, bool | np.bool_):
            return float(value)
        if isinstance(value, numbers.Number):
            try:
                number = float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError, OverflowError):
                number = None
            if number is not None:
                return None if math.isnan(number) else number
        text = value.hex() if isinstance(value, bytes) else str(value)
        if not text.strip():
            return None
        if PLAIN_NUMBER.fullmatch(text.strip()):
            return float(text)
        return text_key(
            text, case_sensitive=rules.case_sensitive, whitespace_sensitive=rules.whitespace_sensitive
        )

    return cell


def _normalize(series: pd.Series, rules: TableOptions) -> _Column:
    import numpy as np
    import pandas as pd

    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_complex_dtype(series.dtype):
        return series.to_numpy(dtype=float, na_value=np.nan)
    cell = _cell_reader(rules)
    cells = [cell(value) for value in series.tolist()]
    if any(isinstance(cell, str) for cell in cells):
        return cells
    return np.array([np.nan if cell is None else cell for cell in cells], dtype=float)


def _close(a: np.ndarray, b: np.ndarray, tolerance: float) -> np.ndarray:
    import numpy as np

    return np.isclose(a, b, rtol=0.0, atol=tolerance, equal_nan=True)


def _missing(cell: Any) -> bool:
    return cell is None or (isinstance(cell, float) and math.isnan(cell))


def _cells_equal(a: Any, b: Any, tolerance: float) -> bool:
    if _missing(a) or _missing(b):
        return _missing(a) and _missing(b)
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a == b or abs(a - b) <= tolerance


def _columns_equal(a: _Column, b: _Column, tolerance: float) -> bool:
    import numpy as np

    if len(a) != len(b):
        return False
    if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
        return len(a) == 0  # a text column cannot equal an all-numeric one
    if isinstance(a, np.ndarray):
        return bool(np.all(_close(a, b, tolerance)))  # type: ignore[arg-type]
    return all(_cells_equal(x, y, tolerance) for x, y in zip(a, b, strict=True))


def _cell_order(cell: Any) -> tuple[int, float, str]:
    if _missing(cell):
        return (0, 0.0, "")
    if isinstance(cell, str):
        return (2, 0.0, cell)
    return (1, cell, "")


def _sorted(column: _Column) -> _Column:
    import numpy as np

    if isinstance(column, np.ndarray):
        nan = np.isnan(column)
        return np.concatenate([column[nan], np.sort(column[~nan])])  # missing first, as _cell_order
    return sorted(column, key=_cell_order)


def _is_exact(column: _Column, tolerance: float) -> bool:
    """Whether values can be sorted as they are: text and whole numbers, which a tolerance does not blur."""
    import numpy as np

    if tolerance >= 0.5:
        return False
    values = column if isinstance(column, np.ndarray) else [c for c in column if isinstance(c, float)]
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    return bool(np.all(finite == np.round(finite)))


def _bucket(values: np.ndarray, tolerance: float, shift: float) -> np.ndarray:
    """Numbers bucketed at the tolerance (missing first), so near-equal values tie and later columns decide."""
    import numpy as np

    if tolerance > 0:
        with np.errstate(invalid="ignore", over="ignore"):
            keys = np.floor(values / tolerance + shift)
    else:
        keys = values.copy()
    keys[np.isnan(values)] = -np.inf
    return keys


def _cell_keys(column: _Column, tolerance: float, shift: float) -> list[tuple[int, Any]]:
    """`_bucket` for a column that holds text: (kind, key) pairs, which sort missing, numbers, text."""
    import numpy as np

    keys: list[tuple[int, Any]] = []
    for cell in column.tolist() if isinstance(column, np.ndarray) else column:
        if _missing(cell):
            keys.append((0, 0))
        elif isinstance(cell, str):
            keys.append((2, cell))
        elif tolerance > 0 and math.isfinite(scaled := cell / tolerance):
            keys.append((1, math.floor(scaled + shift)))
        else:
            keys.append((1, cell))
    return keys


class _RowMatcher:
    """Tells whether the gold rows and the predicted rows, over some paired columns, are the same multiset.

    Both tables are sorted jointly on sort codes (exact columns first), then compared pair by pair. A second
    bucket grid, offset by half a bucket, catches values that sit at a bucket edge in the first one.
    """

    def __init__(self, gold: dict[int, _Column], predicted: list[_Column], tolerance: float) -> None:
        self.gold, self.predicted, self.tolerance = gold, predicted, tolerance
        self._exact: dict[int, bool] = {}
        self._codes: dict[tuple[int, int, float], tuple[np.ndarray, np.ndarray]] = {}

    def exact(self, g: int) -> bool:
        if g not in self._exact:
            self._exact[g] = _is_exact(self.gold[g], self.tolerance)
        return self._exact[g]

    def codes(self, g: int, p: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
        """Sort codes of a gold and a predicted column that order both the same way (cached)."""
        import numpy as np

        key = (g, p, shift)
        if key not in self._codes:
            gold, predicted = self.gold[g], self.predicted[p]
            if isinstance(gold, np.ndarray) and isinstance(predicted, np.ndarray):
                codes = (_bucket(gold, self.tolerance, shift), _bucket(predicted, self.tolerance, shift))
            else:
                gold_keys = _cell_keys(gold, self.tolerance, shift)
                predicted_keys = _cell_keys(predicted, self.tolerance, shift)
                rank = {k: i for i, k in enumerate(sorted(set(gold_keys) | set(predicted_keys)))}
                codes = (
                    np.array([rank[k] for k in gold_keys], dtype=float),
                    np.array([rank[k] for k in predicted_keys], dtype=float),
                )
            self._codes[key] = codes
        return self._codes[key]

    def rows_match(self, pairs: list[tuple[int, int]]) -> bool:
        import numpy as np

        if len(pairs) <= 1:
            return True  # a single column was already compared as a multiset
        pairs = sorted(pairs, key=lambda pair: not self.exact(pair[0]))
        shifts = (0.5,) if all(self.exact(g) for g, _ in pairs) else (0.5, 0.0)
        for shift in shifts:
            codes = [self.codes(g, p, shift) for g, p in pairs]
            # np.lexsort sorts by its last key first
            gold_order = np.lexsort([gold for gold, _ in reversed(codes)])
            predicted_order = np.lexsort([predicted for _, predicted in reversed(codes)])
            if all(
                _columns_equal(
                    _take(self.gold[g], gold_order), _take(self.predicted[p], predicted_order), self.tolerance
                )
                for g, p in pairs
            ):
                return True
        return False


def _take(column: _Column, order: np.ndarray) -> _Column:
    import numpy as np

    if isinstance(column, np.ndarray):
        return column[order]
    return [column[index] for index in order]


def _compare_corrected(
    predicted: pd.DataFrame,
    gold: pd.DataFrame,
    required: list[int],
    options: TableOptions,
    deadline: Deadline,
) -> _Result:
    tolerance = options.tolerance
    gold_columns: dict[int, _Column] = {}
    for g in required:
        deadline.check()
        gold_columns[g] = _normalize(gold.iloc[:, g], options)
    predicted_columns: list[_Column] = []
    for p in range(predicted.shape[1]):
        deadline.check()
        predicted_columns.append(_normalize(predicted.iloc[:, p], options))
    if options.ignore_order:
        gold_view = {g: _sorted(column) for g, column in gold_columns.items()}
        predicted_view = [_sorted(column) for column in predicted_columns]
    else:
        gold_view, predicted_view = gold_columns, predicted_columns
    candidates: dict[int, list[int]] = {}
    for g in required:
        candidates[g] = []
        for p, column in enumerate(predicted_view):
            deadline.check()
            if _columns_equal(gold_view[g], column, tolerance):
                candidates[g].append(p)

    if not options.ignore_order:  # rows are paired by position, so each column stands on its own
        found = [(g, candidates[g][0]) for g in required if candidates[g]]
    else:
        found = _consistent_columns(
            gold_columns, predicted_columns, required, candidates, tolerance, deadline
        )
    found_gold = {g for g, _ in found}
    missed = [g for g in required if g not in found_gold]
    return _Result(_score(len(found), len(required), options.score_rule), found, missed, required)


def _consistent_columns(
    gold: dict[int, _Column],
    predicted: list[_Column],
    required: list[int],
    candidates: dict[int, list[int]],
    tolerance: float,
    deadline: Deadline,
) -> list[tuple[int, int]]:
    """The found columns under ignore_order: column multisets match and rows stay together."""
    matcher = _RowMatcher(gold, predicted, tolerance)
    first_choice = [(g, candidates[g][0]) for g in required if candidates[g]]
    deadline.check()
    if matcher.rows_match(first_choice):
        return first_choice
    found: list[tuple[int, int]] = []
    for g in required:
        for p in candidates[g]:
            deadline.check()
            if matcher.rows_match([*found, (g, p)]):
                found.append((g, p))
                break
    return found


# ---- the scorer -------------------------------------------------------------------------------------


def score_table(
    predicted: Path,
    gold: Path | Sequence[Path],
    *,
    mode: Mode = "corrected",
    condition_cols: Sequence[int | str] | Sequence[Sequence[int | str]] | None = None,
    ignore_order: bool | Sequence[bool] = False,
    score_rule: ScoreRule | Sequence[ScoreRule] | None = None,
    tolerance: float | None = None,
    timeout_s: float | None = None,
    case_sensitive: bool = False,
    whitespace_sensitive: bool = False,
) -> Score:
    """Score the agent's CSV against one or more gold CSVs (DA-Code ``compare_csv``).

    ``condition_cols``, ``ignore_order`` and ``score_rule`` may also be lists with one entry per gold file,
    as the official function takes them with several gold files (a gold file without an entry: compat
    scores 0, as the official IndexError does; corrected uses the default).

    Args:
        predicted: the CSV the agent wrote. Missing or unreadable (not a CSV, empty, bad encoding): 0 with
            the reason, never an exception.
        gold: one gold CSV, or several acceptable ones; the best score counts. Every candidate is compared
            with the same options.
        mode: ``corrected`` (default) or ``compat``; see the module docstring for what differs.
        condition_cols: the gold columns that must be found, as positions or names; ``None`` or empty
            means all of them.
        ignore_order: compare regardless of row order.
        score_rule: ``all`` (1 only if every required gold column is found) or ``divide`` (the fraction
            found); ``None`` means the mode's default (compat ``divide`` as the official code, corrected
            ``all`` as the paper).
        tolerance: absolute tolerance for numbers; ``None`` means 1e-2 (both modes).
        timeout_s: limit for reading and comparing everything; past it the score is 0. ``None`` means the
            mode's default: compat 10 s (the official evaluator's), corrected no limit; ``math.inf`` means
            no limit.
        case_sensitive, whitespace_sensitive: corrected mode only: text values keep their case /
            surrounding whitespace in the comparison (the task's instruction fixes them).

    A gold file that is missing or unreadable, or options that do not fit it, score 0 in compat (as
    officially) and raise ``ValueError`` in corrected. ``details`` hold the options, one entry per gold
    candidate with its ``found`` and ``missed`` gold columns, ``best`` (index of the best candidate) and
    ``timed_out``.
    """
    per_gold = {
        name: list(value)
        for name, value, is_list in (
            (
                "condition_cols",
                condition_cols,
                bool(condition_cols) and not isinstance(condition_cols[0], int | str),
            ),  # type: ignore[index]
            ("ignore_order", ignore_order, not isinstance(ignore_order, bool)),
            ("score_rule", score_rule, score_rule is not None and not isinstance(score_rule, str)),
        )
        if is_list
    }
    options = TableOptions.resolve(
        mode,
        condition_cols=None if "condition_cols" in per_gold else condition_cols,  # type: ignore[arg-type]
        ignore_order=False if "ignore_order" in per_gold else bool(ignore_order),
        score_rule=None if "score_rule" in per_gold else score_rule,  # type: ignore[arg-type]
        tolerance=tolerance,
        timeout_s=timeout_s,
        case_sensitive=case_sensitive,
        whitespace_sensitive=whitespace_sensitive,
    )
    golds = [Path(gold)] if isinstance(gold, str | Path) else [Path(path) for path in gold]
    if not golds:
        raise ValueError("score_table needs at least one gold file")
    predicted = Path(predicted)
    details: dict[str, Any] = {**options.summary(), "predicted": str(predicted), "timed_out": False}
    deadline = Deadline(options.timeout_s)

    if not predicted.is_file():
        return Score(value=0.0, explanation=f"no predicted file {predicted.name}", details=details)
    try:
        predicted_frame = read_csv(predicted, compat=mode == "compat")
    except Exception as exc:  # whatever the agent wrote, a file that does not parse scores 0
        reason = f"{type(exc).__name__}: {exc}"
        return Score(value=0.0, explanation=f"cannot read {predicted.name}: {reason}", details=details)

    candidates: list[dict[str, Any]] = []
    try:
        for index, path in enumerate(golds):
            deadline.check()
            try:
                gold_frame = read_csv(path, compat=mode == "compat")
            except Exception as exc:  # a broken gold file is the benchmark's fault
                problem = f"cannot read gold file {path}: {type(exc).__name__}: {exc}"
                if mode == "compat" and _official_skips(exc):
                    candidates.append({"gold": str(path), "score": 0.0, "error": problem})
                    continue
                raise GoldTableError(problem) from exc
            compared_with = _options_for_gold(options, per_gold, index)
            _, compared = compare_frames(predicted_frame, gold_frame, compared_with, deadline)
            candidates.append({"gold": str(path), **compared})
    except ComparisonTimeout:
        details.update(timed_out=True, candidates=candidates)
        limit = f"{options.timeout_s:g} s" + (" (the official evaluator's limit)" if mode == "compat" else "")
        return Score(value=0.0, explanation=f"comparison exceeded {limit}", details=details)
    except (GoldTableError, OfficialFailure) as exc:
        if mode != "compat":
            raise
        details.update(candidates=candidates, error=str(exc))
        return Score(value=0.0, explanation=f"{exc} (the official evaluator scores 0)", details=details)

    best = max(
        range(len(candidates)),
        key=lambda index: (candidates[index]["score"], "error" not in candidates[index]),
    )
    chosen = candidates[best]
    if "error" in chosen:  # compat: every gold file was one the official reader skips
        details.update(candidates=candidates, error=chosen["error"])
        return Score(
            value=0.0, explanation=f"{chosen['error']} (the official evaluator scores 0)", details=details
        )
    details.update(candidates=candidates, best=best)
    explanation = f"{len(chosen['found'])}/{chosen['required']} gold columns found"
    if chosen["missed"]:
        explanation += f" (missed: {', '.join(chosen['missed'])})"
    explanation += f"; rule {options.score_rule}"
    if len(candidates) > 1:
        explanation += f"; best of {len(candidates)} gold files: {Path(chosen['gold']).name}"
    return Score(value=min(1.0, max(0.0, chosen["score"])), explanation=explanation, details=details)


def _official_skips(error: Exception) -> bool:
    """Whether the official compare_csv scores this gold file 0 and goes on to the next one (it catches
    pandas' EmptyDataError and ParserError; anything else ends the task)."""
    import pandas as pd

    return isinstance(error, pd.errors.EmptyDataError | pd.errors.ParserError)


def _options_for_gold(options: TableOptions, per_gold: dict[str, list[Any]], index: int) -> TableOptions:
    """The options for the gold file at `index` from the per-gold lists (the official list shapes)."""
    changes: dict[str, Any] = {}
    for name, values in per_gold.items():
        if index >= len(values):
            if options.mode == "compat":
                raise GoldTableError(
                    f"option {name!r} has no entry for gold file {index + 1} (official IndexError)"
                )
            continue
        changes[name] = values[index]
    if not changes:
        return options
    return TableOptions.resolve(
        options.mode,
        condition_cols=changes.get("condition_cols", options.condition_cols),
        ignore_order=changes.get("ignore_order", options.ignore_order),
        score_rule=changes.get("score_rule", options.score_rule),
        tolerance=options.tolerance,
        timeout_s=options.timeout_s,
        case_sensitive=options.case_sensitive,
        whitespace_sensitive=options.whitespace_sensitive,
    )


class ComparisonOptions(OutputFileOptions, TextRules):
    """What table and database comparisons share; `None` means the mode's default (see `TableOptions`)."""

    score_rule: ScoreRule | None = None
    tolerance: float | None = Field(default=None, ge=0)  # checked when the task is loaded
    timeout_s: float | None = Field(default=None, gt=0)  # math.inf: no limit


class TableScorerOptions(ComparisonOptions):
    """Options of a `table` scorer in a task (DA-Code `compare_csv`); see `score_table`."""

    gold: str | list[str] | None = None  # type: ignore[assignment]  # several acceptable gold tables
    # each also as a list with one entry per gold table, as the official compare_csv takes them
    condition_cols: list[int | str] | list[list[int | str]] | int | str | None = None
    ignore_order: bool | list[bool] = False
    score_rule: ScoreRule | list[ScoreRule] | None = None  # type: ignore[assignment]


@scorer("table", options=TableScorerOptions, modes=WORKSPACE_MODES)
def table(context: ScoringContext, options: TableScorerOptions) -> Score:
    """A CSV the agent wrote against one or more gold CSVs, column by column (DA-Code compare_csv)."""
    predicted = context.output(options.file)
    if predicted is None:
        return nothing_collected(options.file)
    names = options.gold or options.file
    golds = [context.gold(name) for name in ([names] if isinstance(names, str) else names)]
    condition = (
        [options.condition_cols] if isinstance(options.condition_cols, int | str) else options.condition_cols
    )
    return score_table(
        predicted, golds, mode=context.mode, condition_cols=condition, ignore_order=options.ignore_order,  # type: ignore[arg-type]
        score_rule=options.score_rule, tolerance=options.tolerance, timeout_s=options.timeout_s,
        case_sensitive=options.case_sensitive, whitespace_sensitive=options.whitespace_sensitive,
    )  # fmt: skip
