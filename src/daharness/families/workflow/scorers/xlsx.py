"""Spider2-V's `compare_table` for xlsx workbooks, after the official one in `metrics/table.py`.

Rules are checked in order and the first that fails gives 0. Sheets are named as the official
evaluator names them: an int or `RI<n>` (the result's n-th sheet), `RN<name>` (the result's sheet by
name), `EI<n>` / `EN<name>` (the expected workbook's). Rule types: `sheet_name`, `sheet_data` (cached
values as pandas reads them, rounded to `precision` decimals, 4 by default, as officially), `chart` (`chart_props`),
`pivot_table` (`pivot_props`), `style` (`props`, conditional formatting applied where the rule is a
comparison the evaluator can compute), `check_cell` (`props` rules on one cell) and `freeze`.
"""

from __future__ import annotations

import operator
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workflow.modes import WORKFLOW_MODES
from daharness.families.workflow.scorers.inputs import EvaluatorOptions, evaluate

SheetIndex = int | str


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SheetNameRule(_Rule):
    type: Literal["sheet_name"]


class PairRule(_Rule):
    sheet_idx0: SheetIndex
    sheet_idx1: SheetIndex


class SheetDataRule(PairRule):
    type: Literal["sheet_data"]
    precision: int = 4  # decimals both sheets are rounded to before they are compared


class ChartRule(PairRule):
    type: Literal["chart"]
    chart_props: list[
        Literal[
            "title", "legend", "anchor", "width", "height", "type", "direction", "xtitle", "ytitle", "ztitle"
        ]
    ] = Field(default_factory=list)


class PivotRule(PairRule):
    type: Literal["pivot_table"]
    pivot_props: list[str] = Field(default_factory=list)


class StyleRule(PairRule):
    type: Literal["style"]
    props: list[
        Literal[
            "number_format",
            "font_name",
            "font_family",
            "font_color",
            "font_bold",
            "font_italic",
            "font_underline",
            "font_size",
            "fill_type",
            "bgcolor",
            "fgcolor",
            "hyperlink",
            "merge",
        ]
    ]


class FreezeRule(PairRule):
    type: Literal["freeze"]


class CheckCellRule(_Rule):
    type: Literal["check_cell"]
    sheet_idx: SheetIndex
    coordinate: str
    props: dict[str, dict[str, Any]]


Rule = Annotated[
    SheetNameRule | SheetDataRule | ChartRule | PivotRule | StyleRule | FreezeRule | CheckCellRule,
    Field(discriminator="type"),
]


class CompareTableOptions(EvaluatorOptions):
    rules: list[Rule]


class _Books:
    """The result and expected workbooks, opened lazily the ways the rules need them."""

    def __init__(self, result: Path, expected: Path | None, compat: bool = False) -> None:
        import openpyxl
        import pandas as pd

        self.compat = compat
        self.paths = {"R": result, "E": expected}
        self.excel = {"R": pd.ExcelFile(result), "E": pd.ExcelFile(expected) if expected else None}
        self.books = {
            "R": openpyxl.load_workbook(result),
            "E": openpyxl.load_workbook(expected) if expected else None,
        }
        self.cached = {"R": openpyxl.load_workbook(result, data_only=True), "E": None}
        if expected:
            self.cached["E"] = openpyxl.load_workbook(expected, data_only=True)

    def names(self, side: str) -> list[str]:
        excel = self.excel[side]
        return list(excel.sheet_names) if excel is not None else []

    def locate(self, index: SheetIndex) -> tuple[str, str]:
        """(side, sheet name) of a sheet index; an unknown position gives an empty name."""
        if isinstance(index, int):
            side, spec = "R", f"I{index}"
        elif index[:2] in ("RI", "RN", "EI", "EN"):
            side, spec = index[0], index[1:]
        else:
            raise ValueError(f"unrecognized sheet index {index!r}")
        if spec.startswith("N"):
            return side, spec[1:]
        names = self.names(side)
        position = int(spec[1:])
        return side, names[position] if 0 <= position < len(names) else ""

    def frame(self, index: SheetIndex) -> Any:
        import pandas as pd

        side, name = self.locate(index)
        try:
            return pd.read_excel(self.excel[side], name)
        except Exception:
            return None

    def source(self, index: SheetIndex) -> tuple[Path, str]:
        """(workbook file, sheet name) of a sheet index, for reading its XML."""
        side, name = self.locate(index)
        path = self.paths[side]
        if path is None:
            raise ValueError(f"sheet {index!r}: no expected workbook")
        return path, name

    def sheet(self, index: SheetIndex, cached: bool = False) -> Any:
        side, name = self.locate(index)
        book = (self.cached if cached else self.books)[side]
        return book[name] if book is not None and name in book.sheetnames else None


