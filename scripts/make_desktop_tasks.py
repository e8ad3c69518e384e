"""Build the built-in `workflow` suite's desktop tasks, each solved by screen actions (`solution.actions.json`)
on the sample's screen, over the real data of the suite's other tasks (see scripts/make_workflow_suite.py):

- `excel/gui-*`: a column added to a real workbook in LibreOffice Calc, saved by the task's GUI postconfig
  (its window activated, Ctrl+S), as the official excel tasks are. The workbooks are those of the suite's
  excel tasks; the gold is the workbook with the column's values computed here with pandas; the solution is
  typed through the keyboard, so that it does not depend on where the application draws its cells.
- `jupyter/gui-jupyter-cars-fix-and-run`: a notebook over the cars data of `nb-cars-heaviest-csv`, shown in
  JupyterLab (`launch` of `jupyter lab DIR`, as the official notebook tasks start it), with one cell asking
  for a column the data does not have: the agent fixes it and runs all cells in JupyterLab; the postconfig
  waits for the kernel (`wait.sh`), activates JupyterLab and presses Ctrl+S, as the official "run all cells"
  tasks do. The gold is the fixed notebook executed here with nbclient; `compare_notebook_outputs` checks it.
- `dbt/gui-browser-stocks-docs-parent-model`: the dbt documentation (`dbt docs generate`) of the dbt project
  of `dbt-stocks-materialize-tables` served on the sandbox's loopback and shown in the browser; the agent
  opens the page of the model that another model is built from, and the browser's active tab is checked
  (`active_tab_info`, `is_expected_url_pattern_match`). The model names come from the project's own files.

The solutions use the keyboard only; where they must wait for an application (a page loading, a kernel
starting or running), a pyautogui step waits for what a user would watch: the window's title, JupyterLab's
kernel status (asked of its server, since a solution cannot look at the screen).

    python scripts/make_desktop_tasks.py [ID ...]   # rewrites these task folders (all, or the ones named)
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
import openpyxl
import pandas as pd
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "src" / "daharness" / "families" / "workflow" / "suite" / "examples"
EXCEL = EXAMPLES / "excel"
HOME = "/home/user"
SOURCE = ["daharness built-in workflow suite (scripts/make_desktop_tasks.py)"]


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
        "source": SOURCE,
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


def build(spec: DesktopSpec) -> Path:
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
    return folder


# ---- a notebook fixed and run in JupyterLab ---------------------------------------------------------------

NOTEBOOK_ID = "gui-jupyter-cars-fix-and-run"
# the jupyter task whose cars.csv (StatLib Auto MPG) the notebook reads
NOTEBOOK_DATA = "nb-cars-heaviest-csv"
NOTEBOOK = "cars.ipynb"
NOTEBOOK_DIR = "cars"  # in the home: JupyterLab is started on it
BROKEN_CELL = 2  # the notebook's cell (markdown included) that asks for a column cars.csv does not have
CELLS = [
    ("markdown", "# Cars by origin\n\nThe 406 cars of the StatLib Auto MPG data (`cars.csv`): how many come from "
                 "each origin, and their horsepower and fuel economy by origin."),
    ("code", 'import pandas as pd\n\ncars = pd.read_csv("cars.csv")\ncars["Origin"].value_counts()'),
    ("code", 'cars.groupby("Origin")["Horse_power"].median()'),
    ("code", 'cars.groupby("Origin")["Miles_per_Gallon"].mean().round(2)'),
]  # fmt: skip
FIX = ("Horse_power", "Horsepower")
JUPYTER_PORT = 8888  # where the desktop's JupyterLab listens (daharness.sandbox.desktop.apps)

# the window's title names the notebook once JupyterLab shows it (a page loading draws nothing for a while:
# the screen standing still says nothing)
WAIT_FOR_TITLE = """from Xlib import X, display

