"""Build the built-in `workflow` suite: Spider2-V style tasks over real data, with reference solutions.

Every task is a folder `examples/<app>/<id>/` in the official Spider2-V format (`<id>.json`,
`verbose_instruction.txt`, the files its setup copies in, `init.sh` / `eval.sh`, gold files) plus a
reference solution (`solution.sh` or `solution.py`). The data are the real datasets that the built-in
workspace suite already ships (its family's README gives origins and licences); this script only reshapes
them (workbooks, dbt seeds, notebooks). Gold files are what the reference solution produces, run here
in a scratch home folder exactly as the sandbox runs it, so the reference scores 1 by construction and
`daharness validate --suite workflow` checks that the untouched state scores 0.

    python scripts/make_workflow_suite.py          # rewrites src/daharness/families/workflow/suite/examples
    python scripts/make_workflow_suite.py ID...    # rewrites only these tasks
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import openpyxl
import pandas as pd
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from daharness.families.workflow import tools_dir
from daharness.families.workflow.apps import APPS

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "src" / "daharness" / "families" / "workflow" / "suite"
DATA = REPO / "src" / "daharness" / "families" / "workspace" / "suite" / "tasks"
HOME = "/home/user"
SAVE_NOTE = (
    " The workbook is checked by the values stored in its cells: store computed values (a formula that no "
    "spreadsheet application has calculated yet has no stored value)."
)


def real(name: str) -> pd.DataFrame:
    """A real dataset of the workspace suite: TASK/source/FILE, or a file name found in one task only."""
    if "/" in name:
        return pd.read_csv(DATA / name)
    (found,) = sorted(DATA.glob(f"*/source/{name}"))[:1]
    return pd.read_csv(found)


@dataclass
class Spec:
    id: str
    app: str
    instruction: str
    tutorial: str
    files: dict[str, Callable[[Path], None]]  # name in the task folder -> writer; copied to the home
    evaluator: dict[str, Any]
    solution: str
    solution_kind: str = "sh"
    tags: list[str] = field(default_factory=lambda: ["cli", "traditional_data_processing", "abstract"])
    related_apps: list[str] = field(default_factory=list)
    init: str | None = None
    eval_script: str | None = None
    destinations: dict[str, str] = field(default_factory=dict)  # file -> path in the home (default: ~/NAME)
    gold: dict[str, str] = field(default_factory=dict)  # gold name -> path in the home after the solution
    # gold files written from the data here (an application task's solution needs its services to run)
    gold_files: dict[str, Callable[[Path], None]] = field(default_factory=dict)
    web_ui: dict[str, Any] | None = None  # the official `*_webui_init` step that follows the setup
    actions: int = 4


def src(spec: Spec, name: str) -> str:
    return f"evaluation_examples/examples/{spec.app}/{spec.id}/{name}"


# ---- writers -------------------------------------------------------------------------------------------


def workbook(sheets: dict[str, pd.DataFrame]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        book = openpyxl.Workbook()
        book.remove(book.active)
        for title, frame in sheets.items():
            sheet = book.create_sheet(title)
            sheet.append(list(frame.columns))
            for row in frame.itertuples(index=False):
                sheet.append([None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in row])
        book.save(path)

    return write


def text(content: str) -> Callable[[Path], None]:
    return lambda path: path.write_text(content)


def frame_csv(frame: pd.DataFrame) -> Callable[[Path], None]:
    return lambda path: frame.to_csv(path, index=False)


def dbt_zip(project: str, files: dict[str, str]) -> Callable[[Path], None]:
    profile = (
        f"{project}:\n  outputs:\n    dev:\n      type: duckdb\n      path: {project}.duckdb\n      threads: 1\n"
        "  target: dev\n"
    )
    config = (
        f"name: '{project}'\nversion: '1.0.0'\nconfig-version: 2\nprofile: '{project}'\n"
        'model-paths: ["models"]\nseed-paths: ["seeds"]\ntest-paths: ["tests"]\nmacro-paths: ["macros"]\n'
        'clean-targets: ["target", "dbt_packages"]\n'
    )
    return project_zip(project, {"profiles.yml": profile, "dbt_project.yml": config, **files})


def project_zip(project: str, files: dict[str, str]) -> Callable[[Path], None]:
    """A zipped project folder, the same bytes on every build (fixed dates and modes)."""

    def write(path: Path) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in sorted(files):
                info = zipfile.ZipInfo(f"{project}/{name}", date_time=(2024, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                archive.writestr(info, files[name])
        path.write_bytes(buffer.getvalue())

    return write


def notebook(cells: list[tuple[str, str]]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        made = new_notebook(cells=[new_markdown_cell(s) if k == "md" else new_code_cell(s) for k, s in cells])
        made.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(made, str(path))

    return write


DBT_INIT = """#!/bin/bash
# set up the dbt project {project} in ~/projects and its profile in ~/.dbt
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/{project}.zip && rm -f ~/{project}.zip
mv {project}/profiles.yml ~/.dbt/profiles.yml
{extra}
gnome-terminal --maximize --working-directory=/home/user/projects/{project}
code /home/user/projects/{project} --disable-workspace-trust
"""


def dbt_eval(project: str, command: str, patterns: list[str]) -> str:
    checks = " && ".join(f'echo "$output" | grep -qE "{p}"' for p in patterns)
    return (
        f"#!/bin/bash\nsource ~/anaconda3/etc/profile.d/conda.sh 2>/dev/null\nconda activate dbt\n"
        f"cd ~/projects/{project}\noutput=$({command} 2>&1)\n"
        f'if {checks}; then\n    echo "dbt {command.split()[1]} succeed"\nelse\n    echo "dbt {command.split()[1]} failed"\nfi\n'
    )


def rule_eval(include: list[str], exclude: list[str]) -> dict[str, Any]:
    return {"type": "rule", "rules": {"include": include, "exclude": exclude}}


def script_result(spec_id: str, app: str) -> dict[str, Any]:
    return {
        "type": "vm_script_output",
        "src": f"evaluation_examples/examples/{app}/{spec_id}/eval.sh",
        "dest": f"{HOME}/eval.sh",
    }


def vm_file(path: str) -> dict[str, Any]:
    return {"type": "vm_file", "path": f"{HOME}/{path}", "dest": Path(path).name}


def local_file(spec_id: str, app: str, name: str) -> dict[str, Any]:
    return {
        "type": "local_file",
        "path": f"evaluation_examples/examples/{app}/{spec_id}/{name}",
        "dest": name,
    }


# ---- the tasks -----------------------------------------------------------------------------------------
# (defined below, in all_specs)


# ---- building ------------------------------------------------------------------------------------------


def build(spec: Spec) -> None:
    folder = SUITE / "examples" / spec.app / spec.id
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, writer in spec.files.items():
        writer(folder / name)
    config: list[dict[str, Any]] = []
    for name in spec.files:
        dest = spec.destinations.get(name, name)
        config.append(
            {
                "type": "copyfile_from_host_to_guest",
                "parameters": {"src": src(spec, name), "dest": f"{HOME}/{dest}"},
            }
        )
    if spec.init:
        (folder / "init.sh").write_text(spec.init)
        config.append(
            {
                "type": "script_and_execute",
                "parameters": {"src": src(spec, "init.sh"), "dest": f"{HOME}/init.sh"},
            }
        )
    if spec.web_ui:
        config.append(spec.web_ui)
    for name, writer in spec.gold_files.items():
        writer(folder / name)
    if spec.app == "excel":
        for dest in (spec.destinations.get(n, n) for n in spec.files if n.endswith(".xlsx")):
            config.append({"type": "open", "parameters": {"path": f"{HOME}/{dest}"}})
    if spec.eval_script:
        (folder / "eval.sh").write_text(spec.eval_script)
    (folder / f"solution.{spec.solution_kind}").write_text(spec.solution)
    (folder / "verbose_instruction.txt").write_text(spec.tutorial.strip() + "\n")
    task = {
        "id": spec.id, "snapshot": spec.app, "instruction": spec.instruction,
        "source": ["daharness built-in workflow suite (scripts/make_workflow_suite.py)"],
        "config": config, "action_number": spec.actions, "related_apps": spec.related_apps, "tags": spec.tags,
        "evaluator": spec.evaluator, "counterpart": None,
    }  # fmt: skip
    (folder / f"{spec.id}.json").write_text(json.dumps(task, indent=2) + "\n")
    if spec.app not in APPS:  # an application's services run only in the sandbox
        make_gold(spec, folder)


def make_gold(spec: Spec, folder: Path) -> None:
    """Run setup and the reference solution in a scratch home, as the sandbox does, and keep the gold."""
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        for name in spec.files:
            target = home / spec.destinations.get(name, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / name, target)
        path = f"{tools_dir()}:{Path(sys.executable).parent}:{os.environ['PATH']}"  # as in the sandbox
        env = {**os.environ, "HOME": str(home), "PATH": path}
        if spec.init:
            shutil.copyfile(folder / "init.sh", home / "init.sh")
            run(["bash", "init.sh"], home, env)
        solution = folder / f"solution.{spec.solution_kind}"
        run(["bash" if spec.solution_kind == "sh" else sys.executable, str(solution)], home, env)
        for name, path in spec.gold.items():
            shutil.copyfile(home / path, folder / name)


def run(command: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed in {cwd}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def main() -> None:
    """Every task, or only the tasks named on the command line (the others are left as they are)."""
    specs = all_specs()
    wanted = set(sys.argv[1:])
    if unknown := wanted - {spec.id for spec in specs}:
        raise SystemExit(f"no task {', '.join(sorted(unknown))} in this script")
    if not wanted:  # its own applications' folders (the warehouse tasks are make_warehouse_tasks.py's)
        for app in {spec.app for spec in specs}:
            shutil.rmtree(SUITE / "examples" / app, ignore_errors=True)
    for spec in specs:
        if wanted and spec.id not in wanted:
            continue
        print(f"building {spec.app}/{spec.id}")
        build(spec)
    print(f"{len(wanted or specs)} tasks in {SUITE / 'examples'}")


def excel_specs() -> list[Spec]:
    cars = real("cars.csv")[["Name", "Origin", "Miles_per_Gallon", "Horsepower", "Weight_in_lbs"]]
    stocks = real("stocks.csv")
    iowa = real("iowa-electricity.csv")
    iowa["year"] = iowa["year"].str[:4].astype(int)
    grunfeld = real("grunfeld.csv")
    weather = real("seattle-weather.csv")
    wine = real("wine.csv")[["cultivar", "alcohol", "malic_acid", "color_intensity", "proline"]]
    longley = real("eda-macro-recessions/source/longley.csv").drop(columns=["Obs"])
    excel = ["excel"]
    tags = ["cli+gui", "traditional_data_processing", "abstract"]

    def table_eval(spec_id: str, book: str, gold: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "postconfig": [{"type": "activate_window", "parameters": {"window_name": f"{book} - LibreOffice Calc"}},
                           {"type": "execute", "parameters": {"command": ["python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]}}],
            "func": "compare_table", "result": vm_file(book), "expected": local_file(spec_id, "excel", gold),
            "options": {"rules": rules},
        }  # fmt: skip

    def data(name: str) -> dict[str, Any]:
        return {"type": "sheet_data", "sheet_idx0": f"RN{name}", "sheet_idx1": f"EN{name}"}

    specs = [
        Spec(
            "xlsx-cars-origin-summary",
            "excel",
            'In Cars.xlsx, add a sheet named "Summary" with the headers "Origin", "Cars" and "Average MPG": one row per origin in alphabetical order, the number of cars and their average miles per gallon (cars without a value left out of the average), rounded to 1 decimal.'
            + SAVE_NOTE,
            "1. Open Cars.xlsx and create a new sheet named Summary.\n2. Type the headers Origin, Cars and Average MPG in A1:C1.\n3. For each origin (Europe, Japan, USA) count the cars with COUNTIF and average Miles_per_Gallon with AVERAGEIF.\n4. Round the averages to 1 decimal and save the file.",
            {"Cars.xlsx": workbook({"Cars": cars})},
            table_eval(
                "xlsx-cars-origin-summary", "Cars.xlsx", "Cars_gold.xlsx", [data("Summary"), data("Cars")]
            ),
            """import pandas as pd
