"""The families' figures as report.json keeps them (`family_tables.<name>`), and drawn as terminal tables.

What is drawn is typed data (`core/figures.py`), so the drawing needs no family's code and names none: a
family that is not installed here still shows. report.html and the viewer draw the same (`html.py`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rich.markup import escape as escape_markup
from rich.table import Table

from daharness.core.figures import FamilyFigures, Figure, FigureTable, Measure, Row, Section, Value


class DrawnFigures(BaseModel):
    """report.json `family_tables.<name>`: a family's headline and tables, with its title and the scoring
    mode its samples were scored in."""

    model_config = ConfigDict(extra="forbid")

    title: str
    mode: str = ""
    headline: list[Figure] = Field(default_factory=list)
    tables: list[FigureTable] = Field(default_factory=list)

    @classmethod
    def of(cls, figures: FamilyFigures, title: str, mode: str = "") -> DrawnFigures:
        return cls(title=title, mode=mode, headline=figures.headline, tables=figures.tables)


def value_text(value: Value, measure: Measure, *, html: bool = False) -> str:
    """A figure as text: rates and means as percents (2 places in the terminal, 1 in HTML)."""
    if value is None:
        return "—"
    if measure in ("rate", "mean"):
        return f"{value * 100:.1f}%" if html else f"{value:.2%}"
    if measure == "count":
        return str(int(value))
    return str(value)


# ---- the terminal ----------------------------------------------------------------------------------------


def print_figures(console: Any, figures: DrawnFigures | FamilyFigures, title: str) -> None:
    """`title` on a line of its own (a table's title would wrap at the table's width), then the headline
    as a table of metrics and each table (a rich Console)."""
    console.print(f"[bold]{escape_markup(title)}[/]")
    if figures.headline:
        headline = Table()
        headline.add_column("metric")
        headline.add_column("value", justify="right")
        for figure in figures.headline:
            headline.add_row(figure.label, value_text(figure.value, figure.measure))
        console.print(headline)
    for table in figures.tables:
        console.print(_rich_table(table))


def _rich_table(table: FigureTable) -> Table:
    drawn = Table(title=escape_markup(table.title) or None, title_justify="left")
    headers, rows = labelled_rows(table, table.sections)
    for header in headers:
        drawn.add_column(escape_markup(header))
    for column in table.columns:
        drawn.add_column(escape_markup(column.label), justify="right")
    for labels, row in rows:
        cells = [value_text(v, c.measure) for v, c in zip(row.values, table.columns, strict=True)]
        drawn.add_row(*map(escape_markup, labels), *cells)
    return drawn


def labelled_rows(
    table: FigureTable, sections: list[Section]
) -> tuple[list[str], list[tuple[list[str], Row]]]:
    """The headers of the rows' labels, and each row with its labels: the breakdown's name and the group,
    each only when some row has one (a table of one unnamed row shows its values alone)."""
    named = any(section.name for section in sections)
    grouped = any(row.group for section in sections for row in section.rows)
    headers = (["breakdown"] if named else []) + ([table.group] if grouped else [])
    rows = [
        (([section.name] if named else []) + ([row.group] if grouped else []), row)
        for section in sections
        for row in section.rows
    ]
    return headers, rows
