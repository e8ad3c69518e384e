"""DA-Code database scoring: a SQLite or DuckDB file the agent filled, table by table against a gold one.

Each gold table (every table of the gold database, or the ``tables`` asked for) is read from both files
and compared with the table rule of :mod:`daharness.families.workspace.scorers.table` (columns matched by content, names
and order ignored). The file type comes from the extension: ``.duckdb`` / ``.ddb`` is DuckDB, anything
else SQLite. Both files are opened read-only; nothing is written next to them. DuckDB runs with external
access off, so a view that reads another file (a host file, the gold) or loads an extension fails.

Two modes:

* ``compat`` reproduces the official ``compare_sqlite`` (``da_agent/evaluators/metrics/table.py``):

  - The tables are every ``type='table'`` entry of the gold ``sqlite_master``, internal ones such as
    ``sqlite_sequence`` included, in creation order (or the ``tables`` asked for). Each is read with
    ``SELECT * FROM <name>``, the name unquoted, first from the gold, then from the prediction; on each
    side the reading stops at the first table that fails (the official ``convert_to_csvs`` swallows the
    error and keeps what it read). When the two sides read different numbers of tables the score is 0:
    a missing or renamed table scores 0. **Defect: a name that needs quoting** (``my table``, ``order``)
    fails on both sides and ends the reading there, so it and every table after it are never compared
    (the tables before it decide; when it comes first, nothing is compared and the score is 0).
  - Every table goes through a CSV round trip (``read_sql_query`` -> ``to_csv`` -> ``read_csv``) and is
    compared with the compat table rule (hashed match first, see ``table.py``): the per-table
    ``score_rule`` is ``compare_csv``'s default (``divide``), ignore_order defaults to False, tolerance
    0.01, an empty table scores 0, and the database's score is the **minimum** over tables.
  - The whole comparison runs under the same 10 s limit as a table (default ``timeout_s``).
  - A missing or corrupt predicted file scores 0 (officially, ``sqlite3.connect`` even creates an empty
    file first); any error on the gold side scores 0. The official code has no DuckDB support; compat
    reads DuckDB files the same way (tables in name order).

* ``corrected`` (default): user tables only (no ``sqlite_*`` internals), names quoted, values read as
  the database returns them (no CSV round trip); a gold table is looked up by name (case-insensitively,
  views included) and scores 0 for that table when it is missing. Each table is compared with the
  corrected table rule; the database scores the mean over tables for ``divide`` and 1 only if every
  table scores 1 for ``all``. No time limit by default. Errors on the gold side raise ``ValueError``.
"""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workspace.modes import WORKSPACE_MODES
from daharness.families.workspace.scorers.table import (
    ComparisonOptions,
    ComparisonTimeout,
    Deadline,
    GoldTableError,
    Mode,
    ScoreRule,
    TableOptions,
    compare_frames,
    read_csv,
)
from daharness.families.workspace.scorers.table_compat import OfficialFailure
from daharness.scoring.outputs import duckdb_read_only, nothing_collected

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import pandas as pd

Engine = Literal["sqlite", "duckdb"]
DUCKDB_SUFFIXES = frozenset({".duckdb", ".ddb"})


def _database_errors() -> tuple[type[Exception], ...]:
    """What a failed query raises (pandas wraps the driver's error when read_sql_query fails); duckdb is
    imported when first needed, so that the family registers cheaply."""
    import duckdb
    import pandas as pd

    return (sqlite3.Error, duckdb.Error, pd.errors.DatabaseError)


def engine_of(path: Path) -> Engine:
    """The database engine of a file, by its extension."""
    return "duckdb" if path.suffix.lower() in DUCKDB_SUFFIXES else "sqlite"