from openpyxl import load_workbook

cars = pd.read_excel("Cars.xlsx", sheet_name="Cars")
summary = cars.groupby("Origin").agg(Cars=("Name", "size"), mpg=("Miles_per_Gallon", "mean")).reset_index()
book = load_workbook("Cars.xlsx")
sheet = book.create_sheet("Summary")
sheet.append(["Origin", "Cars", "Average MPG"])
for row in summary.itertuples(index=False):
    sheet.append([row.Origin, int(row.Cars), round(float(row.mpg), 1)])
book.save("Cars.xlsx")
""",
            "py",
            tags,
            excel,
            gold={"Cars_gold.xlsx": "Cars.xlsx"},
            actions=8,
        ),
        Spec(
            "xlsx-msft-yearly-chart",
            "excel",
            'In Stocks.xlsx, add a sheet "MSFT" with the headers "Year" and "Average price" and one row per year 2000-2010 holding Microsoft\'s average monthly price that year (2 decimals). Then add a line chart to that sheet titled "MSFT average price" whose one series is MSFT!$B$2:$B$12 with the years MSFT!$A$2:$A$12 as categories, and no legend.'
            + SAVE_NOTE,
            '1. Create the sheet MSFT with Year and Average price headers.\n2. Fill years 2000 to 2010 in A2:A12 and the average MSFT price of each year in B2:B12, rounded to 2 decimals.\n3. Insert a line chart with the data range B2:B12 and categories A2:A12.\n4. Set the chart title to "MSFT average price", remove the legend and save.',
            {"Stocks.xlsx": workbook({"Prices": stocks})},
            table_eval(
                "xlsx-msft-yearly-chart",
                "Stocks.xlsx",
                "Stocks_gold.xlsx",
                [
                    data("MSFT"),
                    {
                        "type": "chart",
                        "sheet_idx0": "RNMSFT",
                        "sheet_idx1": "ENMSFT",
                        "chart_props": ["type", "title", "legend"],
                    },
                ],
            ),
            """import pandas as pd
from openpyxl import load_workbook
from openpyxl.chart import LineChart, Reference

prices = pd.read_excel("Stocks.xlsx", sheet_name="Prices")
prices["year"] = pd.to_datetime(prices["date"], format="%b %d %Y").dt.year
yearly = prices[prices["symbol"] == "MSFT"].groupby("year")["price"].mean().round(2)
book = load_workbook("Stocks.xlsx")
sheet = book.create_sheet("MSFT")
sheet.append(["Year", "Average price"])
for year, price in yearly.items():
    sheet.append([int(year), float(price)])
chart = LineChart()
chart.title = "MSFT average price"
chart.legend = None
chart.add_data(Reference(sheet, min_col=2, min_row=2, max_row=12))
chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=12))
sheet.add_chart(chart, "D2")
book.save("Stocks.xlsx")
""",
            "py",
            ["cli+gui", "data_analysis_and_visualization", "abstract"],
            excel,
            gold={"Stocks_gold.xlsx": "Stocks.xlsx"},
            actions=10,
        ),
        Spec(
            "xlsx-iowa-source-pivot",
            "excel",
            'Iowa.xlsx holds Iowa\'s net electricity generation by year and source. Summarise it in a new sheet "Pivot" shaped like a pivot table: header "Year" then one column per source in alphabetical order, one row per year in increasing order, each cell the net generation of that source in that year.'
            + SAVE_NOTE,
            "1. Select the data in sheet Generation and insert a pivot table into a new sheet named Pivot.\n2. Put year in the rows, source in the columns and the sum of net_generation in the values.\n3. Keep the years ascending and the sources in alphabetical order, drop the grand totals, and save.",
            {"Iowa.xlsx": workbook({"Generation": iowa})},
            table_eval("xlsx-iowa-source-pivot", "Iowa.xlsx", "Iowa_gold.xlsx", [data("Pivot")]),
            """import pandas as pd
from openpyxl import load_workbook

data = pd.read_excel("Iowa.xlsx", sheet_name="Generation")
pivot = data.pivot_table(index="year", columns="source", values="net_generation", aggfunc="sum").sort_index()
book = load_workbook("Iowa.xlsx")
sheet = book.create_sheet("Pivot")
sheet.append(["Year", *pivot.columns])
for year, row in pivot.iterrows():
    sheet.append([int(year), *[int(v) for v in row]])
