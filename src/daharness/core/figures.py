"""A family's report figures as typed data: its headline numbers and tables of rates, means and counts.

A family turns its records into `FamilyFigures` (`FamilyBase.figures`); `report/` draws them for the
terminal and report.html, and the viewer draws the same. No family draws anything, and the drawing
code names no family: every number says what it measures (`Measure`), every table how it is grouped.

`data` is the family's figures laid out as its paper or official tool lays them out (DABench's
`*_evaluation_analysis.json`, Tapilot-Crossing's Table 3...): report.json keeps it under
`families.<name>` for the programs that read it. The tables are made from the same numbers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# rate: the share of samples (or intents, questions...) that succeeded; mean: the mean of 0..1 scores
# (both drawn as percents); count: a whole number; number: any other value (a similarity, a cost)
Measure = Literal["rate", "mean", "count", "number"]
Value = float | int | None  # None: nothing to measure (no sample in the group)


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Figure(_Figures):
    """One headline number: 'Accuracy by Question', 0.75, a rate."""

    label: str
    value: Value
    measure: Measure


class Column(_Figures):
    """A column of values: its header and what its values measure."""

    label: str
    measure: Measure


class Row(_Figures):
    """A group (a concept, an application, a mode) and its value in each of the table's columns."""

    group: str
    values: list[Value]


class Section(_Figures):
    """The rows of one breakdown ('level': easy, medium, hard). `chart` asks report.html to draw the
    first rate or mean column as bars, one per row (`bars`: horizontal, for many or long labels;
    `columns`: vertical); without it the rows are a table there too."""

    name: str = ""  # empty when the table has one breakdown, or none
    rows: list[Row]
    chart: Literal["bars", "columns"] | None = None


class FigureTable(_Figures):
    """A table of figures: value `columns`, and rows grouped in `sections` (one per breakdown)."""

    title: str = ""
    group: str = "group"  # the header of the rows' labels
    columns: list[Column]
    sections: list[Section]

    @model_validator(mode="after")
    def _a_value_per_column(self) -> FigureTable:
        for section in self.sections:
            for row in section.rows:
                if len(row.values) != len(self.columns):
                    raise ValueError(
                        f"row {row.group!r} has {len(row.values)} values for {len(self.columns)} columns"
                    )
        return self


class FamilyFigures(_Figures):
    """What a family's records come to in a run's report."""

    data: dict[str, Any] = Field(
        default_factory=dict, description="The figures in the paper's layout: report.json `families.<name>`."
    )
    headline: list[Figure] = Field(default_factory=list)
    tables: list[FigureTable] = Field(default_factory=list)


def breakdown(
    name: str,
    values: dict[str, Value] | dict[Any, Value],
    chart: Literal["bars", "columns"] | None = None,
) -> Section:
    """A section of one-column rows from `{group: value}`, in the dictionary's order."""
    return Section(name=name, rows=[Row(group=str(g), values=[v]) for g, v in values.items()], chart=chart)
