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

from .test_scorers import _score, _table


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