book.save("Iowa.xlsx")
""",
            "py",
            tags,
            excel,
            gold={"Iowa_gold.xlsx": "Iowa.xlsx"},
            actions=6,
        ),
        Spec(
            "xlsx-grunfeld-invest-share",
            "excel",
            'In Grunfeld.xlsx, add a column with header "Invest share" right after the last column of sheet Firms: each firm-year\'s gross investment divided by its market value, rounded to 4 decimals and shown with the percentage number format "0.00%".'
            + SAVE_NOTE,
            "1. Click F1 in sheet Firms and type Invest share.\n2. In F2 enter =ROUND(A2/B2,4) and fill it down to the last row.\n3. Select F2:F201 and apply the number format 0.00% and save.",
            {"Grunfeld.xlsx": workbook({"Firms": grunfeld})},
            table_eval(
                "xlsx-grunfeld-invest-share",
                "Grunfeld.xlsx",
                "Grunfeld_gold.xlsx",
                [
                    data("Firms"),
                    {
                        "type": "style",
                        "sheet_idx0": "RNFirms",
                        "sheet_idx1": "ENFirms",
                        "props": ["number_format"],
                    },
                ],
            ),
            """from openpyxl import load_workbook

book = load_workbook("Grunfeld.xlsx")
sheet = book["Firms"]
column = sheet.max_column + 1
sheet.cell(row=1, column=column, value="Invest share")
for row in range(2, sheet.max_row + 1):
    cell = sheet.cell(row=row, column=column, value=round(sheet.cell(row, 1).value / sheet.cell(row, 2).value, 4))
    cell.number_format = "0.00%"
book.save("Grunfeld.xlsx")
""",
            "py",
            tags,
            excel,
            gold={"Grunfeld_gold.xlsx": "Grunfeld.xlsx"},
            actions=5,
        ),
        Spec(
            "xlsx-weather-days-bar-chart",
            "excel",
            'In Weather.xlsx, count the days of each weather type: a sheet "Days" with headers "Weather" and "Days", one row per weather type sorted by the number of days, most first. Add a bar chart of those counts to the sheet (series Days!$B$2:$B$6, categories Days!$A$2:$A$6) titled "Days by weather".'
            + SAVE_NOTE,
            '1. Create the sheet Days with headers Weather and Days.\n2. List the five weather types and count their days with COUNTIF over Daily!F:F.\n3. Sort by Days, descending.\n4. Insert a bar chart of B2:B6 with categories A2:A6, title it "Days by weather" and save.',
            {"Weather.xlsx": workbook({"Daily": weather})},
            table_eval(
                "xlsx-weather-days-bar-chart",
                "Weather.xlsx",
                "Weather_gold.xlsx",
                [
                    data("Days"),
                    {
                        "type": "chart",
                        "sheet_idx0": "RNDays",
                        "sheet_idx1": "ENDays",
                        "chart_props": ["type", "title"],
                    },
                ],
            ),
            """import pandas as pd
from openpyxl import load_workbook
from openpyxl.chart import BarChart, Reference

daily = pd.read_excel("Weather.xlsx", sheet_name="Daily")
counts = daily["weather"].value_counts()
book = load_workbook("Weather.xlsx")
sheet = book.create_sheet("Days")
sheet.append(["Weather", "Days"])
for weather, days in counts.items():
    sheet.append([weather, int(days)])
chart = BarChart()
chart.title = "Days by weather"
chart.add_data(Reference(sheet, min_col=2, min_row=2, max_row=6))
chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=6))
sheet.add_chart(chart, "D2")
book.save("Weather.xlsx")
""",
            "py",
            ["cli+gui", "data_analysis_and_visualization", "abstract"],
            excel,
            gold={"Weather_gold.xlsx": "Weather.xlsx"},
            actions=9,
        ),
        Spec(
            "xlsx-wine-highlight-alcohol",
            "excel",
            "In Wine.xlsx, make the font of the cell holding the highest alcohol value opaque red (aRGB FFFF0000) and bold; leave every other cell as it is.",
            "1. Click the alcohol column (B) of sheet Wines and sort nothing: use Find or MAX to locate the highest value.\n2. Select that one cell, set its font color to FF0000 and make it bold.\n3. Save the file.",
            {"Wine.xlsx": workbook({"Wines": wine})},
            table_eval(
                "xlsx-wine-highlight-alcohol",
                "Wine.xlsx",
                "Wine_gold.xlsx",
                [
                    data("Wines"),
                    {
                        "type": "style",
                        "sheet_idx0": "RNWines",
                        "sheet_idx1": "ENWines",
                        "props": ["font_color", "font_bold"],
                    },
                ],
            ),
            """from openpyxl import load_workbook
from openpyxl.styles import Font

book = load_workbook("Wine.xlsx")
sheet = book["Wines"]
best = max(range(2, sheet.max_row + 1), key=lambda row: sheet.cell(row, 2).value)
sheet.cell(best, 2).font = Font(color="FFFF0000", bold=True)
book.save("Wine.xlsx")
""",
            "py",
            tags,
            excel,
            gold={"Wine_gold.xlsx": "Wine.xlsx"},
            actions=4,
        ),
        Spec(
            "xlsx-longley-yearly-changes",
            "excel",
            'In Longley.xlsx, add a sheet "Changes" with the headers "Year", "GNP change" and "Employment change": one row per year from 1948 to 1962 with the change from the year before of GNP (in percent, rounded to 2 decimals) and of total employment (TOTEMP, the plain difference).'
            + SAVE_NOTE,
            "1. Add the sheet Changes with headers Year, GNP change and Employment change.\n2. For each year from 1948 put =ROUND((GNP-previous GNP)/previous GNP*100,2) in column B and TOTEMP minus the previous TOTEMP in column C.\n3. Save.",
            {"Longley.xlsx": workbook({"Economy": longley})},
            table_eval(
                "xlsx-longley-yearly-changes",
                "Longley.xlsx",
                "Longley_gold.xlsx",
                [
                    data("Changes"),
                    {
                        "type": "check_cell",
                        "sheet_idx": "RNChanges",
                        "coordinate": "B2",
                        "props": {"value": {"method": "approx:0.01", "ref": 10.73}},
                    },
                ],
            ),
            """import pandas as pd
from openpyxl import load_workbook

economy = pd.read_excel("Longley.xlsx", sheet_name="Economy")
book = load_workbook("Longley.xlsx")
sheet = book.create_sheet("Changes")
sheet.append(["Year", "GNP change", "Employment change"])
for before, now in zip(economy.itertuples(index=False), list(economy.itertuples(index=False))[1:]):
    sheet.append([int(now.YEAR), round((now.GNP - before.GNP) / before.GNP * 100, 2), int(now.TOTEMP - before.TOTEMP)])