def title():
    screen = display.Display()
    try:
        root = screen.screen().root
        active = root.get_full_property(screen.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
        window = screen.create_resource_object("window", active.value[0])
        name = window.get_full_property(screen.intern_atom("_NET_WM_NAME"), 0)
        return name.value.decode() if name else ""
    finally:
        screen.close()

deadline = time.monotonic() + 50
while not title().startswith("TITLE") and time.monotonic() < deadline:
    time.sleep(0.2)
"""

# the kernel status JupyterLab shows in its status bar ("Idle"), asked of its server: once the notebook's
# kernel has started (before, keys reach a notebook still loading), and after the run (every cell done:
# idle for two seconds on end, a kernel being busy from one cell to the next)
WAIT_FOR_IDLE = """import json, urllib.request

def idle():
    try:
        with urllib.request.urlopen("http://127.0.0.1:PORT/api/sessions", timeout=5) as answer:
            sessions = json.load(answer)
    except (OSError, ValueError):
        return False
    return any(s["path"] == "NOTEBOOK" and s["kernel"]["execution_state"] == "idle" for s in sessions)

deadline, since = time.monotonic() + 50, None
while time.monotonic() < deadline:
    since = (since or time.monotonic()) if idle() else None
    if since is not None and time.monotonic() - since >= CALM:
        break
    time.sleep(0.2)
"""

# officially the "run all cells" tasks wait for JupyterLab's kernel before saving (their wait.sh): here until
# no kernel is busy on two readings in a row (at most 45 s)
WAIT_SH = f"""#!/bin/bash
# wait until no kernel of JupyterLab is busy: what the agent ran in the notebook has finished
calm=0
for i in $(seq 90); do
    busy=$(curl -s --max-time 2 http://localhost:{JUPYTER_PORT}/api/kernels | jq '[.[] | select(.execution_state != "idle")] | length' 2>/dev/null)
    if [ "${{busy:-0}}" = "0" ]; then calm=$((calm + 1)); else calm=0; fi
    [ $calm -ge 2 ] && exit 0
    sleep 0.5
done
echo "a kernel of JupyterLab is still busy"
exit 1
"""


def pyautogui_wait(template: str, **values: object) -> str:
    """A waiting step of a solution: pyautogui code (run with `time` imported), its upper-case names filled in."""
    for name, value in values.items():
        template = template.replace(name, str(value))
    return template


def notebook_solution() -> list[object]:
    """Open the notebook from the address bar, wait until its kernel is ready, select the broken cell from the
    first one (command mode: Down), retype it, run all cells from the command palette, wait for them."""
    fixed = CELLS[BROKEN_CELL][1].replace(*FIX)
    return [
        {"action_type": "HOTKEY", "keys": ["ctrl", "l"]},
        {"action_type": "TYPING", "text": f"localhost:{JUPYTER_PORT}/lab/tree/{NOTEBOOK}\n"},
        pyautogui_wait(WAIT_FOR_TITLE, TITLE=f"{NOTEBOOK} - JupyterLab"),
        pyautogui_wait(WAIT_FOR_IDLE, PORT=JUPYTER_PORT, NOTEBOOK=NOTEBOOK, CALM=0),
        *[{"action_type": "PRESS", "key": "down"} for _ in range(BROKEN_CELL)],
        {"action_type": "PRESS", "key": "enter"},  # edit mode
        {"action_type": "HOTKEY", "keys": ["ctrl", "a"]},  # the cell's text, replaced by what is typed
        {"action_type": "TYPING", "text": fixed},
        {"action_type": "PRESS", "key": "escape"},  # command mode
        {"action_type": "HOTKEY", "keys": ["ctrl", "shift", "c"]},  # the command palette
        {"action_type": "TYPING", "text": "Run All Cells"},
        {"action_type": "PRESS", "key": "enter"},
        pyautogui_wait(WAIT_FOR_IDLE, PORT=JUPYTER_PORT, NOTEBOOK=NOTEBOOK, CALM=2),
    ]


def notebook_cells(fixed: bool) -> nbformat.NotebookNode:
    cells = []
    for index, (kind, text) in enumerate(CELLS):
        text = text.replace(*FIX) if fixed else text
        cell = new_markdown_cell(text) if kind == "markdown" else new_code_cell(text)
        cell.id = f"cell-{index}"  # fixed ids: the files do not change from one build to the next
        cells.append(cell)
    made = new_notebook(cells=cells)
    made.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return made


def notebook_task() -> dict[str, object]:
    official = f"evaluation_examples/examples/jupyter/{NOTEBOOK_ID}"
    data = f"evaluation_examples/examples/jupyter/{NOTEBOOK_DATA}/cars.csv"
    folder = f"{HOME}/{NOTEBOOK_DIR}"
    columns = ", ".join(pd.read_csv(EXAMPLES / "jupyter" / NOTEBOOK_DATA / "cars.csv", nrows=0).columns)
    return {
        "id": NOTEBOOK_ID,
        "snapshot": "jupyter",
        "desktop": True,
        "instruction": (
            f"JupyterLab is open in the browser on the folder ~/{NOTEBOOK_DIR}. Its notebook {NOTEBOOK} has never "
            "been run, and one of its cells asks for a column that cars.csv does not have (its columns are "
            f"{columns}). In JupyterLab, fix that cell, then run all the notebook's cells in order. Work in the "
            "open JupyterLab: the notebook it shows when you finish is saved over the file."
        ),
        "source": SOURCE,
        "config": [
            {"type": "copyfile_from_host_to_guest",  # the jupyter task's data, not a copy of it
             "parameters": {"src": data, "dest": f"{folder}/cars.csv"}},
            {"type": "copyfile_from_host_to_guest",
             "parameters": {"src": f"{official}/{NOTEBOOK}", "dest": f"{folder}/{NOTEBOOK}"}},
            {"type": "launch", "parameters": {"command": ["bash", "-c", f"jupyter lab {folder}"]}},
        ],
        "action_number": len(notebook_solution()),
        "related_apps": ["chromium", "jupyter"],
        "tags": ["gui", "traditional_data_processing", "abstract"],
        "evaluator": {
            "postconfig": [
                {"type": "script_and_execute",
                 "parameters": {"src": f"{official}/wait.sh", "dest": f"{HOME}/wait.sh"}},
                {"type": "activate_window", "parameters": {"window_name": "JupyterLab"}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
                {"type": "execute",
                 "parameters": {"command": ["python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
            ],
            "func": "compare_notebook_outputs",
            "result": {"type": "vm_file", "path": f"{folder}/{NOTEBOOK}", "dest": NOTEBOOK},
            "expected": {"type": "local_file", "path": f"{official}/cars_gold.ipynb", "dest": "cars_gold.ipynb"},
        },
        "counterpart": None,
    }  # fmt: skip


def build_notebook_task() -> Path:
    folder = EXAMPLES / "jupyter" / NOTEBOOK_ID
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    nbformat.write(notebook_cells(fixed=False), str(folder / NOTEBOOK))
    gold = notebook_cells(fixed=True)
    with tempfile.TemporaryDirectory() as scratch:  # run beside the data, as in the home
        shutil.copyfile(EXAMPLES / "jupyter" / NOTEBOOK_DATA / "cars.csv", Path(scratch) / "cars.csv")
        NotebookClient(gold, timeout=120, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": scratch}}).execute()  # fmt: skip
    nbformat.write(gold, str(folder / "cars_gold.ipynb"))
    (folder / "wait.sh").write_text(WAIT_SH)
    (folder / f"{NOTEBOOK_ID}.json").write_text(json.dumps(notebook_task(), indent=2) + "\n")
    (folder / "solution.actions.json").write_text(json.dumps(notebook_solution(), indent=1) + "\n")
    (folder / "verbose_instruction.txt").write_text(
        f"1. In JupyterLab's file browser, double-click {NOTEBOOK}.\n"
        f'2. Its cell `{CELLS[BROKEN_CELL][1]}` asks for the column "{FIX[0]}": click into it and change the name '
        f'to "{FIX[1]}".\n'
        "3. Click Run > Run All Cells and wait until every cell shows its output.\n"
        "4. Leave the notebook open in JupyterLab: it is saved when you finish.\n"
    )
    return folder


# ---- a page of the dbt documentation in the browser --------------------------------------------------------

DOCS_ID = "gui-browser-stocks-docs-parent-model"
DOCS_PROJECT_TASK = "dbt-stocks-materialize-tables"  # its dbt project (stock prices), documented here
DOCS_PROJECT = "market"
DOCS_CHILD = "yearly_prices"  # the model named in the instruction; the agent opens the page of its parent
DOCS_PORT = 8080  # dbt docs serve's default port
DOCS_INIT = f"""#!/bin/bash
# set up the dbt project {DOCS_PROJECT} in ~/projects and its profile in ~/.dbt, and generate its documentation
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/{DOCS_PROJECT}.zip && rm -f ~/{DOCS_PROJECT}.zip
mv {DOCS_PROJECT}/profiles.yml ~/.dbt/profiles.yml
cd {DOCS_PROJECT} && dbt docs generate > /dev/null
"""
# the setup waits until the documentation's server answers before the browser opens it
WAIT_FOR_SERVER = (
    f"for i in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/{DOCS_PORT}) 2>/dev/null && exit 0; sleep 0.1; "
    "done; exit 1"
)


def docs_parent() -> str:
    """The model DOCS_CHILD is built from, read from the project's own SQL (its one ref)."""
    with zipfile.ZipFile(EXAMPLES / "dbt" / DOCS_PROJECT_TASK / f"{DOCS_PROJECT}.zip") as archive:
        sql = archive.read(f"{DOCS_PROJECT}/models/{DOCS_CHILD}.sql").decode()
        (parent,) = re.findall(r"ref\('(\w+)'\)", sql)
        assert f"{DOCS_PROJECT}/models/{parent}.sql" in archive.namelist(), f"{parent} is not a model"
    return parent


def docs_page(model: str) -> str:
    """The documentation's page of a model (the dbt docs application routes on the URL's fragment)."""
    return f"localhost:{DOCS_PORT}/#!/model/model.{DOCS_PROJECT}.{model}"


def docs_solution() -> list[object]:
    return [
        {"action_type": "HOTKEY", "keys": ["ctrl", "l"]},
        {"action_type": "TYPING", "text": docs_page(docs_parent()) + "\n"},
    ]


def docs_task() -> dict[str, object]:
    official = f"evaluation_examples/examples/dbt/{DOCS_ID}"
    project = f"evaluation_examples/examples/dbt/{DOCS_PROJECT_TASK}/{DOCS_PROJECT}.zip"
    target = f"{HOME}/projects/{DOCS_PROJECT}/target"
    page = f"#!/model/model.{DOCS_PROJECT}.{docs_parent()}".replace(".", "\\.")
    return {
        "id": DOCS_ID,
        "snapshot": "dbt",
        "instruction": (
            f"The documentation of the dbt project ~/projects/{DOCS_PROJECT}, made with `dbt docs generate`, is "
            f"served at http://localhost:{DOCS_PORT} and open in the browser. Open in it the documentation page of "
            f"the model that the model {DOCS_CHILD} is built from (the one it selects from with ref), and leave "
            "that page shown."
        ),
        "source": SOURCE,
        "config": [
            {"type": "copyfile_from_host_to_guest",  # the dbt task's project, not a copy of it
             "parameters": {"src": project, "dest": f"{HOME}/{DOCS_PROJECT}.zip"}},
            {"type": "script_and_execute", "parameters": {"src": f"{official}/init.sh", "dest": f"{HOME}/init.sh"}},
            # what `dbt docs serve --port 8080` serves (the target folder), with a server that starts at once
            {"type": "launch", "parameters": {"command": [
                "python", "-m", "http.server", str(DOCS_PORT), "--bind", "127.0.0.1", "--directory", target]}},
            {"type": "execute", "parameters": {"command": ["bash", "-c", WAIT_FOR_SERVER]}},
            {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [f"http://localhost:{DOCS_PORT}"]}},
        ],
        "action_number": len(docs_solution()),
        "related_apps": ["dbt", "chromium"],
        "tags": ["gui", "data_transformation", "abstract"],
        "evaluator": {
            "postconfig": [],
            "func": "is_expected_url_pattern_match",
            "result": {"type": "active_tab_info", "goto_prefix": "http://"},
            "expected": {"type": "rule", "rules": {"expected": [
                f"^http://(localhost|127\\.0\\.0\\.1):{DOCS_PORT}/", f"{page}(\\?|$)"]}},
        },
        "counterpart": None,
    }  # fmt: skip


def build_docs_task() -> Path:
    folder = EXAMPLES / "dbt" / DOCS_ID
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "init.sh").write_text(DOCS_INIT)
    (folder / f"{DOCS_ID}.json").write_text(json.dumps(docs_task(), indent=2) + "\n")
    (folder / "solution.actions.json").write_text(json.dumps(docs_solution(), indent=1) + "\n")
    (folder / "verbose_instruction.txt").write_text(
        f"1. In the documentation's Project tab on the left, open {DOCS_PROJECT} > models > {DOCS_CHILD}.\n"
        f"2. Its \"Depends On\" section (and its code: `ref('{docs_parent()}')`) names the model it is built from: "
        "click it.\n"
        "3. Leave that model's page shown in the browser.\n"
    )
    return folder


def main() -> None:
    """Every desktop task, or only those named on the command line."""
    builders: dict[str, Callable[[], Path]] = {
        **{spec.id: (lambda spec=spec: build(spec)) for spec in SPECS},
        NOTEBOOK_ID: build_notebook_task,
        DOCS_ID: build_docs_task,
    }
    wanted = sys.argv[1:] or list(builders)
    if unknown := set(wanted) - set(builders):
        raise SystemExit(f"no task {', '.join(sorted(unknown))} in this script")
    for task_id in wanted:
        print(f"wrote {builders[task_id]()}")


if __name__ == "__main__":
    main()
