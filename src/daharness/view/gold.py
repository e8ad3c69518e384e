"""What a sample page shows beside the score: the agent's tables against the gold tables, cell by cell
(rows and columns missing or extra), its workbooks against the gold workbooks sheet by sheet the same way,
its charts beside the gold charts, and its CSV files as tables.

The gold files are the task's own (loaded again from the suite); the agent's are the files the run saved
in its artifacts. Nothing here scores: the score and its checks stay the scorer's.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from html import escape
from pathlib import Path

MAX_ROWS = 200  # rows of a table shown on a page; the rest is counted
MAX_WORKBOOK_MB = 20  # a larger workbook is not opened to be shown
SHEET_TOLERANCE = 1e-4  # workbooks are compared to 4 decimals, as Spider2-V's compare_table rounds them


def read_csv(path: Path) -> list[list[str]]:
    """The rows of a CSV file as text (empty when it cannot be read as CSV)."""
    try:
        with path.open(newline="", encoding="utf-8", errors="replace") as handle:
            return [row for row in csv.reader(handle)]
    except (OSError, csv.Error):
        return []


def same_cell(gold: str, predicted: str, tolerance: float) -> bool:
    if gold == predicted:
        return True
    try:
        left, right = float(gold), float(predicted)
    except ValueError:
        return gold.strip() == predicted.strip()
    return math.isclose(left, right, rel_tol=tolerance, abs_tol=tolerance)


@dataclass
class TableDiff:
    columns: list[str]  # the gold columns, then the agent's extra ones
    missing_columns: list[str]
    extra_columns: list[str]
    gold_rows: int
    predicted_rows: int
    html: str
    differing_cells: int


def table_diff(gold_path: Path, predicted_path: Path, tolerance: float = 1e-6) -> TableDiff:
    """The agent's table against the gold, by column name and row position."""
    return rows_diff(read_csv(gold_path), read_csv(predicted_path), tolerance)


def rows_diff(gold: list[list[str]], predicted: list[list[str]], tolerance: float) -> TableDiff:
    """Rows of the agent's table against the gold's (their first rows name the columns), by column name
    and row position."""
    gold_head, gold_rows = (gold[0], gold[1:]) if gold else ([], [])
    mine_head, mine_rows = (predicted[0], predicted[1:]) if predicted else ([], [])
    missing = [c for c in gold_head if c not in mine_head]
    extra = [c for c in mine_head if c not in gold_head]
    columns = gold_head + extra
    where = {name: index for index, name in enumerate(mine_head)}
    header = "".join(
        f'<th class="{"missing" if c in missing else "extra" if c in extra else ""}">{escape(c)}</th>'
        for c in columns
    )
    body, differing = [], 0
    for number in range(max(len(gold_rows), len(mine_rows))):
        gold_row = gold_rows[number] if number < len(gold_rows) else None
        mine_row = mine_rows[number] if number < len(mine_rows) else None
        row_class = "missing" if mine_row is None else "extra" if gold_row is None else ""
        cells = []
        for index, column in enumerate(columns):
            expected = (
                gold_row[index]
                if gold_row is not None and index < len(gold_head) and index < len(gold_row)
                else None
            )
            got = (
                mine_row[where[column]]
                if mine_row is not None and column in where and where[column] < len(mine_row)
                else None
            )
            if expected is not None and got is not None and not same_cell(expected, got, tolerance):
                differing += 1
                theirs = f"<ins>{escape(got)}</ins>" if got else '<ins class="empty">(empty)</ins>'
                cells.append(f'<td class="differs"><del>{escape(expected)}</del> {theirs}</td>')
            else:
                shown = got if got is not None else expected
                kind = (
                    "missing"
                    if got is None and expected is not None
                    else "extra"
                    if expected is None and got is not None
                    else ""
                )
                cells.append(f'<td class="{kind}">{escape(shown or "")}</td>')
        if number < MAX_ROWS:
            body.append(f'<tr class="{row_class}"><td class="n">{number + 1}</td>{"".join(cells)}</tr>')
    more = len(body) < max(len(gold_rows), len(mine_rows))
    html = (
        f'<table class="diff"><thead><tr><th class="n">row</th>{header}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        + (f"<p class=meta>only the first {MAX_ROWS} rows are shown</p>" if more else "")
    )
    return TableDiff(columns, missing, extra, len(gold_rows), len(mine_rows), html, differing)


def diff_summary(diff: TableDiff) -> str:
    parts = [
        f"{diff.predicted_rows} of {diff.gold_rows} gold rows"
        if diff.predicted_rows != diff.gold_rows
        else "",
        f"{diff.differing_cells} {'cell differs' if diff.differing_cells == 1 else 'cells differ'}",
        f"missing columns: {', '.join(diff.missing_columns)}" if diff.missing_columns else "",
        f"extra columns: {', '.join(diff.extra_columns)}" if diff.extra_columns else "",
    ]
    return " · ".join(part for part in parts if part)


def csv_table(path: Path) -> str:
    """A CSV file the agent left, as a table (its first rows)."""
    rows = read_csv(path)
    if not rows:
        return "<p class=meta>(empty or not CSV)</p>"
    head = "".join(f"<th>{escape(c)}</th>" for c in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows[1 : MAX_ROWS + 1]
    )
    more = f"<p class=meta>{len(rows) - 1 - MAX_ROWS} more rows</p>" if len(rows) - 1 > MAX_ROWS else ""
    return f'<table class="csv"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'


@dataclass
class SheetDiff:
    sheet: str
    diff: TableDiff | None  # None: the sheet is in one workbook only
    problem: str = ""


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    if hasattr(value, "isoformat"):
        return value.isoformat()  # type: ignore[no-any-return]
    return str(value)


def read_sheets(path: Path) -> dict[str, list[list[str]]]:
    """The cells of each sheet of a workbook as text: the values last computed (what a formula showed),
    as wide as its widest row, without its empty last rows. ValueError with the reason when it is not
    readable."""
    import openpyxl  # the workflow extra's: only runs with workbooks need it

    if path.stat().st_size > MAX_WORKBOOK_MB << 20:
        raise ValueError(f"larger than {MAX_WORKBOOK_MB} MB")
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # not a workbook (or a damaged one): the page says so
        raise ValueError(f"not a workbook openpyxl reads ({type(exc).__name__})") from None
    try:
        sheets = {}
        for sheet in book.worksheets:
            rows = [[_cell_text(value) for value in row] for row in sheet.iter_rows(values_only=True)]
            while rows and not any(rows[-1]):
                rows.pop()
            width = max((i + 1 for row in rows for i, cell in enumerate(row) if cell), default=0)
            sheets[sheet.title] = [row[:width] + [""] * (width - len(row)) for row in rows]
        return sheets
    finally:
        book.close()


def workbook_diff(
    gold_path: Path, predicted_path: Path, tolerance: float = SHEET_TOLERANCE
) -> list[SheetDiff]:
    """The agent's workbook against the gold one, sheet by sheet (by name), cell by cell."""
    gold = read_sheets(gold_path)
    mine = read_sheets(predicted_path)
    found = [
        SheetDiff(name, rows_diff(rows, mine[name], tolerance))
        if name in mine
        else SheetDiff(name, None, "the agent's workbook has no such sheet")
        for name, rows in gold.items()
    ]
    return found + [SheetDiff(name, None, "not in the gold workbook") for name in mine if name not in gold]