book.save("Longley.xlsx")
""",
            "py",
            tags,
            excel,
            gold={"Longley_gold.xlsx": "Longley.xlsx"},
            actions=6,
        ),
    ]
    return specs


def dbt_spec(
    spec_id: str,
    project: str,
    instruction: str,
    tutorial: str,
    files: dict[str, str],
    solution: str,
    command: str,
    patterns: list[str],
    tables: list[str],
    *,
    extra_init: str = "",
    yaml_rules: list[Any] | None = None,
    check_type: list[str] | None = None,
    actions: int = 5,
    extra_files: dict[str, Callable[[Path], None]] | None = None,
) -> Spec:
    """A dbt + DuckDB task: the project is unzipped to ~/projects/PROJECT; the check script runs a dbt
    command in it, and the tables are compared with the gold database."""
    funcs: list[str] = ["check_include_exclude", "check_local_database"]
    results: list[Any] = [script_result(spec_id, "dbt"), vm_file(f"projects/{project}/{project}.duckdb")]
    expected: list[Any] = [
        rule_eval(["succeed"], ["failed"]),
        local_file(spec_id, "dbt", f"{project}.gold.duckdb"),
    ]
    options: list[Any] = [
        {},
        {"db_type": "duckdb", "check_type": check_type or ["table-schema-content"], "table_targets": tables},
    ]
    if yaml_rules:
        funcs.append("check_yaml_file")
        results.append(vm_file(f"projects/{project}/models/schema.yml"))
        expected.append({"type": "rule", "rules": yaml_rules})
        options.append({})
    return Spec(
        spec_id,
        "dbt",
        instruction,
        tutorial,
        {f"{project}.zip": dbt_zip(project, files), **(extra_files or {})},
        {"func": funcs, "conj": "and", "result": results, "expected": expected, "options": options},
        solution,
        "sh",
        ["cli", "data_transformation", "abstract"],
        ["dbt", "duckdb", "vscode", "terminal"],
        init=DBT_INIT.format(project=project, extra=extra_init),
        eval_script=dbt_eval(project, command, patterns),
        gold={f"{project}.gold.duckdb": f"projects/{project}/{project}.duckdb"},
        actions=actions,
    )


def csv_text(name: str, columns: list[str] | None = None, rename: dict[str, str] | None = None) -> str:
    frame = real(name)
    frame = frame[columns] if columns else frame
    return frame.rename(columns=rename or {}).to_csv(index=False)


def dbt_specs() -> list[Spec]:
    cars = csv_text("cars.csv", ["Name", "Miles_per_Gallon", "Cylinders", "Horsepower", "Weight_in_lbs", "Origin"],
                    {"Name": "name", "Miles_per_Gallon": "mpg", "Cylinders": "cylinders", "Horsepower": "horsepower",
                     "Weight_in_lbs": "weight", "Origin": "origin"})  # fmt: skip
    stocks = real("stocks.csv")
    stocks["date"] = pd.to_datetime(stocks["date"], format="%b %d %Y").dt.strftime("%Y-%m-%d")
    stocks_csv = stocks.to_csv(index=False)
    grunfeld = csv_text("grunfeld.csv")
    iowa = real("iowa-electricity.csv")
    iowa["year"] = iowa["year"].str[:4].astype(int)
    weather = csv_text("seattle-weather.csv")
    longley = (
        real("eda-macro-recessions/source/longley.csv")
        .drop(columns=["Obs"])
        .rename(columns=str.lower)
        .to_csv(index=False)
    )
    wine = csv_text("wine.csv", ["cultivar", "alcohol", "malic_acid", "color_intensity", "proline"])
    return [
        dbt_spec(
            "dbt-cars-origin-model",
            "garage",
            "Complete the dbt model origin_summary in the project ~/projects/garage as its comments ask, then load the seeds and build the model.",
            "1. In a terminal, cd ~/projects/garage and run `dbt seed` to load seeds/cars.csv.\n2. Open models/origin_summary.sql and replace the placeholder with: origin, count(*) as cars, round(avg(mpg), 2) as avg_mpg, max(horsepower) as max_horsepower, grouped by origin and ordered by origin.\n3. Run `dbt run`.",
            {
                "seeds/cars.csv": cars,
                "models/origin_summary.sql": "{{ config(materialized='table') }}\n\n-- one row per origin, ordered by origin, with the columns:\n--   origin, cars (number of cars), avg_mpg (average mpg, rounded to 2 decimals),\n--   max_horsepower (the largest horsepower)\nselect\n    /* code here */\nfrom {{ ref('cars') }}\n",
            },
            """cd ~/projects/garage
cat > models/origin_summary.sql <<'SQL'
{{ config(materialized='table') }}

select
    origin,
    count(*) as cars,
    round(avg(mpg), 2) as avg_mpg,
    max(horsepower) as max_horsepower
from {{ ref('cars') }}
group by origin
order by origin
SQL
dbt build
""",
            "dbt run",
            ["Completed successfully", "OK created sql table model .*origin_summary"],
            ["origin_summary"],
            actions=4,
        ),
        dbt_spec(
            "dbt-stocks-materialize-tables",
            "market",
            "The models of the dbt project ~/projects/market are built as views. Make all of them tables, then load the seeds and run the project.",
            "1. Open dbt_project.yml and under models: market: set +materialized: table.\n2. Remove the view config at the top of models/monthly_prices.sql.\n3. Run `dbt seed` and `dbt run`.",
            {
                "seeds/stock_prices.csv": stocks_csv,
                "models/monthly_prices.sql": "{{ config(materialized='view') }}\n\nselect symbol, cast(date as date) as month, price\nfrom {{ ref('stock_prices') }}\norder by symbol, month\n",
                "models/yearly_prices.sql": "select symbol, year(month) as year, round(avg(price), 2) as avg_price\nfrom {{ ref('monthly_prices') }}\ngroup by 1, 2\norder by 1, 2\n",
            },
            """cd ~/projects/market
printf 'models:\\n  market:\\n    +materialized: table\\n' >> dbt_project.yml
sed -i "s/{{ config(materialized='view') }}//" models/monthly_prices.sql
dbt build
""",
            "dbt run",
            [
                "Completed successfully",
                "OK created sql table model .*monthly_prices",
                "OK created sql table model .*yearly_prices",
            ],
            ["monthly_prices", "yearly_prices"],
            actions=5,
        ),
        dbt_spec(
            "dbt-grunfeld-tests",
            "investment",
            "Add tests to the firm_totals model of ~/projects/investment: in models/schema.yml, its column firm must be unique and not null, and total_invest not null. Build the project so the tests run and pass.",
            "1. Open models/schema.yml.\n2. Under the column firm of model firm_totals add the tests unique and not_null; under total_invest add not_null.\n3. Run `dbt build`.",
            {
                "seeds/grunfeld.csv": grunfeld,
                "models/firm_totals.sql": "{{ config(materialized='table') }}\n\nselect firm, round(sum(invest), 1) as total_invest, count(*) as years\nfrom {{ ref('grunfeld') }}\ngroup by firm\norder by firm\n",
                "models/schema.yml": "version: 2\n\nmodels:\n  - name: firm_totals\n    columns:\n      - name: firm\n      - name: total_invest\n      - name: years\n",
            },
            """cd ~/projects/investment
cat > models/schema.yml <<'YAML'
version: 2

models:
  - name: firm_totals
    columns:
      - name: firm
        tests:
          - unique
          - not_null
      - name: total_invest
        tests:
          - not_null
      - name: years
YAML
dbt build
""",
            "dbt build",
            ["Completed successfully", "PASS=5", "OK created sql table model .*firm_totals"],
            ["firm_totals"],
            yaml_rules=[
                [
                    "contain",
                    ["models", ["name", "firm_totals"], "columns", ["name", "firm"], "tests"],
                    "unique",
                ],
                [
                    "contain",
                    ["models", ["name", "firm_totals"], "columns", ["name", "firm"], "tests"],
                    "not_null",
                ],
                [
                    "contain",
                    ["models", ["name", "firm_totals"], "columns", ["name", "total_invest"], "tests"],
                    "not_null",
                ],
            ],
            actions=4,
        ),
        dbt_spec(
            "dbt-iowa-new-model",
            "energy",
            "In the dbt project ~/projects/energy, create a table model renewable_share: one row per year (ascending) with the columns year, total (all net generation that year) and renewable_pct (the share of the source 'Renewables' in percent, rounded to 1 decimal). Load the seeds and run it.",
            "1. Create models/renewable_share.sql with {{ config(materialized='table') }}.\n2. Select year, sum(net_generation) as total and round(100.0 * sum(case when source = 'Renewables' then net_generation else 0 end) / sum(net_generation), 1) as renewable_pct from {{ ref('iowa_generation') }}, grouped and ordered by year.\n3. Run `dbt seed` and `dbt run`.",
            {"seeds/iowa_generation.csv": iowa.to_csv(index=False), "models/.gitkeep": ""},
            """cd ~/projects/energy
cat > models/renewable_share.sql <<'SQL'
{{ config(materialized='table') }}

select
    year,
    sum(net_generation) as total,
    round(100.0 * sum(case when source = 'Renewables' then net_generation else 0 end) / sum(net_generation), 1) as renewable_pct
from {{ ref('iowa_generation') }}
group by year
order by year
SQL
dbt build
""",
            "dbt run",
            ["Completed successfully", "OK created sql table model .*renewable_share"],
            ["renewable_share"],
            actions=4,
        ),
        dbt_spec(
            "dbt-weather-add-seed",
            "weather",
            "The model weather_summary of ~/projects/weather needs a seed that is missing: move ~/weather_labels.csv into the project's seeds folder, then load the seeds and run the project.",
            "1. Run `mv ~/weather_labels.csv ~/projects/weather/seeds/`.\n2. cd ~/projects/weather and run `dbt seed`.\n3. Run `dbt run`.",
            {
                "seeds/seattle_weather.csv": weather,
                "models/weather_summary.sql": "{{ config(materialized='table') }}\n\nselect l.label, count(*) as days, round(avg(w.precipitation), 2) as avg_precipitation\nfrom {{ ref('seattle_weather') }} w\njoin {{ ref('weather_labels') }} l on l.weather = w.weather\ngroup by l.label\norder by l.label\n",
            },
            """mv ~/weather_labels.csv ~/projects/weather/seeds/