@scorer("spider2v.compare_table", options=CompareTableOptions, modes=WORKFLOW_MODES)
def compare_table(context: ScoringContext, options: CompareTableOptions) -> Score:
    """1 when every rule holds between the result workbook and the expected one (see the module)."""

    def metric(result: Path, expected: Path | None) -> tuple[float, str]:
        try:
            books = _Books(result, expected, compat=context.mode == "compat")
        except Exception as exc:  # not a workbook the official code can open: 0
            return 0.0, f"cannot open the result workbook: {exc}"
        for number, rule in enumerate(options.rules):
            passed, why = _check(books, rule)
            if not passed:
                return 0.0, f"rule {number} ({rule.type}) fails: {why}"
        return 1.0, f"all {len(options.rules)} rules hold"

    return evaluate(context, options, metric)


def _check(books: _Books, rule: Any) -> tuple[bool, str]:
    if isinstance(rule, SheetNameRule):
        return books.names("R") == books.names("E"), f"sheets {books.names('R')} vs {books.names('E')}"
    if isinstance(rule, SheetDataRule):
        mine, gold = books.frame(rule.sheet_idx0), books.frame(rule.sheet_idx1)
        if mine is None:
            return False, f"no sheet {rule.sheet_idx0}"
        if gold is None:
            return False, f"no sheet {rule.sheet_idx1}"
        digits = rule.precision
        return bool(
            mine.round(digits).equals(gold.round(digits))
        ), f"the sheets' values differ (to {digits} decimals)"
    if isinstance(rule, ChartRule):
        mine, gold = (_charts(books.sheet(i), rule.chart_props) for i in (rule.sheet_idx0, rule.sheet_idx1))
        return mine == gold, f"charts {mine} vs {gold}"
    if isinstance(rule, PivotRule):
        mine, gold = (_pivots(books.sheet(i), rule.pivot_props) for i in (rule.sheet_idx0, rule.sheet_idx1))
        return mine == gold, f"pivot tables {mine} vs {gold}"
    if isinstance(rule, StyleRule):
        mine, gold = (
            _styles(books.sheet(index), books.sheet(index, cached=True), rule.props, books.compat)
            for index in (rule.sheet_idx0, rule.sheet_idx1)
        )
        differ = sorted(k for k in mine.keys() | gold.keys() if mine.get(k) != gold.get(k))
        return not differ, f"styles differ at {differ[:10]}"
    if isinstance(rule, FreezeRule):
        mine, gold = books.sheet(rule.sheet_idx0), books.sheet(rule.sheet_idx1)
        if mine is None:
            return False, f"no sheet {rule.sheet_idx0}"
        return (
            mine.freeze_panes == gold.freeze_panes,
            f"freeze panes {mine.freeze_panes} vs {gold.freeze_panes}",
        )
    sheet, cached = books.sheet(rule.sheet_idx), books.sheet(rule.sheet_idx, cached=True)
    if sheet is None:
        return False, f"no sheet {rule.sheet_idx}"
    for prop, check in rule.props.items():
        if prop != "value":
            value = _style(prop, sheet[rule.coordinate], compat=books.compat)
        elif books.compat:
            value = _official_cell_value(*books.source(rule.sheet_idx), rule.coordinate)
        else:
            value = _cell_value(cached[rule.coordinate].value)
        if not match_rule(value, check):
            return False, f"{rule.coordinate} {prop} = {value!r} does not satisfy {check}"
    return True, ""


