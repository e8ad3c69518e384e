"""Near misses scored beside the official Spider2-V evaluator (xlang-ai/Spider2-V at c2a3a6c,
desktop_env/evaluators/metrics/, Apache-2.0): each expected value is what the official function returned
on the same input, with the official line that decides it quoted in a comment."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import nbformat
import openpyxl
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.styles import PatternFill

from .test_scorers import BOOK, BOOK_GOLD, _score, _table


def _dbt_database(path: Path, value: int, schema: str) -> Path:
    """A DuckDB file as dbt leaves it: the model in schema `schema`, which may be the file's own name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as connection:
        catalog = path.stem
        connection.execute(f"create schema {catalog}.{schema}")
        connection.execute(f"create table {catalog}.{schema}.dim_customers as select {value} as id")
    return path


@pytest.mark.parametrize("schema", ["email_address", "snapshots"])
@pytest.mark.parametrize(("value", "official"), [(1, 1.0), (2, 0.0)])
def test_check_local_database_with_a_schema_named_like_the_file(
    tmp_path: Path, schema: str, value: int, official: float
) -> None:
    # official check_local_duckdb: `conn1.execute(f'set schema to {schema_name}')`, then
    # `SELECT * FROM {table_name}` unqualified: the gold itself scores 1, a changed row 0
    name = f"{schema}.duckdb"
    gold = _dbt_database(tmp_path / "gold" / name, 1, schema)
    mine = _dbt_database(tmp_path / "mine" / name, value, schema)
    score = _score(
        tmp_path, "check_local_database", result={"kind": "file", "path": name},
        expected={"kind": "gold", "path": name}, files={name: mine}, gold={name: gold},
        check_type=["table-schema-content"], schema_name=schema,
    )  # fmt: skip
    assert score.value == official, score.explanation


def _one_value_book(path: Path, value: object) -> Path:
    book = openpyxl.Workbook()
    book.active.append(["x"])
    book.active.append([value])
    book.save(path)
    return path