cd ~/projects/weather
dbt build
""",
            "dbt run",
            ["Completed successfully", "OK created sql table model .*weather_summary"],
            ["weather_summary", "weather_labels"],
            extra_files={
                "weather_labels.csv": text(
                    "weather,label\ndrizzle,Drizzle\nfog,Fog\nrain,Rain\nsnow,Snow\nsun,Sunny\n"
                )
            },
            actions=3,
        ),
        dbt_spec(
            "dbt-longley-fix-model",
            "economy",
            "The dbt project ~/projects/economy fails to run: find and fix the error in its model, then load the seeds and run it.",
            "1. Run `dbt seed` then `dbt run` in ~/projects/economy and read the error.\n2. In models/employment_ratio.sql the column unemployed does not exist: the seed names it unemp.\n3. Run `dbt run` again.",
            {
                "seeds/longley.csv": longley,
                "models/employment_ratio.sql": "{{ config(materialized='table') }}\n\nselect\n    year,\n    totemp,\n    round(100.0 * unemployed / (totemp + unemp), 2) as unemployment_rate\nfrom {{ ref('longley') }}\norder by year\n",
            },
            """cd ~/projects/economy
python - <<'PY'
from pathlib import Path
path = Path("models/employment_ratio.sql")
path.write_text(path.read_text().replace("unemployed", "unemp"))
PY
dbt build
""",
            "dbt run",
            ["Completed successfully", "OK created sql table model .*employment_ratio"],
            ["employment_ratio"],
            actions=4,
        ),
        dbt_spec(
            "dbt-wine-jinja-means",
            "cellar",
            "In ~/projects/cellar, create a table model cultivar_means with one row per cultivar (ascending) and the average of alcohol, malic_acid, color_intensity and proline, each rounded to 2 decimals and named avg_<column>. Load the seeds, run the model and make sure its tests pass.",
            "1. Create models/cultivar_means.sql; a Jinja loop over ['alcohol', 'malic_acid', 'color_intensity', 'proline'] writes round(avg(col), 2) as avg_col.\n2. Group and order by cultivar, materialize as table.\n3. Run `dbt build`.",
            {
                "seeds/wine.csv": wine,
                "models/schema.yml": "version: 2\n\nmodels:\n  - name: cultivar_means\n    columns:\n      - name: cultivar\n        tests:\n          - unique\n          - not_null\n",
            },
            """cd ~/projects/cellar
cat > models/cultivar_means.sql <<'SQL'
{{ config(materialized='table') }}
{% set measures = ['alcohol', 'malic_acid', 'color_intensity', 'proline'] %}

select
    cultivar,
    {% for column in measures %}round(avg({{ column }}), 2) as avg_{{ column }}{% if not loop.last %},{% endif %}
    {% endfor %}
from {{ ref('wine') }}
group by cultivar
order by cultivar
SQL
dbt build
""",
            "dbt build",
            ["Completed successfully", "PASS=4", "OK created sql table model .*cultivar_means"],
            ["cultivar_means"],
            actions=4,
        ),
    ]


RUN_NOTEBOOK = """import subprocess

import nbformat


def run(path, replace=None, append=()):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        for old, new in (replace or {}).items():
            cell.source = cell.source.replace(old, new)
    for source in append:
        notebook.cells.append(nbformat.v4.new_code_cell(source))
    nbformat.write(notebook, path)
    command = ["jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace", path]
    subprocess.run(command, check=True, capture_output=True, text=True)
"""


def jupyter_spec(
    spec_id: str,
    instruction: str,
    tutorial: str,
    files: dict[str, Callable[[Path], None]],
    evaluator: dict[str, Any],
    solution: str,
    gold: dict[str, str],
    actions: int = 5,
    interface: str = "cli+gui",
) -> Spec:
    return Spec(
        spec_id,
        "jupyter",
        instruction,
        tutorial,
        files,
        evaluator,
        solution,
        "py",
        [interface, "traditional_data_processing", "abstract"],
        ["chromium", "jupyter"],
        init="#!/bin/bash\nexec 1>/dev/null 2>/dev/null\nsource /home/user/anaconda3/etc/profile.d/conda.sh\nconda activate jupyter\n",
        destinations={name: f"Desktop/{name}" for name in files},
        gold=gold,
        actions=actions,
    )


def notebook_eval(
    spec_id: str, name: str, gold: str, func: str = "compare_notebook_outputs"
) -> dict[str, Any]:
    return {
        "postconfig": [],
        "func": func,
        "result": vm_file(f"Desktop/{name}"),
        "expected": local_file(spec_id, "jupyter", gold),
    }


def jupyter_specs() -> list[Spec]:
    iris = real("eda-wine-cultivar-profile/source/iris.csv")
    wine = real("wine.csv")
    cars = real("cars.csv")
    stocks = real("stocks.csv")
    grunfeld = real("grunfeld.csv")
    load = "import pandas as pd\n"
    return [
        jupyter_spec(
            "nb-iris-species-means",
            "Complete the #TODO cells of ~/Desktop/iris.ipynb (add code only to the existing cells), then run all cells in order in a fresh kernel and save the notebook.",
            "1. In the first TODO cell compute means = iris.groupby('species').mean().round(2).\n2. In the second, print(means.loc['versicolor', 'petal_length_cm']).\n3. Restart the kernel, run all cells and save.",
            {
                "iris.ipynb": notebook(
                    [
                        ("md", "# Iris species"),
                        ("code", load + "iris = pd.read_csv('iris.csv')"),
                        ("code", "print(iris.shape)"),
                        (
                            "code",
                            "# TODO: means = the mean of every measurement per species, rounded to 2 decimals\n",
                        ),
                        ("code", "# TODO: print the mean petal length of versicolor\n"),
                        ("code", "means"),
                    ]
                ),
                "iris.csv": frame_csv(iris),
            },
            notebook_eval("nb-iris-species-means", "iris.ipynb", "iris_gold.ipynb"),
            RUN_NOTEBOOK
            + """
run("Desktop/iris.ipynb", replace={
    "# TODO: means = the mean of every measurement per species, rounded to 2 decimals\\n": "means = iris.groupby('species').mean().round(2)",
    "# TODO: print the mean petal length of versicolor\\n": "print(means.loc['versicolor', 'petal_length_cm'])",
})
""",
            {"iris_gold.ipynb": "Desktop/iris.ipynb"},
            actions=6,
        ),
        jupyter_spec(
            "nb-wine-decision-tree",
            "In ~/Desktop/wine_tree.ipynb, fill in the #TODO cells: train a DecisionTreeClassifier with random_state=0 and max_depth=3 on the training split and store its test predictions in y_pred. Then run all cells in order and save the notebook.",
            "1. In the TODO cell write: model = DecisionTreeClassifier(random_state=0, max_depth=3).fit(X_train, y_train) and y_pred = model.predict(X_test).\n2. Run all cells (Run > Restart Kernel and Run All Cells) and save.",
            {
                "wine_tree.ipynb": notebook(
                    [
                        ("md", "# Wine cultivars with a decision tree"),
                        (
                            "code",
                            load
                            + "from sklearn.model_selection import train_test_split\nfrom sklearn.tree import DecisionTreeClassifier\nfrom sklearn.metrics import accuracy_score",
                        ),
                        (
                            "code",
                            "wine = pd.read_csv('wine.csv')\nX, y = wine.drop(columns='cultivar'), wine['cultivar']\nX_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=1, stratify=y)",
                        ),
                        ("code", "# TODO: train the tree and predict the test set into y_pred\n"),
                        ("code", "print('accuracy:', round(accuracy_score(y_test, y_pred), 4))"),
                    ]
                ),
                "wine.csv": frame_csv(wine),
            },
            notebook_eval("nb-wine-decision-tree", "wine_tree.ipynb", "wine_tree_gold.ipynb"),
            RUN_NOTEBOOK
            + """
run("Desktop/wine_tree.ipynb", replace={
    "# TODO: train the tree and predict the test set into y_pred\\n":
        "model = DecisionTreeClassifier(random_state=0, max_depth=3).fit(X_train, y_train)\\ny_pred = model.predict(X_test)",
})
""",
            {"wine_tree_gold.ipynb": "Desktop/wine_tree.ipynb"},
            actions=4,
        ),
        jupyter_spec(
            "nb-cars-heaviest-csv",
            "Using the notebook on the Desktop, find the 10 heaviest cars in cars.csv and save them to ~/Desktop/result.csv in the format of that file (columns Name, Origin, Weight_in_lbs; heaviest first, ties by name).",
            "1. Open result.csv to see the columns.\n2. In notebook.ipynb add a cell: cars.sort_values(['Weight_in_lbs', 'Name'], ascending=[False, True]).head(10)[['Name', 'Origin', 'Weight_in_lbs']].to_csv('result.csv', index=False).\n3. Run it.",
            {
                "notebook.ipynb": notebook([("code", load + "cars = pd.read_csv('cars.csv')\ncars.head()")]),
                "cars.csv": frame_csv(cars),
                "result.csv": text("Name,Origin,Weight_in_lbs\n"),
            },
            {
                "func": "compare_csv",
                "result": vm_file("Desktop/result.csv"),
                "expected": local_file("nb-cars-heaviest-csv", "jupyter", "gold.csv"),
            },
            RUN_NOTEBOOK
            + """
