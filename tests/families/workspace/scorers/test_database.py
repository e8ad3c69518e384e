"""The DA-Code database scorer on real SQLite and DuckDB files: table by table against a gold database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from daharness.families.workspace.scorers.database import engine_of, score_database

PEOPLE = [(1, "alice", 1.5), (2, "bob", 2.25), (3, "carol", 3.0)]
CITIES = [("paris", 2.1), ("berlin", 3.6)]

Tables = dict[str, tuple[str, list[tuple]]]
GOLD_TABLES: Tables = {
    "people": ("id INTEGER, name TEXT, score REAL", PEOPLE),
    "cities": ("city TEXT, population REAL", CITIES),
}


def make_db(path: Path, tables: Tables) -> Path:
    """Create a SQLite or DuckDB file (by extension) holding the given tables."""
    connection = duckdb.connect(str(path)) if engine_of(path) == "duckdb" else sqlite3.connect(path)
    for name, (schema, rows) in tables.items():
        connection.execute(f'CREATE TABLE "{name}" ({schema})')
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            connection.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
    if isinstance(connection, sqlite3.Connection):
        connection.commit()
    connection.close()
    return path


def reshaped() -> Tables:
    """The gold content with rows shuffled and columns renamed and reordered, plus an extra column."""
    people = [(score, f"  {name.upper()}", pid, "x") for pid, name, score in reversed(PEOPLE)]
    return {
        "cities": ("town TEXT, pop REAL", list(reversed(CITIES))),
        "people": ("points REAL, who TEXT, pid INTEGER, note TEXT", people),
    }


@pytest.mark.parametrize("suffix", [".db", ".duckdb"])
def test_same_content_passes_and_a_changed_value_fails(tmp_path: Path, suffix: str) -> None:
    gold = make_db(tmp_path / f"gold{suffix}", GOLD_TABLES)
    predicted = make_db(tmp_path / f"pred{suffix}", reshaped())
    score = score_database(predicted, gold)
    assert score.value == 1.0, score.explanation
    assert {entry["table"] for entry in score.details["tables"]} == {"people", "cities"}

    schema, rows = reshaped()["people"]
    rows[1] = (2.5, "bob", 2, "x")  # bob's score was 2.25
    wrong = make_db(tmp_path / f"wrong{suffix}", {**reshaped(), "people": (schema, rows)})
    failed = score_database(wrong, gold)
    assert failed.value == 0.0
    people = next(entry for entry in failed.details["tables"] if entry["table"] == "people")
    assert people["missed"] == ["score"]
    assert "differ: people" in failed.explanation
    assert score_database(wrong, gold, score_rule="divide").value == pytest.approx((1 + 2 / 3) / 2)


def test_sqlite_and_duckdb_files_can_be_compared_with_each_other(tmp_path: Path) -> None:
    gold = make_db(tmp_path / "gold.sqlite", GOLD_TABLES)
    predicted = make_db(tmp_path / "pred.ddb", reshaped())
    assert score_database(predicted, gold).value == 1.0
    assert score_database(gold, make_db(tmp_path / "gold.duckdb", GOLD_TABLES)).value == 1.0


@pytest.mark.parametrize("suffix", [".db", ".duckdb"])
def test_a_missing_table_scores_0_for_that_table(tmp_path: Path, suffix: str) -> None:
    gold = make_db(tmp_path / f"gold{suffix}", GOLD_TABLES)
    predicted = make_db(tmp_path / f"pred{suffix}", {"people": GOLD_TABLES["people"]})
    assert score_database(predicted, gold).value == 0.0
    divided = score_database(predicted, gold, score_rule="divide")
    assert divided.value == 0.5
    cities = next(entry for entry in divided.details["tables"] if entry["table"] == "cities")
    assert cities["missing"] is True
    assert "missing: cities" in divided.explanation
    # Only the tables asked for are compared.
    assert score_database(predicted, gold, tables=["people"]).value == 1.0


def test_compat_stops_reading_at_the_first_table_that_fails(tmp_path: Path) -> None:
    # official convert_to_csvs: `try: for table_name in tables: pd.read_sql_query(f"SELECT * FROM
    # {table_name} ...")` ... `except Exception as e: logging.warning(...)`, then
    # `if len(pred_tables) != len(gold_tables): return 0`
    gold = make_db(tmp_path / "gold.db", GOLD_TABLES)
    renamed = make_db(
        tmp_path / "pred.db",
        {"persons": GOLD_TABLES["people"], "towns": GOLD_TABLES["cities"]},
    )
    assert score_database(renamed, gold, mode="compat").value == 0.0  # older revisions paired by position
    assert score_database(renamed, gold).value == 0.0
    # A name that needs quoting fails on both sides: the tables before it are compared, not the rest.
    quoted = {**GOLD_TABLES, "my cities": GOLD_TABLES["cities"]}
    gold_quoted = make_db(tmp_path / "gold_quoted.db", quoted)
    other = make_db(tmp_path / "other.db", {**quoted, "my cities": ("city TEXT, population REAL", [])})
    score = score_database(other, gold_quoted, mode="compat")
    assert score.value == 1.0  # official 1: "my cities" is never compared
    assert "'my cities' cannot be read" in score.explanation
    assert score_database(other, gold_quoted).value == 0.0


def test_compat_takes_the_minimum_of_per_table_divide_scores(tmp_path: Path) -> None:
    gold = make_db(tmp_path / "gold.db", GOLD_TABLES)
    changed = dict(GOLD_TABLES)
    changed["people"] = (
        "id INTEGER, name TEXT, score REAL",
        [(1, "alice", 1.5), (2, "bob", 9.0), (3, "carol", 3.0)],
    )
    predicted = make_db(tmp_path / "pred.db", changed)
    score = score_database(predicted, gold, mode="compat")
    assert score.value == pytest.approx(2 / 3)  # people: 2 of 3 columns; cities: 1
    assert (score.details["score_rule"], score.details["ignore_order"]) == ("divide", False)
    assert score_database(make_db(tmp_path / "same.db", GOLD_TABLES), gold, mode="compat").value == 1.0


def test_compat_compares_rows_in_order_by_default(tmp_path: Path) -> None:
    gold = make_db(tmp_path / "gold.db", GOLD_TABLES)
    predicted = make_db(tmp_path / "pred.db", reshaped())
    assert score_database(predicted, gold, mode="compat").value < 1.0
    # Rows in any order once asked, and "  ALICE" equals "alice" (official HEAD: strings without case).
    score = score_database(predicted, gold, mode="compat", ignore_order=True)
    people = next(entry for entry in score.details["tables"] if entry["table"] == "people")
    assert people["missed"] == [] and score.value == 1.0
    assert score_database(predicted, gold, ignore_order=False).value == 0.0


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_missing_or_corrupt_prediction_scores_0_without_raising(tmp_path: Path, mode: str) -> None:
    gold = make_db(tmp_path / "gold.db", GOLD_TABLES)
    absent = tmp_path / "absent.db"
    missing = score_database(absent, gold, mode=mode)  # type: ignore[arg-type]
    assert missing.value == 0.0
    assert "no predicted database" in missing.explanation
    assert not absent.exists()  # opened read-only, never created
    for name in ("corrupt.db", "corrupt.duckdb"):
        corrupt = tmp_path / name
        corrupt.write_bytes(b"this is not a database" * 10)
        score = score_database(corrupt, gold, mode=mode)  # type: ignore[arg-type]
        assert score.value == 0.0
        assert "cannot read" in score.explanation


def test_gold_problems_score_0_in_compat_and_raise_in_corrected(tmp_path: Path) -> None:
    gold = make_db(tmp_path / "gold.db", GOLD_TABLES)
    predicted = make_db(tmp_path / "pred.db", GOLD_TABLES)
    assert score_database(predicted, gold, mode="compat", tables=["nope"]).value == 0.0
    with pytest.raises(ValueError, match="gold database"):
        score_database(predicted, gold, tables=["nope"])
    with pytest.raises(ValueError, match="no gold database"):
        score_database(predicted, tmp_path / "gone.db")


def test_timeout_scores_0_in_compat_and_is_off_in_corrected(tmp_path: Path) -> None:
    gold = make_db(tmp_path / "gold.db", GOLD_TABLES)
    predicted = make_db(tmp_path / "pred.db", GOLD_TABLES)
    compat = score_database(predicted, gold, mode="compat", timeout_s=1e-6)
    assert (compat.value, compat.details["timed_out"]) == (0.0, True)
    assert score_database(predicted, gold, mode="compat").value == 1.0
    assert score_database(predicted, gold).value == 1.0