class _Database:
    """A read-only connection to one SQLite or DuckDB file."""

    def __init__(self, path: Path, connection: Any, engine: Engine) -> None:
        self.path, self.connection, self.engine = path, connection, engine

    def table_names(self, *, internal: bool, views: bool) -> list[str]:
        if self.engine == "sqlite":
            kinds = "('table', 'view')" if views else "('table')"
            rows = self.connection.execute(
                f"SELECT name FROM sqlite_master WHERE type IN {kinds} ORDER BY rowid"
            ).fetchall()
            return [name for (name,) in rows if internal or not name.startswith("sqlite_")]
        kinds = "('BASE TABLE', 'VIEW')" if views else "('BASE TABLE')"
        rows = self.connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
            f"AND table_schema = current_schema() AND table_type IN {kinds} ORDER BY table_name"
        ).fetchall()
        return [name for (name,) in rows]

    def read(self, table: str, *, compat: bool) -> pd.DataFrame:
        import pandas as pd

        if compat:
            # Official: the name unquoted, pandas' reading, then a CSV round trip re-infers every type.
            sql = f"SELECT * FROM {table}"
            if self.engine == "sqlite":
                frame = pd.read_sql_query(sql, self.connection)
            else:
                frame = self.connection.execute(sql).df()
            return read_csv(io.StringIO(frame.to_csv(index=False)), compat=True)
        cursor = self.connection.execute(f"SELECT * FROM {_quote(table)}")
        columns = [entry[0] for entry in cursor.description]
        return pd.DataFrame.from_records(cursor.fetchall(), columns=columns)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@contextmanager
def _open(path: Path) -> Iterator[_Database]:
    """Open read-only (a missing SQLite file is never created); raises the driver's error if it is no DB."""
    engine = engine_of(path)
    if engine == "duckdb":
        connection: Any = duckdb_read_only(path)
    else:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        database = _Database(path, connection, engine)
        database.table_names(internal=True, views=False)  # SQLite only notices a non-database here
        yield database
    finally:
        connection.close()


def score_database(
    predicted: Path,
    gold: Path,
    *,
    mode: Mode = "corrected",
    tables: Sequence[str] | None = None,
    ignore_order: bool | Sequence[bool] | None = None,
    condition_cols: Sequence[Sequence[int | str]] | None = None,
    score_rule: ScoreRule | None = None,
    tolerance: float | None = None,
    timeout_s: float | None = None,
    case_sensitive: bool = False,
    whitespace_sensitive: bool = False,
) -> Score:
    """Score the agent's database against the gold database, table by table (DA-Code ``compare_sqlite``).

    Args:
        predicted: the SQLite/DuckDB file the agent filled. Missing or not a database: 0 with the reason,
            never an exception.
        gold: the gold database, of either type (each file's type comes from its own extension).
        mode: ``corrected`` (default) or ``compat``; see the module docstring.
        tables: the gold tables to compare; ``None`` or empty means every table of the gold database.
        ignore_order: compare each table regardless of row order; one value for every table or a list with
            one per table (the official shape); ``None`` means the mode's default (corrected True, since a
            table's rows have no order; compat False, the official default).
        condition_cols: per table, the gold columns that must be found (``[]``: all of them).
            A list shorter than the tables: compat scores 0 (the official code fails on the missing entry),
            corrected uses the default for the tables it does not reach.
        score_rule: per table, ``all`` (every gold column found) or ``divide`` (the fraction found). The
            database then scores: corrected, 1 only if every table scores 1 (``all``) or the mean over
            tables (``divide``); compat, the minimum over tables. ``None`` means the mode's default
            (corrected ``all``, compat ``divide``).
        tolerance: absolute tolerance for numbers; ``None`` means 1e-2 (both modes).
        timeout_s: limit for the whole comparison, past which the score is 0; ``None`` means compat 10 s,
            corrected no limit; ``math.inf`` means no limit.
        case_sensitive, whitespace_sensitive: corrected mode only: text values keep their case /
            surrounding whitespace in the comparison (the task's instruction fixes them).

    A gold database that cannot be read, or a requested table it lacks, scores 0 in compat (as
    officially) and raises ``ValueError`` in corrected. ``details`` list every table with its score, the
    predicted table compared with it, its ``found`` and ``missed`` gold columns, or ``missing``.
    """
    per_table = _PerTable(mode, ignore_order, condition_cols)
    options = TableOptions.resolve(
        mode,
        condition_cols=None,
        ignore_order=per_table.default_order,
        score_rule=score_rule,
        tolerance=tolerance,
        timeout_s=timeout_s,
        case_sensitive=case_sensitive,
        whitespace_sensitive=whitespace_sensitive,
    )
    predicted, gold = Path(predicted), Path(gold)
    details: dict[str, Any] = {**options.summary(), "predicted": str(predicted), "timed_out": False}
    details.pop("condition_cols")
    if per_table.given:
        details["per_table"] = per_table.given
    if not predicted.is_file():
        return Score(value=0.0, explanation=f"no predicted database {predicted.name}", details=details)
    deadline = Deadline(options.timeout_s)
    compare = _compare_official if mode == "compat" else _compare_corrected
    try:
        value, explanation, compared = compare(
            predicted, gold, list(tables or ()), per_table.bind(options), deadline
        )
    except _PredictedUnreadable as exc:
        return Score(value=0.0, explanation=f"cannot read {predicted.name}: {exc}", details=details)
    except ComparisonTimeout:
        details["timed_out"] = True
        limit = f"{options.timeout_s:g} s" + (" (the official evaluator's limit)" if mode == "compat" else "")
        return Score(value=0.0, explanation=f"comparison exceeded {limit}", details=details)
    except (GoldTableError, OfficialFailure) as exc:
        if mode != "compat":
            raise
        details["error"] = str(exc)
        return Score(value=0.0, explanation=f"{exc} (the official evaluator scores 0)", details=details)
    details["tables"] = compared
    return Score(value=min(1.0, max(0.0, value)), explanation=explanation, details=details)