def _cell_value(value: Any) -> Any:
    """A cell's cached value as it shows (corrected): numbers as floats, dates as datetimes, booleans and
    strings as they are, however they are stored."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def _official_cell_value(book: Path, sheet_name: str, coordinate: str) -> Any:
    """A cell's value as the official `read_cell_value` reads the sheet XML (compat): `sheet<sheetId>.xml`,
    a number (also a date: its serial) as a float, a shared string, a formula's string; a boolean, an inline
    string (what openpyxl writes) or an error reads None."""
    import zipfile
    from xml.etree import ElementTree

    with zipfile.ZipFile(book) as archive:
        workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
        ids = {sheet.get("name"): sheet.get("sheetId") for sheet in workbook.iter(f"{_MAIN}sheet")}
        sheet = ElementTree.fromstring(archive.read(f"xl/worksheets/sheet{ids[sheet_name]}.xml"))
        cell = next((c for c in sheet.iter(f"{_MAIN}c") if c.get("r") == coordinate), None)
        if cell is None:
            return None
        kind, stored = cell.get("t", "n"), cell.findtext(f"{_MAIN}v")
        if stored is None:
            return None
        if kind == "n":
            return float(stored)
        if kind == "s":
            shared = ElementTree.fromstring(archive.read("xl/sharedStrings.xml"))
            item = list(shared.iter(f"{_MAIN}si"))[int(stored)]
            return "".join(text.text or "" for text in item.iter(f"{_MAIN}t"))
        return stored if kind == "str" else None


def _title(title: Any) -> Any:
    try:
        return title.tx.rich.p[0].r[0].t
    except Exception:
        return None


def _charts(sheet: Any, props: list[str]) -> dict[str, dict[str, Any]]:
    """Charts keyed by their series references, with the asked properties (the official `load_charts`)."""
    if sheet is None:
        return {}
    found = {}
    for chart in sheet._charts:
        series = []
        for item in chart.series:
            values = _reference(item.val)
            categories = _reference(item.cat)
            series.append(f"{values},{categories}")
        info: dict[str, Any] = {}
        readers = {
            "title": lambda c: _title(c.title),
            "legend": lambda c: c.legend.position if c.legend is not None else None,
            "anchor": lambda c: [
                c.anchor.editAs,
                c.anchor._from.col,
                c.anchor.to.row,
                c.anchor.to.col,
                c.anchor.to.row,
            ],
            "width": lambda c: c.width,
            "height": lambda c: c.height,
            "type": lambda c: c.tagname,
            "direction": _bar_direction,
            "xtitle": lambda c: _title(getattr(c.x_axis, "title", None)),
            "ytitle": lambda c: _title(getattr(c.y_axis, "title", None)),
            "ztitle": lambda c: _title(getattr(getattr(c, "z_axis", None), "title", None)),
        }
        for prop in props:
            info[prop] = readers[prop](chart)
        found[";".join(series)] = info
    return found


def _bar_direction(chart: Any) -> str:
    """A bar chart's direction; any other chart fails the rule, as the official `ch.barDir` raises there."""
    if not hasattr(chart, "barDir"):
        raise ValueError(f"a {chart.tagname} has no direction (the official load_charts fails on it)")
    return str(chart.barDir)


def _reference(data: Any) -> str:
    for kind in ("numRef", "strRef"):
        ref = getattr(data, kind, None)
        if ref is not None and getattr(ref, "f", None) is not None:
            return str(ref.f)
    return ""


