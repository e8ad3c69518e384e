"""Every Spider2-V evaluator function on real files, with an input that passes and one that fails."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import nbformat
import openpyxl
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.styles import Font

from daharness.core.backend import Snapshot
from daharness.core.registry import scorers
from daharness.core.score import Score, combine
from daharness.core.scoring import ScoringContext
from daharness.core.submission import Submission
from daharness.core.task import Conjunction, Gold, GoldFile, ScorerSpec, Task
from daharness.families.workflow.scorers.xlsx import match_rule
from daharness.scoring import score_submission

SHARED = (
    Path(os.environ.get("DAHARNESS_SHARED") or Path(__file__).parents[4] / "shared")
    / "spider2v-public"
    / "examples"
)


def _score(
    tmp_path: Path, func: str, *, result: dict[str, Any], expected: dict[str, Any] | None = None,
    files: dict[str, Path] | None = None, gold: dict[str, Path] | None = None, evidence: dict[str, Any] | None = None,
    mode: str = "", **options: Any,
) -> Score:  # fmt: skip
    """Score one evaluator function: `files` are the agent's (by home path), `gold` the hidden ones."""
    root = tmp_path / "home"
    root.mkdir(exist_ok=True)
    for name, source in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / name)
    names = frozenset(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    spec = {"result": result, "expected": expected or {"kind": "none"}, **options}
    task = Task(
        id="t", suite="s", family="workflow", instructions=["x"], workdir="/home/user",
        scorers=[ScorerSpec(name=f"spider2v.{func}", options=spec)],
        gold=Gold(files=[GoldFile(name=n, source=p) for n, p in (gold or {}).items()]),
    )  # fmt: skip
    submission = Submission(evidence={"script_outputs": evidence or {}})
    entry = scorers.get(f"spider2v.{func}")
    context = ScoringContext(task, submission, Snapshot(root, names), mode)
    return entry.fn(context, entry.parse_options(spec, "test"))


FILE = {"kind": "file", "path": "out.txt"}
GOLD = {"kind": "gold", "path": "gold.txt"}


def _compare_files(tmp_path: Path, func: str, out: Path, gold: Path, **options: Any) -> Score:
    """Score the agent's `out.txt` against the hidden `gold.txt` with one evaluator function."""
    return _score(
        tmp_path, func, result=FILE, expected=GOLD, files={"out.txt": out}, gold={"gold.txt": gold}, **options
    )


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---- general ------------------------------------------------------------------------------------------


def test_check_include_exclude_reads_the_check_scripts_output(tmp_path: Path) -> None:
    rules = {"kind": "rule", "value": {"include": ["succeed"], "exclude": ["failed"]}}
    script = {"kind": "script_output", "path": "eval.sh"}
    assert (
        _score(
            tmp_path,
            "check_include_exclude",
            result=script,
            expected=rules,
            evidence={"eval.sh": "dbt run succeed\n"},
        ).value
        == 1
    )
    assert (
        _score(
            tmp_path,
            "check_include_exclude",
            result=script,
            expected=rules,
            evidence={"eval.sh": "dbt run failed\n"},
        ).value
        == 0
    )
    missing = _score(tmp_path, "check_include_exclude", result=script, expected=rules)
    assert missing.value == 0 and "gave no output" in missing.explanation


def test_exact_match_and_file_existence(tmp_path: Path) -> None:
    script = {"kind": "script_output", "path": "eval.sh"}
    rule = {"kind": "rule", "value": {"expected": "42"}}
    assert (
        _score(tmp_path, "exact_match", result=script, expected=rule, evidence={"eval.sh": "42"}).value == 1
    )
    assert (
        _score(tmp_path, "exact_match", result=script, expected=rule, evidence={"eval.sh": "42\n"}).value == 0
    )
    present = _write(tmp_path / "a.txt", "x")
    assert _score(tmp_path, "check_file_existence", result=FILE, files={"out.txt": present}).value == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _score(empty, "check_file_existence", result=FILE).value == 0


def test_text_files_compared_exactly_with_options_and_by_similarity(tmp_path: Path) -> None:
    mine = _write(tmp_path / "mine.txt", "Hello   World\nline two\n")
    gold = _write(tmp_path / "gold.txt", "hello world line two")
    assert _compare_files(tmp_path, "compare_text_file", mine, gold).value == 0
    relaxed = _compare_files(tmp_path, "compare_text_file", mine, gold, ignore_blanks=True, ignore_case=True)
    assert relaxed.value == 1
    three = _write(tmp_path / "three.txt", "a\nb\nc\n")
    two = _write(tmp_path / "two.txt", "a\nb\nX\n")
    ratio = _compare_files(tmp_path, "diff_text_file", two, three)
    assert ratio.value == pytest.approx(2 / 3)
    same = _compare_files(tmp_path, "diff_text_file", three, three)
    assert same.value == 1


def test_json_and_csv_files(tmp_path: Path) -> None:
    gold_json = _write(tmp_path / "g.json", json.dumps({"a": [1, 2], "b": "x"}))
    spaced = _write(tmp_path / "m.json", '{"b": "x",\n "a": [1, 2]}')
    other = _write(tmp_path / "o.json", '{"b": "x", "a": [2, 1]}')
    assert _compare_files(tmp_path, "compare_json_file", spaced, gold_json).value == 1
    assert _compare_files(tmp_path, "compare_json_file", other, gold_json).value == 0
    gold_csv = _write(tmp_path / "g.csv", "name,n\nb,2\na,1\n")
    shuffled = _write(tmp_path / "s.csv", "name,n\na,1\nb,2\n")
    assert _compare_files(tmp_path, "compare_csv", shuffled, gold_csv).value == 0
    assert _compare_files(tmp_path, "compare_csv", shuffled, gold_csv, ignore_order=True).value == 1
    assert _compare_files(tmp_path, "compare_csv", gold_csv, gold_csv).value == 1


# ---- dbt ----------------------------------------------------------------------------------------------


def _duckdb(path: Path, rows: list[tuple[int, str]], view: bool = True) -> Path:
    with duckdb.connect(str(path)) as connection:
        connection.execute("create table customers (id integer, name varchar)")
        connection.executemany("insert into customers values (?, ?)", rows)
        if view:
            connection.execute("create view named as select name from customers")
    return path


def test_check_local_database_on_duckdb(tmp_path: Path) -> None:
    gold = _duckdb(tmp_path / "gold.duckdb", [(1, "ann"), (2, "bo")])
    same = _duckdb(tmp_path / "same.duckdb", [(1, "ann"), (2, "bo")])
    changed = _duckdb(tmp_path / "changed.duckdb", [(1, "ann"), (2, "bob")])
    no_view = _duckdb(tmp_path / "noview.duckdb", [(1, "ann"), (2, "bo")], view=False)
    result, expected = {"kind": "file", "path": "db.duckdb"}, {"kind": "gold", "path": "gold.duckdb"}
    golds = {"gold.duckdb": gold}

    def score(mine: Path, **options: Any) -> float:
        return _score(
            tmp_path,
            "check_local_database",
            result=result,
            expected=expected,
            files={"db.duckdb": mine},
            gold=golds,
            **options,
        ).value

    assert score(same, check_type=["table-schema-content"]) == 1
    assert score(changed, check_type=["table-schema-content"]) == 0
    assert score(changed) == 1  # the default compares table and view names only
    assert score(no_view) == 0
    assert score(no_view, check_type=["table-schema-content"], table_targets=["customers"]) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _score(empty, "check_local_database", result=result, expected=expected, gold=golds).value == 0


def test_check_local_database_on_sqlite_and_a_schema(tmp_path: Path) -> None:
    def make(path: Path, value: int) -> Path:
        with sqlite3.connect(path) as connection:
            connection.execute("create table t (x integer)")
            connection.execute("insert into t values (?)", (value,))
        return path

    result, expected = {"kind": "file", "path": "db.sqlite"}, {"kind": "gold", "path": "gold.sqlite"}
    gold = make(tmp_path / "gold.sqlite", 1)
    for mine, want in ((make(tmp_path / "a.sqlite", 1), 1), (make(tmp_path / "b.sqlite", 2), 0)):
        value = _score(tmp_path, "check_local_database", result=result, expected=expected, files={"db.sqlite": mine},
                       gold={"gold.sqlite": gold}, db_type="sqlite3", check_type=["table-schema-content"]).value  # fmt: skip
        assert value == want
    with duckdb.connect(str(tmp_path / "s.duckdb")) as connection:
        connection.execute("create schema analytics; create table analytics.orders as select 1 as id")
    plain = _duckdb(tmp_path / "plain.duckdb", [(1, "a")])
    options = {"check_type": ["table-schema-content"], "schema_name": "analytics"}
    duck = {"kind": "file", "path": "db.duckdb"}, {"kind": "gold", "path": "g.duckdb"}
    golds = {"g.duckdb": tmp_path / "s.duckdb"}
    assert (
        _score(
            tmp_path,
            "check_local_database",
            result=duck[0],
            expected=duck[1],
            files={"db.duckdb": tmp_path / "s.duckdb"},
            gold=golds,
            **options,
        ).value
        == 1
    )
    missing = _score(
        tmp_path,
        "check_local_database",
        result=duck[0],
        expected=duck[1],
        files={"db.duckdb": plain},
        gold=golds,
        **options,
    )
    assert missing.value == 0 and "schema analytics" in missing.explanation


def test_check_yaml_file_rules(tmp_path: Path) -> None:
    schema = _write(
        tmp_path / "schema.yml",
        "models:\n  - name: orders\n    columns:\n      - name: id\n        tests: [unique, not_null]\n",
    )
    rule = {"kind": "rule", "value": [["contain", ["models", ["name", "orders"], "columns", "0", "tests"], "unique"],
                                      ["match", ["models", 0, "name"], "orders"], ["not_null", ["models"], None]]}  # fmt: skip
    result = {"kind": "file", "path": "models/schema.yml"}
    assert (
        _score(
            tmp_path, "check_yaml_file", result=result, expected=rule, files={"models/schema.yml": schema}
        ).value
        == 1
    )
    wrong = {"kind": "rule", "value": [["in", ["models", ["name", "orders"], "name"], ["customers"]]]}
    assert (
        _score(
            tmp_path, "check_yaml_file", result=result, expected=wrong, files={"models/schema.yml": schema}
        ).value
        == 0
    )
    absent = {"kind": "rule", "value": [["match", ["models", ["name", "payments"], "name"], "payments"]]}
    failed = _score(
        tmp_path, "check_yaml_file", result=result, expected=absent, files={"models/schema.yml": schema}
    )
    assert failed.value == 0 and failed.explanation.startswith("evaluator error")


# ---- notebooks ----------------------------------------------------------------------------------------


def _notebook(path: Path, outputs: list[Any], source: str = "print(1)", count: int | None = 1) -> Path:
    cell = new_code_cell(source, execution_count=count, outputs=outputs)
    nbformat.write(new_notebook(cells=[new_markdown_cell("# t"), cell]), str(path))
    return path


NB, NB_GOLD = {"kind": "file", "path": "Desktop/n.ipynb"}, {"kind": "gold", "path": "n_gold.ipynb"}


def test_compare_notebook_outputs_and_cells(tmp_path: Path) -> None:
    gold = _notebook(tmp_path / "gold.ipynb", [new_output("stream", name="stdout", text="1\n")])
    right = _notebook(tmp_path / "right.ipynb", [new_output("stream", name="stdout", text="1\n")], count=7)
    wrong = _notebook(tmp_path / "wrong.ipynb", [new_output("stream", name="stdout", text="2\n")])
    other_code = _notebook(tmp_path / "code.ipynb", [], source="print(2)")
    golds = {"n_gold.ipynb": gold}

    def score(func: str, mine: Path) -> float:
        return _score(
            tmp_path, func, result=NB, expected=NB_GOLD, files={"Desktop/n.ipynb": mine}, gold=golds
        ).value

    assert score("compare_notebook_outputs", right) == 1
    assert score("compare_notebook_outputs", wrong) == 0
    assert score("compare_notebook_cells", wrong) == 1
    assert score("compare_notebook_cells", other_code) == 0
    assert score("compare_ipynb_files", gold) == 1
    assert score("compare_ipynb_files", wrong) == 0


def test_executed_and_cleared_cells(tmp_path: Path) -> None:
    ran = _notebook(tmp_path / "ran.ipynb", [], count=1)
    fresh = _notebook(tmp_path / "fresh.ipynb", [], count=None)
    none_left = {"kind": "rule", "value": {"expected": []}}

    def score(func: str, mine: Path) -> float:
        return _score(tmp_path, func, result=NB, expected=none_left, files={"Desktop/n.ipynb": mine}).value

    assert score("is_jupyter_cell_executed", ran) == 1
    assert score("is_jupyter_cell_executed", fresh) == 0
    assert score("are_jupyter_outputs_cleared", fresh) == 1
    assert score("are_jupyter_outputs_cleared", ran) == 0


# ---- workbooks ----------------------------------------------------------------------------------------

BOOK, BOOK_GOLD = {"kind": "file", "path": "Book.xlsx"}, {"kind": "gold", "path": "Book_gold.xlsx"}


def _book(path: Path, total: float, *, chart: str = "bar", title: str = "Totals", red: bool = False) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Data"
    for row in (["Region", "Total"], ["North", 10.0], ["South", total]):
        sheet.append(row)
    if red:
        sheet["B3"].font = Font(color="FFFF0000")
    made = BarChart() if chart == "bar" else LineChart()
    made.title = title
    made.add_data(Reference(sheet, min_col=2, min_row=2, max_row=3))
    sheet.add_chart(made, "D2")
    sheet.freeze_panes = "A2"
    book.save(path)
    return path


def _table(tmp_path: Path, mine: Path, gold: Path, rules: list[dict[str, Any]]) -> Score:
    return _score(tmp_path, "compare_table", result=BOOK, expected=BOOK_GOLD, files={"Book.xlsx": mine},
                  gold={"Book_gold.xlsx": gold}, rules=rules)  # fmt: skip


def test_compare_table_sheet_data_chart_style_freeze_and_cells(tmp_path: Path) -> None:
    gold = _book(tmp_path / "gold.xlsx", 20.4, red=True)
    data = [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
    assert _table(tmp_path, _book(tmp_path / "near.xlsx", 20.40001), gold, data).value == 1  # to 4 decimals
    assert _table(tmp_path, _book(tmp_path / "far.xlsx", 23.0), gold, data).value == 0
    chart = [
        {"type": "chart", "sheet_idx0": "RNData", "sheet_idx1": "ENData", "chart_props": ["type", "title"]}
    ]
    assert _table(tmp_path, _book(tmp_path / "c1.xlsx", 20.4), gold, chart).value == 1
    assert _table(tmp_path, _book(tmp_path / "c2.xlsx", 20.4, chart="line"), gold, chart).value == 0
    assert _table(tmp_path, _book(tmp_path / "c3.xlsx", 20.4, title="Other"), gold, chart).value == 0
    style = [{"type": "style", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "props": ["font_color"]}]
    assert _table(tmp_path, _book(tmp_path / "s1.xlsx", 20.4, red=True), gold, style).value == 1
    assert _table(tmp_path, _book(tmp_path / "s2.xlsx", 20.4), gold, style).value == 0
    freeze = [{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}, {"type": "sheet_name"}]
    assert _table(tmp_path, _book(tmp_path / "f.xlsx", 20.4), gold, freeze).value == 1
    cell = [
        {
            "type": "check_cell",
            "sheet_idx": "RNData",
            "coordinate": "B3",
            "props": {"value": {"method": "approx:0.5", "ref": 20}},
        }
    ]
    assert _table(tmp_path, _book(tmp_path / "v1.xlsx", 20.2), gold, cell).value == 1
    assert _table(tmp_path, _book(tmp_path / "v2.xlsx", 21.0), gold, cell).value == 0
    missing_sheet = [{"type": "sheet_data", "sheet_idx0": "RNSummary", "sheet_idx1": "ENData"}]
    assert _table(tmp_path, gold, gold, missing_sheet).value == 0
    not_a_book = _write(tmp_path / "fake.xlsx", "not a workbook")
    assert _table(tmp_path, not_a_book, gold, data).value == 0


def test_conditional_formatting_counts_as_the_style_it_gives(tmp_path: Path) -> None:
    from openpyxl.formatting.rule import FormulaRule

    def book(path: Path, how: str) -> Path:
        made = openpyxl.Workbook()
        sheet = made.active
        for value in (3, 9, 5):
            sheet.append([value])
        if how == "rule":
            sheet.conditional_formatting.add(
                "A1:A3", FormulaRule(formula=["$A1=MAX($A$1:$A$3)"], font=Font(color="FF00FF00"))
            )
        elif how == "direct":
            sheet["A2"].font = Font(color="FF00FF00")
        made.save(path)
        return path

    style = [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_color"]}]
    gold = book(tmp_path / "gold.xlsx", "rule")
    assert _table(tmp_path, book(tmp_path / "direct.xlsx", "direct"), gold, style).value == 1
    assert _table(tmp_path, book(tmp_path / "plain.xlsx", "none"), gold, style).value == 0


@pytest.mark.skipif(
    not SHARED.is_dir(), reason="the shared Spider2-V tasks (../shared/spider2v-public) are not here"
)
def test_pivot_tables_of_official_workbooks(tmp_path: Path) -> None:
    folder = SHARED / "excel" / "51719eea-10bc-4246-a428-ac7c433dd4b3"
    gold, initial = folder / "8_BoomerangSales_gt1.xlsx", folder / "BoomerangSales.xlsx"
    pivot = [{"type": "pivot_table", "sheet_idx0": "RNSheet2", "sheet_idx1": "ENSheet2",
              "pivot_props": ["col_fields", "filter", "row_fields", "data_fields"]}]  # fmt: skip
    assert _table(tmp_path, gold, gold, pivot).value == 1
    assert _table(tmp_path, initial, gold, pivot).value == 0
    other = SHARED / "excel" / "69694b7a-d3e7-4fa3-b0a3-300fe528a193" / "gold_BoomerangSales.xlsx"
    assert _table(tmp_path, other, gold, pivot).value == 0  # a pivot of other fields


def test_match_rule_methods() -> None:
    assert match_rule("Total 12", {"method": "re.I", "ref": "total"})
    assert match_rule(3, {"method": "lt", "ref": 4}) and not match_rule(3, {"method": "gt", "ref": 4})
    assert match_rule(2.0, {"method": "range.te", "ref": [1, 2]}) and not match_rule(
        1.0, {"method": "range.te", "ref": [1, 2]}
    )
    assert match_rule('"a,b"', {"method": "str_set_eq", "ref": ["b", "a"]})


# ---- combining ----------------------------------------------------------------------------------------


def test_official_and_or_conjunctions() -> None:
    assert combine([1.0, 0.5], Conjunction.all_mean) == 0.75
    assert combine([1.0, 0.0], Conjunction.all_mean) == 0.0
    assert combine([0.0, 0.4], Conjunction.max) == 0.4


def test_an_evaluator_error_is_a_zero_with_its_reason(tmp_path: Path) -> None:
    broken = _write(tmp_path / "n.ipynb", "{not json")
    score = _score(tmp_path, "compare_ipynb_files", result=NB, expected=NB_GOLD, files={"Desktop/n.ipynb": broken},
                   gold={"n_gold.ipynb": broken})  # fmt: skip
    assert score.value == 0 and score.explanation.startswith("evaluator error: JSONDecodeError")
    task = Task(id="t", suite="s", family="workflow", instructions=["x"], conjunction=Conjunction.all_mean,
                scorers=[ScorerSpec(name="spider2v.check_file_existence", options={"result": {"kind": "file", "path": "a"}})] * 2)  # fmt: skip
    assert score_submission(task, Submission(), None).value == 0