@pytest.mark.parametrize(
    ("gold", "mine", "precision", "official"),
    [
        # official compare_table: `sheet1 = sheet1.round(error_limit)` with `error_limit = r.get("precision", 4)`
        (1.2345, 1.24, None, 0.0),
        (2.5, 2.50001, None, 1.0),
        (1.2345, 1.23449, None, 1.0),
        (1.2345, 1.24, 1, 1.0),
    ],
)
def test_sheet_data_rounds_to_the_rules_precision(
    tmp_path: Path, gold: float, mine: float, precision: int | None, official: float
) -> None:
    rule = {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    if precision is not None:
        rule["precision"] = precision
    books = [_one_value_book(tmp_path / name, value) for name, value in (("m.xlsx", mine), ("g.xlsx", gold))]
    assert _table(tmp_path, *books, [rule]).value == official


def _notebook(path: Path, *, stderr: bool = False, png: str = "AAAA", count: int = 1, pip: bool = False,
              stdout: str = "hello\n", result: str = "42") -> Path:  # fmt: skip
    outputs = []
    if pip:
        outputs.append(
            new_output("stream", name="stdout", text="Requirement already satisfied: pandas in /usr\n")
        )
    outputs.append(new_output("stream", name="stdout", text=stdout))
    if stderr:
        outputs.append(new_output("stream", name="stderr", text="FutureWarning: something\n"))
    outputs.append(new_output("execute_result", data={"text/plain": result}, execution_count=count))
    figure = {"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"}
    outputs.append(new_output("display_data", data=figure))
    cell = new_code_cell("print('hello'); 42", execution_count=count, outputs=outputs)
    nbformat.write(new_notebook(cells=[new_markdown_cell("# t"), cell]), path)
    return path


@pytest.mark.parametrize(
    ("change", "official"),
    [
        # official compare_notebook_outputs keeps `output['name'] == 'stdout'` (less pip's
        # 'Requirement already satisfied:' in the result) and `'text/plain' in output['data']`, and
        # compares streams whole and results by `['data']['text/plain']`
        ({"stderr": True}, 1.0),
        ({"png": "BBBB"}, 1.0),
        ({"count": 7}, 1.0),
        ({"pip": True}, 1.0),
        ({"stdout": "hello!\n"}, 0.0),
        ({"result": "43"}, 0.0),
    ],
)
def test_notebook_outputs_compare_stdout_and_text_results(
    tmp_path: Path, change: dict, official: float
) -> None:
    gold, mine = _notebook(tmp_path / "gold.ipynb"), _notebook(tmp_path / "mine.ipynb", **change)
    score = _score(
        tmp_path, "compare_notebook_outputs", result={"kind": "file", "path": "nb.ipynb"},
        expected={"kind": "gold", "path": "gold.ipynb"}, files={"nb.ipynb": mine}, gold={"gold.ipynb": gold},
    )  # fmt: skip
    assert score.value == official, score.explanation


@pytest.mark.parametrize(
    ("mine", "official"),
    [
        # official compare_csv: `open(result, encoding='utf-8', errors='ignore')`: the stray byte is dropped
        (b"name,city\nJos\xe9,Paris\n", 1.0),
        (b"name,city\nJose,Paris\n", 0.0),
    ],
)
def test_compare_csv_drops_bytes_that_are_not_utf8(tmp_path: Path, mine: bytes, official: float) -> None:
    (tmp_path / "mine.csv").write_bytes(mine)
    (tmp_path / "gold.csv").write_bytes(b"name,city\nJos,Paris\n")
    score = _score(
        tmp_path, "compare_csv", result={"kind": "file", "path": "out.csv"},
        expected={"kind": "gold", "path": "gold.csv"}, files={"out.csv": tmp_path / "mine.csv"},
        gold={"gold.csv": tmp_path / "gold.csv"},
    )  # fmt: skip
    assert score.value == official


def _chart_book(path: Path, kind: str) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["a", 1], ["b", 2]):
        sheet.append(row)
    chart = BarChart() if kind == "bar" else LineChart()
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=2))
    sheet.add_chart(chart, "D2")
    book.save(path)
    return path