def _pivots(sheet: Any, props: list[str]) -> dict[str, dict[str, Any]]:
    """Pivot tables keyed by their source range (the official `load_pivot_tables`)."""
    from openpyxl.utils import coordinate_to_tuple

    if sheet is None:
        return {}
    found = {}
    for pivot in sheet._pivots:
        raw = [
            [(item.h, item.x) for item in field.items if item.x is not None] for field in pivot.pivotFields
        ]
        left = next((i for i, items in enumerate(raw) if items), len(raw))
        trimmed = raw[left:]
        right = next((i for i, items in enumerate(reversed(trimmed)) if items), len(trimmed))
        selection = trimmed[: len(trimmed) - right]
        source = pivot.cache.cacheSource
        start, end = source.worksheetSource.ref.split(":")
        first, last = coordinate_to_tuple(start), coordinate_to_tuple(end)
        key = f"{source.type};{(first[0], first[1] + left)}:{(last[0], last[1] - right)};{source.worksheetSource.sheet}"
        info: dict[str, Any] = {}
        simple = {"name": "name", "show_total": "visualTotals", "show_empty_row": "showEmptyRow",
                  "show_empty_col": "showEmptyCol", "show_headers": "showHeaders", "location": "location"}  # fmt: skip
        for prop, attribute in simple.items():
            if prop in props:
                info[prop] = getattr(pivot, attribute)
        if "filter" in props or "selection" in props:
            info["selection"] = selection if "ordered" in props else [set(items) for items in selection]
        if "filter" in props:
            info["filter_fields"] = {field.fld for field in pivot.pageFields}
        for prop, fields in (("col_fields", pivot.colFields), ("row_fields", pivot.rowFields)):
            if prop in props:
                indices = [field.x - left for field in fields]
                info[prop] = [i for i in indices if i >= 0] if "ignore_special_fields" in props else indices
        if "data_fields" in props:
            info["data_fields"] = [
                f"{field.fld - left:d};{field.name if 'data_fields_name' in props else ''};{field.subtotal};{field.showDataAs}"
                for field in pivot.dataFields
            ]
        found[key] = info
    return found


def _style(prop: str, cell: Any, dxf: Any = None, compat: bool = False) -> Any:
    """One style property of a cell (or of a conditional format's style), as the official reader. Colours:
    corrected gives the colour a solid fill shows for both `bgcolor` and `fgcolor` (a cell's fgColor, a
    conditional style's bgColor); compat reads `fill.bgColor` / `fill.fgColor` as officially, so a cell's
    solid red fill has bgcolor 00000000 there. A font without a colour (LibreOffice writes such fonts), or
    a conditional style without a font or number format: compat raises where the official reader does (the
    task scores 0), corrected reads None (nothing set)."""
    from openpyxl.cell.cell import MergedCell

    empty = cell.value is None
    source = dxf if dxf is not None else cell
    if prop == "number_format":
        if empty or cell.data_type != "n":
            return None
        if dxf is not None and dxf.numFmt is None and compat:  # official `diff_style.numFmt.formatCode`
            raise ValueError("a conditional format's style has no number format (the official reader fails)")
        return dxf.numFmt.formatCode if dxf is not None and dxf.numFmt is not None else cell.number_format
    if prop.startswith("font_"):
        if empty:
            return None
        font = source.font
        missing = (
            "font" if font is None else "font colour" if prop == "font_color" and font.color is None else ""
        )
        if missing and compat:  # official `(diff_style or cell).font.color.rgb` raises AttributeError
            where = "a conditional format's style" if dxf is not None else f"cell {cell.coordinate}"
            raise ValueError(f"{where} has no {missing} (the official _read_cell_style fails on it)")
        if missing:
            return None  # corrected: nothing set, the application's automatic colour
        attribute = {"font_name": "name", "font_family": "family", "font_bold": "bold", "font_italic": "italic",
                     "font_underline": "underline", "font_size": "size"}.get(prop)  # fmt: skip
        if prop == "font_color":
            return font.color.rgb
        return getattr(font, attribute)
    if prop == "fill_type":
        return getattr(source.fill, "tagname", None) if source.fill is not None else None
    if prop in ("bgcolor", "fgcolor"):
        try:
            if compat:
                return (source.fill.bgColor if prop == "bgcolor" else source.fill.fgColor).rgb
            return dxf.fill.bgColor.rgb if dxf is not None else cell.fill.fgColor.rgb
        except AttributeError:
            return None
    if prop == "hyperlink":
        return None if empty else (cell.hyperlink or "")
    return isinstance(cell, MergedCell)  # merge