run("Desktop/notebook.ipynb", append=["top = cars.sort_values(['Weight_in_lbs', 'Name'], ascending=[False, True]).head(10)\\n"
                                      "top[['Name', 'Origin', 'Weight_in_lbs']].to_csv('result.csv', index=False)"])
""",
            {"gold.csv": "Desktop/result.csv"},
            actions=5,
        ),
        jupyter_spec(
            "nb-stocks-run-all",
            "The notebook ~/Desktop/stocks.ipynb has never been run, and one of its cells asks for a column the data does not have (its columns are symbol, date and price). Fix that cell, then run all its cells in order in a fresh kernel and save it with its outputs.",
            "1. Open stocks.ipynb.\n2. In the last cell the column is named price, not Price: fix it.\n3. Click Run > Restart Kernel and Run All Cells.\n4. Save the notebook.",
            {
                "stocks.ipynb": notebook(
                    [
                        ("md", "# Stock prices"),
                        ("code", load + "stocks = pd.read_csv('stocks.csv')"),
                        ("code", "print(stocks['symbol'].value_counts().sort_index().to_dict())"),
                        ("code", "stocks.groupby('symbol')['Price'].max().round(2)"),
                    ]
                ),
                "stocks.csv": frame_csv(stocks),
            },
            {
                "postconfig": [],
                "func": ["is_jupyter_cell_executed", "compare_notebook_outputs"],
                "conj": "and",
                "result": [vm_file("Desktop/stocks.ipynb"), vm_file("Desktop/stocks.ipynb")],
                "expected": [
                    {"type": "rule", "rules": {"expected": []}},
                    local_file("nb-stocks-run-all", "jupyter", "stocks_gold.ipynb"),
                ],
                "options": [{}, {}],
            },
            RUN_NOTEBOOK + '\nrun("Desktop/stocks.ipynb", replace={"[\'Price\']": "[\'price\']"})\n',
            {"stocks_gold.ipynb": "Desktop/stocks.ipynb"},
            actions=4,
            interface="gui",
        ),
        jupyter_spec(
            "nb-grunfeld-clear-outputs",
            "Clear every output of ~/Desktop/grunfeld.ipynb (no cell may keep an output or an execution count) and save it.",
            "1. Open grunfeld.ipynb.\n2. Click Edit > Clear Outputs of All Cells.\n3. Save the notebook.",
            {
                "grunfeld.ipynb": lambda path: _executed_notebook(path, grunfeld),
                "grunfeld.csv": frame_csv(grunfeld),
            },
            {
                "postconfig": [],
                "func": "are_jupyter_outputs_cleared",
                "result": vm_file("Desktop/grunfeld.ipynb"),
                "expected": {"type": "rule", "rules": {"expected": []}},
            },
            """import nbformat

notebook = nbformat.read("Desktop/grunfeld.ipynb", as_version=4)
for cell in notebook.cells:
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
nbformat.write(notebook, "Desktop/grunfeld.ipynb")
""",
            {},
            actions=3,
            interface="gui",
        ),
        jupyter_spec(
            "nb-script-to-notebook",
            "Create a notebook ~/Desktop/analysis.ipynb holding the code of ~/Desktop/analysis.py in a single code cell (the file's text exactly, without its final newline). You don't need to run it.",
            "1. In JupyterLab create a new Python 3 notebook named analysis.ipynb on the Desktop.\n2. Paste the content of analysis.py into its first cell.\n3. Save it.",
            {
                "analysis.py": text(
                    "import pandas as pd\n\nwine = pd.read_csv('wine.csv')\nprint(wine.groupby('cultivar')['alcohol'].mean().round(2))\n"
                ),
                "wine.csv": frame_csv(wine),
            },
            notebook_eval(
                "nb-script-to-notebook", "analysis.ipynb", "analysis_gold.ipynb", "compare_notebook_cells"
            ),
            """from pathlib import Path

import nbformat

code = Path("Desktop/analysis.py").read_text().removesuffix("\\n")
nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), "Desktop/analysis.ipynb")
""",
            {"analysis_gold.ipynb": "Desktop/analysis.ipynb"},
            actions=4,
            interface="gui",
        ),
        jupyter_spec(
            "nb-merge-and-run",
            "Append the cells of ~/Desktop/part2.ipynb to the end of ~/Desktop/part1.ipynb, then run all cells of part1.ipynb in order in a fresh kernel and save it.",
            "1. Open part2.ipynb, select all its cells and copy them.\n2. Open part1.ipynb, paste them after its last cell.\n3. Run > Restart Kernel and Run All Cells, then save part1.ipynb.",
            {
                "part1.ipynb": notebook(
                    [
                        ("md", "# Car efficiency"),
                        ("code", load + "cars = pd.read_csv('cars.csv')"),
                        ("code", "print(len(cars))"),
                    ]
                ),
                "part2.ipynb": notebook(
                    [
                        (
                            "code",
                            "by_origin = cars.groupby('Origin')['Miles_per_Gallon'].median()\nprint(by_origin.to_dict())",
                        ),
                        ("code", "print(cars.loc[cars['Miles_per_Gallon'].idxmax(), 'Name'])"),
                    ]
                ),
                "cars.csv": frame_csv(cars),
            },
            notebook_eval("nb-merge-and-run", "part1.ipynb", "part1_gold.ipynb"),
            RUN_NOTEBOOK
            + """