class _PerTable:
    """The options that the official `compare_sqlite` takes per table (lists indexed by table position)."""

    def __init__(
        self,
        mode: Mode,
        ignore_order: bool | Sequence[bool] | None,
        condition_cols: Sequence[Sequence[int | str]] | None,
    ) -> None:
        self.compat = mode == "compat"
        self.default_order = ignore_order if isinstance(ignore_order, bool) else not self.compat
        self.orders = None if ignore_order is None or isinstance(ignore_order, bool) else list(ignore_order)
        self.columns = None if condition_cols is None else [list(c) for c in condition_cols]
        self.given = {
            k: v
            for k, v in (("ignore_order", self.orders), ("condition_cols", self.columns))
            if v is not None
        }

    def bind(self, options: TableOptions) -> _TableOptionsAt:
        return lambda index: self.at(options, index)

    def at(self, options: TableOptions, index: int) -> TableOptions:
        """The options of the table at `index`; raises _OfficialIndexError where the official code fails."""
        changes: dict[str, Any] = {}
        for name, values in self.given.items():
            if index < len(values):
                changes[name] = tuple(values[index]) if name == "condition_cols" else bool(values[index])
            elif self.compat:
                raise _OfficialIndexError(
                    f"option {name!r} has {len(values)} entries and table {index + 1} has none "
                    "(the official compare_sqlite fails: IndexError)"
                )
        return replace(options, **changes)


_TableOptionsAt = Callable[[int], TableOptions]


class _OfficialIndexError(Exception):
    """A per-table option list shorter than the tables: the official code raises and the task scores 0."""


class _PredictedUnreadable(Exception):
    """The predicted file is not a database this engine can open, or its tables cannot be read."""


def _gold_frames(gold: Path, tables: list[str], *, deadline: Deadline) -> dict[str, pd.DataFrame]:
    if not gold.is_file():
        raise GoldTableError(f"no gold database {gold}")
    try:
        with _open(gold) as database:
            names = tables or database.table_names(internal=False, views=False)
            if not names:
                raise GoldTableError(f"the gold database {gold.name} has no tables")
            frames = {}
            for name in names:
                deadline.check()
                frames[name] = database.read(name, compat=False)
            return frames
    except (*_database_errors(), ValueError) as exc:
        if isinstance(exc, GoldTableError):
            raise
        raise GoldTableError(f"cannot read gold database {gold.name}: {exc}") from exc


def _read_until_failure(database: _Database, names: list[str], deadline: Deadline) -> list[pd.DataFrame]:
    """The tables read in order up to the first that cannot be read, as the official ``convert_to_csvs``
    reads them: it catches the error (any ``Exception``) and returns what it had."""
    frames = []
    for name in names:
        deadline.check()
        try:
            frames.append(database.read(name, compat=True))
        except Exception:  # the official code swallows every error here
            break
    return frames


