"""What a sample page shows beside the score: the agent's tables against the gold tables, cell by cell
(rows and columns missing or extra), its charts beside the gold charts, and its CSV files as tables.

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
    gold, predicted = read_csv(gold_path), read_csv(predicted_path)
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
                cells.append(
                    f'<td class="differs"><del>{escape(expected)}</del> <ins>{escape(got)}</ins></td>'
                )
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