second = nbformat.read("Desktop/part2.ipynb", as_version=4)
run("Desktop/part1.ipynb", append=[cell.source for cell in second.cells])
""",
            {"part1_gold.ipynb": "Desktop/part1.ipynb"},
            actions=6,
        ),
    ]


def _executed_notebook(path: Path, grunfeld: pd.DataFrame) -> None:
    """A notebook saved with outputs, made without a kernel (its outputs are what the code prints)."""
    made = new_notebook(cells=[
        new_code_cell("import pandas as pd\ngrunfeld = pd.read_csv('grunfeld.csv')", execution_count=1),
        new_code_cell("print(grunfeld['firm'].nunique())", execution_count=2,
                      outputs=[nbformat.v4.new_output("stream", name="stdout", text=f"{grunfeld['firm'].nunique()}\n")]),
        new_code_cell("grunfeld['invest'].sum().round(1)", execution_count=3,
                      outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": repr(round(float(grunfeld['invest'].sum()), 1))}, execution_count=3)]),
    ])  # fmt: skip
    nbformat.write(made, str(path))


def kernel_spec() -> Spec:
    """A terminal task: register a Jupyter kernel; the check script lists the kernels."""
    return Spec(
        "nb-register-kernel",
        "jupyter",
        'Register the current Python environment as a Jupyter kernel for your user, named "analysis" and displayed as "Python (analysis)".',
        '1. In a terminal run `python -m ipykernel install --user --name analysis --display-name "Python (analysis)"`.\n2. Check it with `jupyter kernelspec list`.',
        {},
        {
            "postconfig": [],
            "func": "check_include_exclude",
            "result": script_result("nb-register-kernel", "jupyter"),
            "expected": rule_eval(["analysis", "python3"], []),
        },
        'python -m ipykernel install --user --name analysis --display-name "Python (analysis)"\n',
        "sh",
        ["cli", "traditional_data_processing", "abstract"],
        ["jupyter", "terminal"],
        init="#!/bin/bash\nsource /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null\nconda activate jupyter\n",
        eval_script="#!/bin/bash\nconda activate jupyter\njupyter kernelspec list\n",
        actions=2,
    )


def all_specs() -> list[Spec]:
    return [*excel_specs(), *dbt_specs(), *jupyter_specs(), kernel_spec(), *app_specs()]


# ---- Dagster, Airflow and Superset tasks: services in the sandbox (docs/apps.md) --------------------------


def barley() -> pd.DataFrame:
    """The Minnesota barley trials (vega-datasets' barley.json, shipped by the workspace suite)."""
    return pd.read_json(DATA / "eda-barley-site-bar" / "source" / "barley.json")


DAGSTER_INIT = """#!/bin/bash
# the Dagster project {project} in ~/projects, its webserver and daemon on :3000 (as the official tasks do)
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate dagster
mkdir -p ~/projects && cd ~/projects
unzip -q ~/{project}.zip && rm -f ~/{project}.zip
cd {project}
export DAGSTER_HOME=/home/user/.dagster
dagster dev -p 3000 > start_server.log 2>&1 &
for i in $(seq 60); do grep -qi "Serving dagster-webserver on" start_server.log && break; sleep 1; done
"""
BARLEY_ASSETS = '''from pathlib import Path

import pandas as pd
from dagster import asset

DATA = Path(__file__).resolve().parents[1] / "data"


@asset
def barley_trials() -> pd.DataFrame:
    """The Minnesota barley trials of 1931 and 1932: one row per site, variety and year (yield in bushels per acre)."""
    return pd.read_csv(DATA / "barley.csv")
'''
BARLEY_SOLUTION = """cd ~/projects/barley
cat >> barley/assets.py <<'PY'


@asset
def yield_by_site(barley_trials: pd.DataFrame) -> None:
    table = barley_trials.groupby("site", as_index=False)["yield"].mean().rename(columns={"yield": "mean_yield"})
    table["mean_yield"] = table["mean_yield"].round(2)
    table.sort_values("mean_yield", ascending=False).to_csv(DATA / "yield_by_site.csv", index=False)
PY
source ~/anaconda3/etc/profile.d/conda.sh
conda activate dagster
export DAGSTER_HOME=/home/user/.dagster
dagster asset materialize -m barley --select barley_trials,yield_by_site
"""
# the asset is in the served definitions downstream of barley_trials and was materialized through the
# instance; then its file is made again by the agent's code in a scratch instance, for the CSV comparison
BARLEY_EVAL = """#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate dagster
cd /home/user/projects/barley
query='{"query": "{ assetNodes(assetKeys: [{path: [\\"yield_by_site\\"]}]) { dependencyKeys { path } assetMaterializations(limit: 1) { runId } } }"}'
answer=$(curl -s -X POST http://localhost:3000/graphql -H 'Content-Type: application/json' -d "$query")
python - "$answer" <<'PY'
import json, sys
try:
    nodes = json.loads(sys.argv[1])["data"]["assetNodes"]
except (ValueError, KeyError, TypeError):
    nodes = []
depends = bool(nodes) and ["barley_trials"] in [key["path"] for key in nodes[0]["dependencyKeys"]]
print("yield_by_site asset " + ("succeed" if depends else "failed"))
print("yield_by_site materialization " + ("succeed" if nodes and nodes[0]["assetMaterializations"] else "failed"))
PY
rm -f data/yield_by_site.csv
export DAGSTER_HOME=$(mktemp -d)
if dagster asset materialize -m barley --select barley_trials,yield_by_site > /dev/null 2>&1; then
    echo "materialize again succeed"
else
    echo "materialize again failed"
fi
"""


def dagster_spec() -> Spec:
    table = barley().groupby("site", as_index=False)["yield"].mean().rename(columns={"yield": "mean_yield"})
    table["mean_yield"] = table["mean_yield"].round(2)
    gold = table.sort_values("mean_yield", ascending=False)
    return Spec(
        "dagster-barley-site-yields",
        "dagster",
        "In the Dagster project ~/projects/barley (its UI is open at localhost:3000), add to the module "
        "barley/assets.py an asset `yield_by_site`, computed from the asset `barley_trials`, that writes "
        "data/yield_by_site.csv: one row per site with the columns site and mean_yield (the mean yield of "
        "all the site's trials, rounded to 2 decimals), highest mean_yield first, written as pandas' "
        "to_csv writes it without the index. Then materialize it (with barley_trials) in this Dagster "
        "instance.",
        """1. Open barley/assets.py in the project ~/projects/barley.
2. Add an asset `yield_by_site(barley_trials: pd.DataFrame)` that groups by site, takes the mean of yield
   as mean_yield rounded to 2 decimals, sorts it descending and writes DATA / "yield_by_site.csv" with
   to_csv(index=False).
3. In the Dagster UI, click "Reload definitions" on the Assets page, select barley_trials and
   yield_by_site and click "Materialize selected" (or run `dagster asset materialize -m barley --select
   barley_trials,yield_by_site` with DAGSTER_HOME=~/.dagster).""",
        {
            "barley.zip": project_zip(
                "barley",
                {
                    "pyproject.toml": '[tool.dagster]\nmodule_name = "barley"\n',
                    "barley/__init__.py": "from dagster import Definitions, load_assets_from_modules\n\n"
                    "from . import assets\n\ndefs = Definitions(assets=load_assets_from_modules([assets]))\n",
                    "barley/assets.py": BARLEY_ASSETS,
                    "data/barley.csv": barley()[["site", "variety", "year", "yield"]].to_csv(index=False),
                },
            )
        },
        {
            "func": ["check_include_exclude", "compare_csv"],
            "conj": "and",
            "result": [
                script_result("dagster-barley-site-yields", "dagster"),
                vm_file("projects/barley/data/yield_by_site.csv"),
            ],
            "expected": [
                rule_eval(["asset succeed", "materialization succeed", "again succeed"], ["failed"]),
                local_file("dagster-barley-site-yields", "dagster", "yield_by_site_gold.csv"),
            ],
            "options": [{}, {}],
        },
        BARLEY_SOLUTION,
        tags=["cli", "gui", "data_orchestration", "abstract"],
        related_apps=["dagster", "chromium", "vscode", "terminal"],
        init=DAGSTER_INIT.format(project="barley"),
        eval_script=BARLEY_EVAL,
        gold_files={"yield_by_site_gold.csv": frame_csv(gold)},
        web_ui={
            "type": "dagster_webui_init",
            "parameters": {
                "listening_port": 9222,
                "url": "http://localhost:3000",
                "actions": [{"type": "close_popups"}],
            },
        },
        actions=6,
    )


ASTRO_INIT = """#!/bin/bash
# the Astro project {project} in ~/projects, started with `astro dev start` (as the official tasks do)
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate airflow
mkdir -p ~/projects && cd ~/projects
unzip -q ~/{project}.zip && rm -f ~/{project}.zip
cd {project}
echo -e "y\\n" | astro dev init > /dev/null
rm -f dags/exampledag.py tests/dags/test_dag_example.py
astro dev start --no-browser
"""
WEATHER_DAG = '''"""Monthly precipitation in Seattle, from the daily weather log in include/."""

import csv
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from airflow.decorators import dag, task

INCLUDE = Path(__file__).resolve().parents[1] / "include"


@dag(start_date=datetime(2024, 1, 1), schedule=None, catchup=False, tags=["weather"])
def seattle_monthly_weather():
    @task
    def monthly_totals() -> list[dict]:
        totals = defaultdict(float)
        with open(INCLUDE / "seattle_weather.csv", newline="") as source:
            for row in csv.DictReader(source):
                totals[row["date"][:7]] += float(row["precip"])
        return [{"month": month, "precipitation": round(total, 1)} for month, total in sorted(totals.items())]

    @task
    def write(rows: list[dict]) -> None:
        with open(INCLUDE / "monthly_precipitation.csv", "w", newline="") as target:
            writer = csv.DictWriter(target, fieldnames=["month", "precipitation"])
            writer.writeheader()
            writer.writerows(rows)

    write(monthly_totals())


seattle_monthly_weather()
'''
WEATHER_SOLUTION = """cd ~/projects/weather
sed -i 's/row\\["precip"\\]/row["precipitation"]/' dags/seattle_weather.py
api() { curl -s --fail --retry 20 --retry-delay 3 --retry-all-errors -u admin:admin -H 'Content-Type: application/json' "$@"; }
api -X PATCH http://localhost:8080/api/v1/dags/seattle_monthly_weather -d '{"is_paused": false}'
api -X POST http://localhost:8080/api/v1/dags/seattle_monthly_weather/dagRuns -d '{}'
for i in $(seq 150); do
    api http://localhost:8080/api/v1/dags/seattle_monthly_weather/dagRuns | grep -qE '"state": ?"success"' && exit 0
    sleep 2
done
exit 1
"""
# a run of the DAG succeeded in this Airflow (the metadata the UI shows), and its output is the gold's
WEATHER_EVAL = """#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate airflow
cd /home/user/projects/weather
CONTAINER=$(astro dev ps | grep webserver | awk '{print $1}')
runs=$(docker exec -i $CONTAINER airflow dags list-runs -d seattle_monthly_weather -o plain 2>/dev/null)
if echo "$runs" | grep -q "success"; then
    echo "seattle_monthly_weather run succeed"
else
    echo "seattle_monthly_weather run failed"
fi
"""


def monthly_precipitation(daily: pd.DataFrame) -> str:
    """What the fixed DAG writes: its own arithmetic (float sums in file order, rounded), as csv does."""
    totals: dict[str, float] = {}
    for date, amount in zip(daily["date"], daily["precipitation"], strict=True):
        totals[date[:7]] = totals.get(date[:7], 0.0) + float(amount)
    lines = ["month,precipitation", *(f"{m},{round(t, 1)}" for m, t in sorted(totals.items()))]
    return "\r\n".join(lines) + "\r\n"


def airflow_spec() -> Spec:
    daily = real("seattle_daily_2012_2015.csv")
    return Spec(
        "airflow-seattle-monthly-rain",
        "airflow",
        "The Astro project ~/projects/weather has a DAG `seattle_monthly_weather` (dags/seattle_weather.py) "
        "that should write include/monthly_precipitation.csv, the total precipitation of each month of the "
        "daily log include/seattle_weather.csv, but its task fails. Fix the DAG, then unpause and trigger it "
        "in the Airflow web UI (localhost:8080, user admin, password admin) and wait until its run succeeds.",
        """1. Open dags/seattle_weather.py: the task monthly_totals reads a column `precip`, but the log's
   column is `precipitation` (see the first line of include/seattle_weather.csv). Fix it and save.
2. In the Airflow UI, find seattle_monthly_weather in the DAG list and click the switch left of its name
   to unpause it.
3. Click the triangle (Trigger DAG) in its Actions column.
4. Wait until the run in the Runs column turns to success.""",
        {
            "weather.zip": project_zip(
                "weather",
                {
                    "dags/seattle_weather.py": WEATHER_DAG,
                    "include/seattle_weather.csv": daily.to_csv(index=False),
                    "requirements.txt": "",
                },
            )
        },
        {
            "func": ["check_include_exclude", "compare_csv"],
            "conj": "and",
            "result": [
                script_result("airflow-seattle-monthly-rain", "airflow"),
                vm_file("projects/weather/include/monthly_precipitation.csv"),
            ],
            "expected": [
                rule_eval(["run succeed"], ["failed"]),
                local_file("airflow-seattle-monthly-rain", "airflow", "monthly_precipitation_gold.csv"),
            ],
            "options": [{}, {}],
        },
        WEATHER_SOLUTION,
        tags=["cli", "gui", "data_orchestration", "abstract"],
        related_apps=["airflow", "chromium", "vscode", "terminal"],
        init=ASTRO_INIT.format(project="weather"),
        eval_script=WEATHER_EVAL,
        gold_files={"monthly_precipitation_gold.csv": text(monthly_precipitation(daily))},
        web_ui={
            "type": "astro_webui_init",
            "parameters": {
                "url": "http://localhost:8080",
                "listening_port": 9222,
                "actions": [{"type": "login", "username": "admin", "password": "admin"}],
            },
        },
        actions=6,
    )


SUPERSET_CARS_INIT = """#!/bin/bash
# Superset started as the official tasks start it, the table cars loaded into its PostgreSQL, and that
# database registered in Superset as "Vehicles" (as the official tasks register PublicData)
cd /home/user/projects/superset
docker compose -f docker-compose-image-tag.yml up --detach
for i in $(seq 60); do docker compose logs | grep -q "Init Step 4/4" && break; sleep 2; done
psql -q -v ON_ERROR_STOP=1 "postgresql://superset:superset@localhost:5432/superset" <<'SQL'
CREATE TABLE cars (name text, miles_per_gallon double precision, cylinders integer,
    displacement double precision, horsepower double precision, weight_in_lbs integer,
    acceleration double precision, year date, origin text);
\\copy cars FROM '/home/user/cars.csv' WITH (FORMAT csv, HEADER true)
SQL
rm -f /home/user/cars.csv
token=$(curl -s -X POST http://localhost:8088/api/v1/security/login -H "Content-Type: application/json" \\
    -d '{"username": "admin", "password": "admin", "provider": "db"}' | jq -rM .access_token)
curl -s -X POST http://localhost:8088/api/v1/database/ -H "Content-Type: application/json" \\
    -H "Authorization: Bearer ${token}" \\
    -d '{"database_name": "Vehicles", "sqlalchemy_uri": "postgresql://superset:superset@db:5432/superset"}'
"""
SUPERSET_API = """import json
import urllib.request

BASE = "http://localhost:8088/api/v1"


def call(method, path, body=None, token=None):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, method=method, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


login = {"username": "admin", "password": "admin", "provider": "db"}
token = call("POST", "/security/login", login)["access_token"]
"""
CARS_SOLUTION = (
    SUPERSET_API
    + """databases = call("GET", "/database/", token=token)["result"]
database = next(d for d in databases if d["database_name"] == "Vehicles")
made = call("POST", "/dataset/", {"database": database["id"], "schema": "public", "table_name": "cars"}, token=token)
info = call("GET", f"/dataset/{made['id']}", token=token)["result"]
keep = {"id", "expression", "description", "metric_name", "metric_type", "d3format", "verbose_name", "warning_text"}
metrics = [{k: v for k, v in m.items() if k in keep} for m in info["metrics"]]
metrics.append({"metric_name": "mean_horsepower", "expression": "AVG(horsepower)"})
call("PUT", f"/dataset/{made['id']}", {"metrics": metrics}, token=token)
"""
)
# the dataset and its metric exist, and the metric, asked through Superset's chart data API by origin,
# gives the mean horsepower of each origin (the values are the gold's, written into the check)
CARS_EVAL = """#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate superset
python - <<'PY'
{api}
expected = {expected}
try:
    datasets = call("GET", "/dataset/?q=(page_size:100)", token=token)["result"]
    found = [d for d in datasets if d["table_name"] == "cars" and d["database"]["database_name"] == "Vehicles"]
except Exception:
    found = []
print("dataset cars " + ("succeed" if found else "failed"))
info = call("GET", f"/dataset/{{found[0]['id']}}", token=token)["result"] if found else {{"metrics": []}}
named = any(m["metric_name"] == "mean_horsepower" for m in info["metrics"])
print("metric mean_horsepower " + ("succeed" if named else "failed"))
values = {{}}
if named:
    query = {{"metrics": ["mean_horsepower"], "columns": ["origin"], "row_limit": 100}}
    body = {{"datasource": {{"id": found[0]["id"], "type": "table"}}, "queries": [query], "result_format": "json", "result_type": "full"}}
    try:
        rows = call("POST", "/chart/data", body, token=token)["result"][0]["data"]
        values = {{row["origin"]: round(float(row["mean_horsepower"]), 2) for row in rows}}
    except Exception as exc:
        print(f"chart data: {{exc}}")
print("metric values " + ("succeed" if values == expected else f"failed: {{values}}"))
PY
"""


def superset_spec() -> Spec:
    cars = real("eda-cars-origin-summary/source/cars.csv")
    expected = cars.groupby("Origin")["Horsepower"].mean().round(2).to_dict()
    return Spec(
        "superset-cars-horsepower-metric",
        "superset",
        "Superset is open at localhost:8088 (user admin, password admin). Its database Vehicles holds a table "
        "cars (schema public) of 406 car models. Register that table as a dataset in Superset and add to "
        "the dataset a metric named mean_horsepower: the mean horsepower of the cars it is computed over.",
        """1. Click Datasets in the top menu, then "+ DATASET".
2. Choose the database Vehicles, the schema public and the table cars, and click "CREATE DATASET AND
   CREATE CHART".
3. Back in Datasets, click the edit icon of cars, open its Metrics tab and add a metric: name
   mean_horsepower, SQL expression AVG(horsepower).
4. Click Save and confirm.""",
        {"cars.csv": frame_csv(cars)},
        {
            "func": "check_include_exclude",
            "result": script_result("superset-cars-horsepower-metric", "superset"),
            "expected": rule_eval(
                ["dataset cars succeed", "metric mean_horsepower succeed", "values succeed"], ["failed"]
            ),
        },
        CARS_SOLUTION,
        "py",
        tags=["cli", "gui", "data_visualization", "abstract"],
        related_apps=["superset", "chromium"],
        init=SUPERSET_CARS_INIT,
        eval_script=CARS_EVAL.format(api=SUPERSET_API.strip(), expected=repr(expected)),
        web_ui={
            "type": "superset_webui_init",
            "parameters": {"listening_port": 9222, "url": "http://localhost:8088"},
        },
        actions=12,
    )


def app_specs() -> list[Spec]:
    return [dagster_spec(), airflow_spec(), superset_spec()]


if __name__ == "__main__":
    main()