def _compare_official(
    predicted: Path, gold: Path, tables: list[str], options_at: _TableOptionsAt, deadline: Deadline
) -> tuple[float, str, list[dict[str, Any]]]:
    if not gold.is_file():
        raise GoldTableError(f"no gold database {gold}")
    try:
        with _open(gold) as database:
            names = tables or database.table_names(internal=True, views=False)
            gold_frames = _read_until_failure(database, names, deadline)
    except _database_errors() as exc:
        raise GoldTableError(f"cannot read gold database {gold.name}: {exc}") from exc
    try:
        with _open(predicted) as database:
            predicted_frames = _read_until_failure(database, names, deadline)
    except _database_errors() as exc:
        raise _PredictedUnreadable(str(exc)) from exc
    unread = names[len(gold_frames)] if len(gold_frames) < len(names) else None
    if len(predicted_frames) != len(gold_frames):
        explanation = (
            f"{len(predicted_frames)} table(s) read from the prediction, {len(gold_frames)} from the gold "
            "(the official reading stops at the first table that cannot be read)"
        )
        return 0.0, explanation, []
    if not gold_frames:
        return 0.0, f"table {unread!r} cannot be read (SELECT * FROM {unread}), so no table is compared", []

    per_table = []
    for index, (predicted_frame, gold_frame) in enumerate(zip(predicted_frames, gold_frames, strict=True)):
        deadline.check()
        try:
            options = options_at(index)
        except _OfficialIndexError as exc:
            return 0.0, str(exc), per_table
        _, compared = compare_frames(predicted_frame, gold_frame, options, deadline)
        per_table.append({"table": names[index], "predicted_table": names[index], **compared})
    value = min(entry["score"] for entry in per_table)
    explanation = _explain(per_table, "minimum over tables")
    if unread is not None:
        explanation += f"; table {unread!r} cannot be read (SELECT * FROM {unread}): it and the tables after it are not compared"
    return value, explanation, per_table


def _compare_corrected(
    predicted: Path, gold: Path, tables: list[str], options_at: _TableOptionsAt, deadline: Deadline
) -> tuple[float, str, list[dict[str, Any]]]:
    gold_frames = _gold_frames(gold, tables, deadline=deadline)
    per_table: list[dict[str, Any]] = []
    try:
        with _open(predicted) as database:
            available = {name.casefold(): name for name in database.table_names(internal=False, views=True)}
            for index, (gold_name, gold_frame) in enumerate(gold_frames.items()):
                deadline.check()
                options = options_at(index)
                predicted_name = available.get(gold_name.casefold())
                if predicted_name is None:
                    per_table.append(
                        {"table": gold_name, "predicted_table": None, "score": 0.0, "missing": True}
                    )
                    continue
                predicted_frame = database.read(predicted_name, compat=False)
                _, compared = compare_frames(predicted_frame, gold_frame, options, deadline)
                per_table.append({"table": gold_name, "predicted_table": predicted_name, **compared})
    except _database_errors() as exc:
        raise _PredictedUnreadable(str(exc)) from exc
    scores = [entry["score"] for entry in per_table]
    if options_at(0).score_rule == "divide":
        return sum(scores) / len(scores), _explain(per_table, "mean over tables"), per_table
    value = 1.0 if all(score >= 1.0 for score in scores) else 0.0
    return value, _explain(per_table, "every table must match"), per_table


def _explain(per_table: list[dict[str, Any]], rule: str) -> str:
    matched = [entry["table"] for entry in per_table if entry["score"] >= 1.0]
    missing = [entry["table"] for entry in per_table if entry.get("missing")]
    partial = [entry["table"] for entry in per_table if entry["score"] < 1.0 and not entry.get("missing")]
    text = f"{len(matched)}/{len(per_table)} tables match"
    if partial:
        text += f" (differ: {', '.join(partial)})"
    if missing:
        text += f" (missing: {', '.join(missing)})"
    return f"{text}; {rule}"


class DatabaseScorerOptions(ComparisonOptions):
    """Options of a `database` scorer in a task (DA-Code `compare_sqlite`); see `score_database`."""

    tables: list[str] | None = None
    condition_tabs: list[str] | None = None  # the official name of `tables`
    condition_cols: list[list[int | str]] | None = None  # per table, as officially
    ignore_order: bool | list[bool] | None = None  # every table, or per table as officially


@scorer("database", options=DatabaseScorerOptions, modes=WORKSPACE_MODES)
def database(context: ScoringContext, options: DatabaseScorerOptions) -> Score:
    """A SQLite or DuckDB file the agent filled against a gold database, table by table."""
    predicted = context.output(options.file)
    if predicted is None:
        return nothing_collected(options.file)
    return score_database(
        predicted, context.gold(options.gold_name()), mode=context.mode,  # type: ignore[arg-type]
        tables=options.tables or options.condition_tabs, ignore_order=options.ignore_order,
        condition_cols=options.condition_cols, score_rule=options.score_rule, tolerance=options.tolerance,
        timeout_s=options.timeout_s, case_sensitive=options.case_sensitive,
        whitespace_sensitive=options.whitespace_sensitive,
    )  # fmt: skip