# official load_charts: `info["direction"] = ch.barDir`, which raises AttributeError on a line chart
@pytest.mark.parametrize(("kind", "official"), [("bar", 1.0), ("line", 0.0)])
def test_chart_direction_fails_on_charts_without_one(tmp_path: Path, kind: str, official: float) -> None:
    rule = {"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["direction"]}
    books = [_chart_book(tmp_path / f"{name}.xlsx", kind) for name in ("mine", "gold")]
    assert _table(tmp_path, *books, [rule]).value == official


def _kinds_book(path: Path) -> Path:
    """A text cell (openpyxl writes it inline), a boolean, a date and a number with a solid red fill."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet["A1"], sheet["B1"], sheet["C1"], sheet["D1"] = "text", True, date(2024, 1, 15), 2.5
    sheet["D1"].fill = PatternFill(fill_type="solid", fgColor="FFFF0000")
    book.save(path)
    return path


@pytest.mark.parametrize(
    ("coordinate", "prop", "ref", "official", "corrected"),
    [
        # official read_cell_value: `if "@t" not in cell["c"] or cell["c"]["@t"] == "n": return float(...)`,
        # "s" and "str" read, any other type (b, inlineStr) falls through to None
        ("C1", "value", 45306.0, 1.0, 0.0),  # a date is its serial number officially
        ("B1", "value", True, 0.0, 1.0),  # a boolean reads None officially
        ("A1", "value", "text", 0.0, 1.0),  # openpyxl's inline string reads None officially
        ("D1", "value", 2.5, 1.0, 1.0),
        # official _read_cell_style: `(diff_style or cell).fill.bgColor.rgb`; a solid fill shows fgColor
        ("D1", "bgcolor", "FFFF0000", 0.0, 1.0),
        ("D1", "bgcolor", "00000000", 1.0, 0.0),
        ("D1", "fgcolor", "FFFF0000", 1.0, 1.0),
    ],
)
def test_cell_values_and_colours_in_both_modes(
    tmp_path: Path, coordinate: str, prop: str, ref: Any, official: float, corrected: float
) -> None:
    book = _kinds_book(tmp_path / "kinds.xlsx")
    rule = {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": coordinate,
        "props": {prop: {"method": "eq", "ref": ref}},
    }
    for mode, want in (("compat", official), ("corrected", corrected)):
        score = _score(
            tmp_path, "compare_table", result={"kind": "file", "path": "Book.xlsx"}, files={"Book.xlsx": book},
            rules=[rule], mode=mode,
        )  # fmt: skip
        assert (mode, score.value) == (mode, want), score.explanation


def test_dbt_profiles_reads_the_first_profiles_file_found(tmp_path: Path) -> None:
    # official get_dbt_profiles: `for fp in config["dirs"]: ... get_vm_file(fp + '/profiles.yml')`, first found
    project = _write_text(tmp_path / "project.yml", "shop:\n  target: dev\n")
    wrong = _write_text(tmp_path / "wrong.yml", "shop:\n  target: prod\n")
    result = {"kind": "first_file", "paths": [".dbt/profiles.yml", "projects/shop/profiles.yml"]}
    rules = {"kind": "rule", "value": [["match", ["shop", "target"], "dev"]]}

    def score(files: dict[str, Path]) -> float:
        home = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
        home.mkdir()
        return _score(home, "check_yaml_file", result=result, expected=rules, files=files).value

    assert score({"projects/shop/profiles.yml": project}) == 1.0
    assert score({".dbt/profiles.yml": wrong, "projects/shop/profiles.yml": project}) == 0.0  # ~/.dbt first
    assert score({}) == 0.0


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _image(path: Path, colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> Path:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).rectangle([5, 5, size[0] // 2, size[1] // 2], fill=colour)
    image.save(path)
    return path


def test_compare_jupyterlab_images_by_green_histogram(tmp_path: Path) -> None:
    # official compare_jupyterlab_images: cv2.compareHist(H1, H2, 0) of channel [1]; `if similarity == 1.0`
    gold = _image(tmp_path / "gold.png", (200, 40, 40))

    def score(mine: Path) -> float:
        return _score(
            tmp_path, "compare_jupyterlab_images", result={"kind": "file", "path": "result.png"},
            expected={"kind": "gold", "path": "gold.png"}, files={"result.png": mine}, gold={"gold.png": gold},
        ).value  # fmt: skip

    assert score(_image(tmp_path / "same.png", (200, 40, 40))) == 1.0
    assert (
        score(_image(tmp_path / "red_other.png", (90, 40, 40))) == 1.0
    )  # same green channel: officially 1 too
    assert score(_image(tmp_path / "green.png", (40, 200, 40))) == 0.0


# ---- beside the official code itself (tests/fixtures/spider2v_official, run as the oracle) ----------------

OFFICIAL = Path(__file__).parents[2] / "fixtures" / "spider2v_official"


class _NoFormulas:
    """Stands for the `formulas` package, which is not installed here: `load_xlsx_styles` makes a parser
    before it reads conditional formats, and only an `expression` format would use it."""

    class Parser:
        def ast(self, *_: Any) -> Any:
            raise RuntimeError("formulas is not installed: this case cannot be run through the oracle")


def _official_utils(*names: str) -> dict[str, Any]:
    """The named functions of the official metrics/utils.py, compiled alone with the names they use."""
    import ast
    import logging
    import re
    import typing

    from openpyxl.cell.cell import Cell
    from openpyxl.formatting.formatting import ConditionalFormattingList
    from openpyxl.styles.differential import DifferentialStyle
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.cell_range import CellRange
    from openpyxl.worksheet.worksheet import Worksheet

    path = OFFICIAL / "utils.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    chosen = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names]
    assert sorted(node.name for node in chosen) == sorted(names)
    namespace: dict[str, Any] = {name: getattr(typing, name) for name in typing.__all__}
    namespace.update(
        re=re, logger=logging.getLogger("official"), formulas=_NoFormulas, Cell=Cell, Worksheet=Worksheet,
        DifferentialStyle=DifferentialStyle, ConditionalFormattingList=ConditionalFormattingList,
        get_column_letter=get_column_letter, CellRange=CellRange,
    )  # fmt: skip
    exec(compile(ast.Module(body=chosen, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def _outcome(read: Any) -> Any:
    """What a reader gives: its value, or that it raised."""
    try:
        return read()
    except Exception:
        return "raises"


def _fonts_book(path: Path, colour: str | None, *, cell_is: bool = False) -> Path:
    """Arial 10 everywhere; `colour=None` leaves the fonts without a colour, as LibreOffice saves them."""
    from openpyxl.formatting.rule import CellIsRule
    from openpyxl.styles import Font

    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["name", "score"], ["a", 3], ["b", 9]):
        sheet.append(row)
    for row in sheet.iter_rows():
        for cell in row:
            cell.font = Font(name="Arial", size=10, color=colour)
    if cell_is:  # what LibreOffice's "Cell value is greater than 5" writes
        rule = CellIsRule(operator="greaterThan", formula=["5"], font=Font(color="FF00FF00"))
        sheet.conditional_formatting.add("B2:B3", rule)
    book.save(path)
    return path


STYLE = {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_color", "font_name"]}


def _check_cell(prop: str, ref: Any) -> dict[str, Any]:
    return {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": "B2",
        "props": {prop: {"method": "eq", "ref": ref}},
    }


@pytest.mark.parametrize(
    ("colour", "cell_is", "rule", "official", "corrected"),
    [
        # official _read_cell_style: `return (diff_style or cell).font.color.rgb if cell.value is not None`:
        # a font without a colour has `color` None, AttributeError, and the task scores 0
        (None, False, STYLE, 0.0, 1.0),
        ("FF000000", False, STYLE, 1.0, 1.0),
        (None, False, _check_cell("font_color", "FF000000"), 0.0, 0.0),
        ("FF000000", False, _check_cell("font_color", "FF000000"), 1.0, 1.0),
        (None, False, _check_cell("font_name", "Arial"), 1.0, 1.0),  # the colour is not read
        # official load_xlsx_styles: `if r.type == "expression": ... else: raise NotImplementedError(...)`
        ("FF000000", True, STYLE, 0.0, 1.0),
    ],
)
def test_fonts_without_colour_and_cell_value_formats_as_officially(
    tmp_path: Path, colour: str | None, cell_is: bool, rule: dict, official: float, corrected: float
) -> None:
    mine = _fonts_book(tmp_path / "mine.xlsx", colour, cell_is=cell_is)
    gold = _fonts_book(tmp_path / "gold.xlsx", colour, cell_is=cell_is)
    for mode, want in (("compat", official), ("corrected", corrected)):
        (tmp_path / mode).mkdir()
        score = _score(
            tmp_path / mode, "compare_table", result=BOOK, expected=BOOK_GOLD, files={"Book.xlsx": mine},
            gold={"Book_gold.xlsx": gold}, rules=[rule], mode=mode,
        )  # fmt: skip
        assert (mode, score.value) == (mode, want), score.explanation


@pytest.mark.parametrize(("colour", "cell_is"), [(None, False), ("FF000000", False), ("FFFF0000", True)])
def test_the_style_reader_equals_the_official_one(tmp_path: Path, colour: str | None, cell_is: bool) -> None:
    from daharness.families.workflow.scorers.xlsx import _style, _styles

    official = _official_utils("_read_cell_style", "load_xlsx_styles")
    path = _fonts_book(tmp_path / "book.xlsx", colour, cell_is=cell_is)
    book, cached = openpyxl.load_workbook(path), openpyxl.load_workbook(path, data_only=True)
    sheet = book.active
    props = ["font_color", "font_name", "font_bold", "font_size", "number_format", "bgcolor", "fgcolor"]
    for row in sheet.iter_rows():
        for cell in row:
            for prop in props:
                theirs = _outcome(lambda: official["_read_cell_style"](prop, cell))  # noqa: B023
                ours = _outcome(lambda: _style(prop, cell, compat=True))  # noqa: B023
                assert (cell.coordinate, prop, ours) == (cell.coordinate, prop, theirs)
    theirs = _outcome(lambda: official["load_xlsx_styles"](book, sheet.title, str(path), props=props))
    ours = _outcome(lambda: _styles(sheet, cached.active, props, compat=True))
    assert ours == theirs
    assert theirs == "raises" if colour is None or cell_is else isinstance(theirs, dict)


@pytest.fixture(scope="module")
def official_dbt() -> Any:
    from helpers import load_module

    return load_module(OFFICIAL / "dbt.py", "spider2v_official_dbt")


def _named_database(
    path: Path, table: str, value: int, schema: str = "main", db_type: str = "duckdb"
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    quoted = f'"{schema}"."{table}"' if schema != "main" else f'"{table}"'
    if db_type == "duckdb":
        with duckdb.connect(str(path)) as connection:
            if schema != "main":
                connection.execute(f'create schema "{schema}"')
            connection.execute(f"create table {quoted} as select {value} as id")
    else:
        import sqlite3

        with sqlite3.connect(path) as connection:
            connection.execute(f"create table {quoted} (id int)")
            connection.execute(f"insert into {quoted} values ({value})")
        connection.close()
    return path


@pytest.mark.parametrize(
    ("table", "schema", "db_type", "value", "official", "corrected"),
    [
        # official check_local_duckdb: `conn1.execute(f"PRAGMA table_info({table_name})")` and
        # `f"SELECT * FROM {table_name}"`, names bare: a name that needs quoting raises, caught, `return 0`
        ("sales", "main", "duckdb", 1, 1.0, 1.0),
        ("sales", "main", "duckdb", 2, 0.0, 0.0),
        ("Sales", "main", "duckdb", 1, 1.0, 1.0),
        ("my sales", "main", "duckdb", 1, 0.0, 1.0),
        ("order", "main", "duckdb", 1, 0.0, 1.0),
        ("sales-2024", "main", "duckdb", 1, 0.0, 1.0),
        ("my sales", "main", "sqlite3", 1, 0.0, 1.0),
        ("sales", "main", "sqlite3", 1, 1.0, 1.0),
        # `conn1.execute(f'set schema to {schema_name}')`
        ("sales", "analytics", "duckdb", 1, 1.0, 1.0),
        ("sales", "my analytics", "duckdb", 1, 0.0, 1.0),
    ],
)
def test_check_local_database_with_names_that_need_quoting(
    tmp_path: Path, official_dbt: Any, table: str, schema: str, db_type: str, value: int, official: float,
    corrected: float,
) -> None:  # fmt: skip
    name = "shop.duckdb" if db_type == "duckdb" else "shop.db"
    options: dict[str, Any] = {"db_type": db_type, "check_type": ["table-schema-content"]}
    if schema != "main":
        options["schema_name"] = schema

    def databases(folder: str) -> tuple[Path, Path]:
        mine = _named_database(tmp_path / folder / "mine" / name, table, value, schema, db_type)
        return mine, _named_database(tmp_path / folder / "gold" / name, table, 1, schema, db_type)

    mine, gold = databases("official")
    assert float(official_dbt.check_local_database(str(mine), str(gold), **options)) == official
    mine, gold = databases("ours")
    for mode, want in (("compat", official), ("corrected", corrected)):
        (tmp_path / mode).mkdir()
        score = _score(
            tmp_path / mode, "check_local_database", result={"kind": "file", "path": name},
            expected={"kind": "gold", "path": name}, files={name: mine}, gold={name: gold}, mode=mode, **options,
        )  # fmt: skip
        assert (mode, score.value) == (mode, want), score.explanation
