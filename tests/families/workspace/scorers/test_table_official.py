"""compat beside DA-Code's own `compare_csv` and `compare_sqlite` (tests/fixtures/dacode_official: yiyihum/da-code
b211daf, `da_agent/evaluators/metrics/table.py`, MIT), run here as the oracle.

Each case states the score the official function gives (an exception counts 0, as the evaluator's catch-all
`except Exception as e: ... scores.append(0.0)` makes it); the test checks that the official function still
gives it on this machine and that daharness's compat gives the same.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest
from helpers import load_module

from daharness.families.workspace.scorers.database import score_database
from daharness.families.workspace.scorers.table import score_table

ORACLE = Path(__file__).parents[3] / "fixtures" / "dacode_official" / "table.py"


@pytest.fixture(scope="module")
def official() -> ModuleType:
    return load_module(ORACLE, "dacode_official_table")


def run_official(function: Any, *args: Any, **options: Any) -> float:
    try:
        return float(function(*args, **options))
    except Exception:  # evaluation.py's catch-all scores the task 0
        return 0.0


class Case(NamedTuple):
    predicted: str
    gold: str | tuple[str, ...]  # several: gold candidates, the best counts
    options: dict[str, Any]
    official: float


ROWS = "".join(f"{i}\n" for i in range(10_005))

TABLES: dict[str, Case] = {
    "identical": Case("a,b\n1,x\n2,y\n", "a,b\n1,x\n2,y\n", {}, 1.0),
    "renamed, reordered, extra column": Case(
        "n,extra,who\n3,q,alice\n4,r,bob\n", "name,count\nalice,3\nbob,4\n", {}, 1.0
    ),
    # the hashed match sorts lower-cased text; the cell rule alone sorts "A" < "b" against "B" > "a"
    "ignore_order, text of another case": Case("x\nb\nA\n", "x\na\nB\n", {"ignore_order": True}, 1.0),
    "ignore_order, upper-cased words": Case(
        "f\nBANANA\nAPPLE\n", "f\napple\nBanana\n", {"ignore_order": True}, 1.0
    ),
    "ignore_order, stray spaces": Case("x\n Zed\nab\n", "x\nzed\n ab\n", {"ignore_order": True}, 1.0),
    # the hash rounds round(x / 0.01) * 0.01: 0.015 and 0.025 as pandas reads them both become 0.02
    "same 0.01 bucket, 0.01 apart": Case("x\n0.015\n", "x\n0.025\n", {}, 1.0),
    "other buckets, 0.01 apart": Case("x\n0.025\n", "x\n0.035\n", {}, 0.0),
    "same bucket again, 0.01 apart": Case("x\n0.035\n", "x\n0.045\n", {}, 1.0),
    "0.0098 apart": Case("x\n0.0149\n", "x\n0.0051\n", {}, 1.0),
    "within 0.01": Case("x\n1.009\n2\n", "x\n1.0\n2\n", {}, 1.0),
    "beyond 0.01": Case("x\n1.011\n2\n", "x\n1.0\n2\n", {}, 0.0),
    "near zero across the sign": Case("x\n-0.005\n", "x\n0.004\n", {}, 1.0),
    # the cell rule sorts numbers as text ("10.004" < "20.0" but "20.0" < "9.999"); the hash sorts rounded ones
    "ignore_order, numbers sorted as text": Case(
        "x\n10.004\n20.0\n", "x\n9.999\n20.0\n", {"ignore_order": True}, 1.0
    ),
    "ignore_order, integers sorted as text": Case(
        "x\n10\n9\n100\n", "x\n9\n100\n10\n", {"ignore_order": True}, 1.0
    ),
    "ignore_order, floats": Case("x\n0.0951\n0.1\n", "x\n0.1\n0.095\n", {"ignore_order": True}, 1.0),
    # round(inf) raises OverflowError; every predicted column is hashed first
    "an infinite number in an extra predicted column": Case("x,y\n1,inf\n", "x\n1\n", {}, 0.0),
    "infinite on both sides": Case("x\ninf\n", "x\ninf\n", {}, 0.0),
    "an infinite gold number outside condition_cols": Case(
        "x\n1\n", "x,y\n1,inf\n", {"condition_cols": [0]}, 1.0
    ),
    "missing values in the same places": Case("x,y\n1,\n,b\n", "x,y\n1,\n,b\n", {}, 1.0),
    "ignore_order, missing values moved": Case("x\n1\n\n3\n", "x\n\n3\n1\n", {"ignore_order": True}, 1.0),
    "ignore_order, text and missing values": Case("x\nb\n\na\n", "x\na\nB\n\n", {"ignore_order": True}, 1.0),
    "a missing value for a value": Case("x\n1\n2\n", "x\n1\n\n", {}, 0.0),
    "NaN and null spelled out": Case("x\nNaN\n1\n", "x\nnull\n1\n", {}, 1.0),
    "True/False against 1/0": Case("x\nTrue\nFalse\n", "x\n1\n0\n", {}, 1.0),
    "a number in a text column": Case("x\n5\nz\n", "x\n5\n7\n", {}, 0.0),
    "integers against floats": Case("x,y\n3,a\n4,b\n", "x\n3.006\n3.996\n", {}, 1.0),
    "integers beside floats, ignore_order": Case(
        "x,y\n3,1.5\n4,2.5\n", "x\n4\n3\n", {"ignore_order": True}, 1.0
    ),
    "large integers": Case("x\n10000000000000001\n", "x\n10000000000000000\n", {}, 1.0),
    "leading zeros": Case("x\n007\n", "x\n7\n", {}, 1.0),
    # each column sorted on its own: every value under the wrong name still matches
    "ignore_order, rows scrambled across columns": Case(
        "name,value\na,2\nb,3\nc,1\n",
        "name,value\na,1\nb,2\nc,3\n",
        {"ignore_order": True, "score_rule": "all"},
        1.0,
    ),
    "rows scrambled, in order": Case("name,value\na,2\nb,3\nc,1\n", "name,value\na,1\nb,2\nc,3\n", {}, 0.5),
    "condition_cols": Case(
        "name,count\nalice,3\nbob,4\n",
        "name,score,count\nalice,1.5,3\nbob,2.2,4\n",
        {"condition_cols": [0, 2]},
        1.0,
    ),
    "condition_cols repeated": Case(
        "name\nalice\nbob\n", "name,count\nalice,3\nbob,4\n", {"condition_cols": [0, 0, 1]}, 2 / 3
    ),
    "divide, one column of three missed": Case("a,b,c\n1,x,5\n2,y,7\n", "a,b,c\n1,x,5\n2,y,6\n", {}, 2 / 3),
    "all, one column missed": Case("a,b\n1,x\n2,z\n", "a,b\n1,x\n2,y\n", {"score_rule": "all"}, 0.0),
    "another row count": Case("x\n1\n2\n3\n", "x\n1\n2\n", {}, 0.0),
    "an empty prediction": Case("x\n", "x\n", {}, 0.0),
    "the first gold file empty": Case("x\n1\n", ("", "x\n1\n"), {}, 1.0),
    "the first gold file header-only": Case("x\n1\n", ("x\n", "x\n1\n"), {}, 1.0),
    "the second gold candidate matches": Case("k\n1\n3\n", ("k\n1\n2\n", "k\n1\n3\n"), {}, 1.0),
    "per-gold ignore_order": Case(
        "k\n3\n1\n", ("k\n1\n3\n", "k\n1\n3\n"), {"ignore_order": [False, True]}, 1.0
    ),
    "only the first 10,000 rows are read": Case(
        "n\n" + ROWS.replace("10004\n", "-1\n"), "n\n" + ROWS, {}, 1.0
    ),
}


@pytest.mark.parametrize("name", TABLES)
def test_compat_equals_the_official_compare_csv(tmp_path: Path, official: ModuleType, name: str) -> None:
    case = TABLES[name]
    predicted = tmp_path / "pred.csv"
    predicted.write_text(case.predicted, encoding="utf-8")
    golds = [case.gold] if isinstance(case.gold, str) else list(case.gold)
    gold_paths = []
    for index, text in enumerate(golds):
        path = tmp_path / f"gold{index}.csv"
        path.write_text(text, encoding="utf-8")
        gold_paths.append(path)
    expected: Any = str(gold_paths[0]) if isinstance(case.gold, str) else [str(path) for path in gold_paths]
    assert run_official(official.compare_csv, str(predicted), expected, **case.options) == pytest.approx(
        case.official
    )
    ours = score_table(predicted, gold_paths, mode="compat", **case.options)
    assert ours.value == pytest.approx(case.official), ours.explanation


def test_corrected_keeps_its_tolerance_and_row_pairing(tmp_path: Path) -> None:
    def corrected(predicted: str, gold: str, **options: Any) -> float:
        (tmp_path / "p.csv").write_text(predicted, encoding="utf-8")
        (tmp_path / "g.csv").write_text(gold, encoding="utf-8")
        return score_table(tmp_path / "p.csv", tmp_path / "g.csv", **options).value

    # |a - b| <= 0.01, not a shared rounding bucket: 0.015/0.025 and 0.025/0.035 alike
    case = TABLES["same 0.01 bucket, 0.01 apart"]
    assert corrected(case.predicted, case.gold) == 0.0  # type: ignore[arg-type]
    assert corrected("x\n0.016\n", "x\n0.025\n") == 1.0
    case = TABLES["ignore_order, text of another case"]
    assert corrected(case.predicted, case.gold, ignore_order=True) == 1.0  # type: ignore[arg-type]
    case = TABLES["an infinite number in an extra predicted column"]
    assert corrected(case.predicted, case.gold) == 1.0  # type: ignore[arg-type]
    case = TABLES["ignore_order, rows scrambled across columns"]
    assert corrected(case.predicted, case.gold, **case.options) == 0.0  # type: ignore[arg-type]


# ---- databases (compare_sqlite) --------------------------------------------------------------------

PEOPLE = "create table t(a int, b text); insert into t values (1, 'x'), (2, 'y');"
CITIES = "create table u(c real); insert into u values (1.5);"

DATABASES: dict[str, Case] = {
    "identical": Case(PEOPLE + CITIES, PEOPLE + CITIES, {}, 1.0),
    "one table differs: the minimum": Case(PEOPLE + CITIES, PEOPLE + CITIES.replace("1.5", "2.5"), {}, 0.0),
    "a table missing": Case(PEOPLE, PEOPLE + CITIES, {}, 0.0),
    # official convert_to_csvs swallows the failed read: 0 tables against 1 (older revisions paired by position)
    "the table under another name": Case(
        PEOPLE.replace(" t(", " other(").replace("into t ", "into other "), PEOPLE, {}, 0.0
    ),
    # `SELECT * FROM my table` fails on both sides and ends the reading: only `t` is compared
    "a name that needs quoting, second": Case(
        PEOPLE + 'create table "my table"(c int); insert into "my table" values (9);',
        PEOPLE + 'create table "my table"(c int); insert into "my table" values (1);',
        {},
        1.0,
    ),
    "a name that needs quoting, first": Case(
        'create table "my table"(c int); insert into "my table" values (1);' + PEOPLE,
        'create table "my table"(c int); insert into "my table" values (1);' + PEOPLE,
        {},
        0.0,
    ),
    "a keyword as a name": Case(
        'create table "order"(c int); insert into "order" values (1);',
        'create table "order"(c int); insert into "order" values (1);',
        {},
        0.0,
    ),
    "ignore_order, text of another case": Case(
        "create table t(a text); insert into t values ('b'), ('A');",
        "create table t(a text); insert into t values ('a'), ('B');",
        {"ignore_order": [True]},
        1.0,
    ),
    "same 0.01 bucket": Case(
        "create table t(a real); insert into t values (0.015);",
        "create table t(a real); insert into t values (0.025);",
        {},
        1.0,
    ),
    "an infinite number": Case(
        "create table t(a real); insert into t values (9e999);",
        "create table t(a real); insert into t values (9e999);",
        {},
        0.0,
    ),
    "empty tables": Case("create table t(a int);", "create table t(a int);", {}, 0.0),
    "sqlite_sequence is a table too": Case(
        "create table t(id integer primary key autoincrement, a text); insert into t(a) values ('x');",
        "create table t(id integer primary key autoincrement, a text); insert into t(a) values ('x');",
        {},
        1.0,
    ),
    "condition_tabs": Case(
        PEOPLE + CITIES, PEOPLE + CITIES.replace("1.5", "2.5"), {"condition_tabs": ["t"]}, 1.0
    ),
    "condition_cols": Case(PEOPLE.replace("'x'", "'q'"), PEOPLE, {"condition_cols": [[0]]}, 1.0),
    "condition_cols shorter than the tables": Case(
        PEOPLE + CITIES, PEOPLE + CITIES, {"condition_cols": [[0]]}, 0.0
    ),
    "an extra predicted table": Case(PEOPLE + CITIES, PEOPLE, {}, 1.0),
    "divide within a table": Case(PEOPLE.replace("'x'", "'q'"), PEOPLE, {}, 0.5),
}


def _database(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as connection:
        connection.executescript(script)
    connection.close()
    return path


@pytest.mark.parametrize("name", DATABASES)
def test_compat_equals_the_official_compare_sqlite(tmp_path: Path, official: ModuleType, name: str) -> None:
    case = DATABASES[name]
    assert isinstance(case.gold, str)
    # the official function writes a CSV per table beside each database: its own copies, in their own folders
    oracle = run_official(
        official.compare_sqlite,
        str(_database(tmp_path / "official" / "pred" / "db.sqlite", case.predicted)),
        str(_database(tmp_path / "official" / "gold" / "db.sqlite", case.gold)),
        **case.options,
    )
    assert oracle == pytest.approx(case.official)
    options = dict(case.options)
    if "condition_tabs" in options:
        options["tables"] = options.pop("condition_tabs")
    ours = score_database(
        _database(tmp_path / "ours" / "pred" / "db.sqlite", case.predicted),
        _database(tmp_path / "ours" / "gold" / "db.sqlite", case.gold),
        mode="compat",
        **options,
    )
    assert ours.value == pytest.approx(case.official), ours.explanation