def _styles(sheet: Any, cached: Any, props: list[str], compat: bool) -> dict[str, list[Any]]:
    """Every cell's asked properties, with the style of the conditional formats that apply to it."""
    if sheet is None:
        return {}
    found = {
        cell.coordinate: [_style(p, cell, compat=compat) for p in props]
        for column in sheet.iter_cols()
        for cell in column
    }
    for formatting in sheet.conditional_formatting:
        for rule in formatting.rules:
            if compat and rule.type != "expression":
                raise ValueError(
                    f"a conditional format of type {rule.type} (the official load_xlsx_styles reads only "
                    "'expression' ones and raises NotImplementedError)"
                )
            test = _condition(rule, cached)
            if test is None:
                continue
            for cell_range in formatting.cells:
                for row, column in cell_range.cells:
                    value = _cell_value(cached.cell(row=row, column=column).value)
                    if value is not None and test(value):
                        cell = sheet.cell(row=row, column=column)
                        found[cell.coordinate] = [_style(p, cell, rule.dxf, compat) for p in props]
    return found


_COMPARE = {
    "=": operator.eq,
    "<>": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
}
_CELL_IS = {"equal": "=", "notEqual": "<>", "greaterThan": ">", "lessThan": "<", "greaterThanOrEqual": ">=",
            "lessThanOrEqual": "<="}  # fmt: skip
_EXPRESSION = re.compile(
    r"^\$?[A-Z]+\$?\d+\s*(<>|>=|<=|=|>|<)\s*(?:(MAX|MIN|AVERAGE|SUM)\(\$?([A-Z]+)\$?(\d+):\$?([A-Z]+)\$?(\d+)\)|(-?[\d.]+))$",
    re.IGNORECASE,
)


def _condition(rule: Any, cached: Any) -> Any:
    """A test of a cell value for a conditional format, or None when it cannot be computed here."""
    if rule.type == "cellIs" and rule.operator in _CELL_IS and rule.formula:
        try:
            bound = float(rule.formula[0])
        except ValueError:
            return None
        compare = _COMPARE[_CELL_IS[rule.operator]]
        return lambda value: isinstance(value, float) and compare(value, bound)
    if rule.type == "expression" and rule.formula:
        match = _EXPRESSION.match(rule.formula[0].strip())
        if match is None:
            return None
        compare = _COMPARE[match.group(1)]
        if match.group(7) is not None:
            bound = float(match.group(7))
        else:
            cells = cached[f"{match.group(3)}{match.group(4)}:{match.group(5)}{match.group(6)}"]
            numbers = [c.value for row in cells for c in row if isinstance(c.value, int | float)]
            if not numbers:
                return None
            bound = {"MAX": max, "MIN": min, "SUM": sum, "AVERAGE": lambda v: sum(v) / len(v)}[
                match.group(2).upper()
            ](numbers)
        return lambda value: isinstance(value, float) and compare(value, bound)
    return None


def match_rule(value: Any, rule: dict[str, Any]) -> bool:
    """The official `_match_value_to_rule`: re[.FLAGS], eq/ne/lt/le/gt/ge, approx:T, range.XY,
    str_list_eq / str_set_eq."""
    method, ref = rule["method"], rule.get("ref")
    if method.startswith("re"):
        flags = 0
        for name in method.split(".")[1:]:
            flags |= getattr(re, name)
        return re.search(ref, value, flags) is not None
    if method in ("eq", "ne", "le", "lt", "ge", "gt"):
        return bool(getattr(operator, method)(value, ref))
    if method.startswith("approx"):
        try:
            return abs(float(value) - ref) <= float(method.split(":")[1])
        except (TypeError, ValueError):
            return False
    if method.startswith("range."):
        left, right = method[6], method[7]
        return getattr(operator, "l" + left)(ref[0], value) and getattr(operator, "l" + right)(value, ref[1])
    if method in ("str_list_eq", "str_set_eq"):
        container = list if method == "str_list_eq" else set
        return container(str(value).strip("\"'").split(",")) == container(ref)
    raise ValueError(f"unknown match method {method!r}")
