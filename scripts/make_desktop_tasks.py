"""Build the built-in `workflow` suite's desktop tasks: a column added to a real workbook in LibreOffice Calc
on the sample's screen, saved by the task's GUI postconfig (its window activated, Ctrl+S), as the official
excel tasks are. The workbooks are those of the suite's excel tasks (real data, see
scripts/make_workflow_suite.py); the gold is the workbook with the column's values computed here with pandas;
the reference solution is screen actions (`solution.actions.json`) typed through the keyboard, so that it
does not depend on where the application draws its cells.

    python scripts/make_desktop_tasks.py      # rewrites src/daharness/families/workflow/suite/examples/excel/gui-*
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
EXCEL = REPO / "src" / "daharness" / "families" / "workflow" / "suite" / "examples" / "excel"
HOME = "/home/user"


@dataclass
class DesktopSpec:
    id: str
    source_task: str  # the excel task whose workbook is edited
    book: str
    sheet: str
    header: str
    formula: str  # for row 2, in LibreOffice's syntax; the solution fills it down
    values: Callable[[pd.DataFrame], pd.Series]  # the column, from the sheet's data
    what: str  # the instruction's words for the column


SPECS = [
    DesktopSpec("gui-longley-gnp-per-person", "xlsx-longley-yearly-changes", "Longley.xlsx", "Economy",
                "GNP per person", "=C2/F2", lambda frame: frame.GNP / frame.POP, "GNP divided by the population (POP)"),
    DesktopSpec("gui-grunfeld-invest-ratio", "xlsx-grunfeld-invest-share", "Grunfeld.xlsx", "Firms",
                "invest_to_value", "=A2/B2", lambda frame: frame.invest / frame.value, "invest divided by value"),
    DesktopSpec("gui-wine-alcohol-per-color", "xlsx-wine-highlight-alcohol", "Wine.xlsx", "Wines",
                "alcohol_per_color", "=B2/D2", lambda frame: frame.alcohol / frame.color_intensity,
                "alcohol divided by color_intensity"),
    DesktopSpec("gui-iowa-generation-gwh", "xlsx-iowa-source-pivot", "Iowa.xlsx", "Generation",
                "net_generation_gwh", "=C2/1000", lambda frame: frame.net_generation / 1000,
                "net_generation in GWh (net_generation divided by 1000)"),
    DesktopSpec("gui-weather-temp-range", "xlsx-weather-days-bar-chart", "Weather.xlsx", "Daily",
                "temp_range", "=C2-D2", lambda frame: frame.temp_max - frame.temp_min, "temp_max minus temp_min"),
    DesktopSpec("gui-stocks-price-cents", "xlsx-msft-yearly-chart", "Stocks.xlsx", "Prices",
                "price_cents", "=C2*100", lambda frame: frame.price * 100, "price in cents (price times 100)"),
]  # fmt: skip


# keyboard only: the first empty column of row 1, the header, the formula in row 2, then the formula filled
# down to the last row of the data (the column on the left shows where it ends)
def solution(spec: DesktopSpec) -> list[dict[str, object]]:
    return [
        {"action_type": "HOTKEY", "keys": ["ctrl", "home"]},
        {"action_type": "HOTKEY", "keys": ["ctrl", "right"]},
        {"action_type": "PRESS", "key": "right"},
        {"action_type": "TYPING", "text": f"{spec.header}\n{spec.formula}\n"},
        {"action_type": "PRESS", "key": "up"},
        {"action_type": "PRESS", "key": "left"},
        {"action_type": "HOTKEY", "keys": ["ctrl", "down"]},
        {"action_type": "PRESS", "key": "right"},
        {"action_type": "HOTKEY", "keys": ["ctrl", "shift", "up"]},
        {"action_type": "HOTKEY", "keys": ["ctrl", "d"]},
    ]


def task_json(spec: DesktopSpec) -> dict[str, object]:
    official = f"evaluation_examples/examples/excel/{spec.id}"
    source = f"evaluation_examples/examples/excel/{spec.source_task}"
    gold = spec.book.replace(".xlsx", "_gold.xlsx")
    return {
        "id": spec.id,
        "snapshot": "excel",
        "desktop": True,
        "instruction": (
            f"{spec.book} is open in LibreOffice Calc on the screen. In its sheet \"{spec.sheet}\", add a column "
            f"\"{spec.header}\" right after the last column: {spec.what}, for every row. Work in the open "
            "window: what it holds when you finish is saved over the file."
        ),
        "source": ["daharness built-in workflow suite (scripts/make_desktop_tasks.py)"],
        "config": [
            {"type": "copyfile_from_host_to_guest",  # the source task's workbook, not a copy of it
             "parameters": {"src": f"{source}/{spec.book}", "dest": f"{HOME}/{spec.book}"}},
            {"type": "open", "parameters": {"path": f"{HOME}/{spec.book}"}},
        ],
        "action_number": len(solution(spec)),
        "related_apps": ["excel"],
        "tags": ["gui", "traditional_data_processing", "abstract"],
        "evaluator": {
            "postconfig": [
                {"type": "activate_window",
                 "parameters": {"window_name": f"{spec.book} - LibreOffice Calc", "strict": True}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
                {"type": "execute",
                 "parameters": {"command": ["python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
            ],
            "func": "compare_table",
            "result": {"type": "vm_file", "path": f"{HOME}/{spec.book}", "dest": spec.book},
            "expected": {"type": "local_file", "path": f"{official}/{gold}", "dest": gold},
            "options": {"rules": [{"type": "sheet_data", "sheet_idx0": f"RN{spec.sheet}",
                                   "sheet_idx1": f"EN{spec.sheet}"}]},
        },
        "counterpart": None,
    }  # fmt: skip


def stored(value: float) -> float | int:
    """The value as a spreadsheet application stores it: to 15 significant digits, and a whole number
    as an integer (39.81 * 100 is 3981, not 3981.0000000000005)."""
    value = float(f"{value:.15g}")
    return int(value) if value.is_integer() else value


def build(spec: DesktopSpec) -> None:
    folder = EXCEL / spec.id
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    frame = pd.read_excel(EXCEL / spec.source_task / spec.book, sheet_name=spec.sheet)
    values = spec.values(frame)
    book = openpyxl.load_workbook(EXCEL / spec.source_task / spec.book)
    sheet = book[spec.sheet]
    column = sheet.max_column + 1
    sheet.cell(row=1, column=column, value=spec.header)
    for row, value in enumerate(values, start=2):
        sheet.cell(row=row, column=column, value=stored(float(value)))
    book.save(folder / spec.book.replace(".xlsx", "_gold.xlsx"))
    (folder / f"{spec.id}.json").write_text(json.dumps(task_json(spec), indent=2) + "\n")
    (folder / "solution.actions.json").write_text(json.dumps(solution(spec), indent=1) + "\n")
    (folder / "verbose_instruction.txt").write_text(
        f'1. Click cell A1 of "{spec.sheet}" and press Ctrl+Right, then Right: the first empty column.\n'
        f'2. Type "{spec.header}" and Enter, then the formula {spec.formula} and Enter.\n'
        "3. Select the formula's cell down to the last row of the data and press Ctrl+D to fill it down.\n"
    )


def main() -> None:
    for spec in SPECS:
        build(spec)
        print(f"wrote {EXCEL / spec.id}")


if __name__ == "__main__":
    main()
