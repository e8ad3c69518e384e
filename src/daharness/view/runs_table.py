"""The index page's runs table: one compact row per run (suite, agent, model, tags, accuracy with its 95%
interval, errors, cost, date), sortable by clicking a column's header, with no JavaScript library.

A row's run is picked by clicking it: the sample table then shows that run's samples and the run's own
section (cards, figures) opens under the table. Each cell carries the value it sorts by (`data-sort`),
so that "9.5%" sorts after "10.0%" as a number and a missing figure sorts first.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from daharness.report.html import pct
from daharness.view.model import ViewedRun

RUNS_CSS = """
table.runs{margin:1rem 0} table.runs th{cursor:pointer;user-select:none;white-space:nowrap}
table.runs th[aria-sort=ascending]::after{content:" ▲"} table.runs th[aria-sort=descending]::after{content:" ▼"}
table.runs tbody tr{cursor:pointer} table.runs tbody tr:hover{background:#f5f9ff}
table.runs tbody tr.chosen{background:#e3f2fd} table.runs .ci{color:#777;font-size:.8rem}
#runs .run-details{display:none} #runs .run-details.chosen{display:block}
"""

# click a header: sort by it (again: the other way); click a row: show that run's section and samples
RUNS_SCRIPT = """
let runsSort = null;  // [column, ascending]: kept when a growing run redraws the table
function sortRuns(header, ascending = header.getAttribute('aria-sort') !== 'ascending') {
  const table = header.closest('table');
  const column = Array.from(header.parentNode.children).indexOf(header);
  runsSort = [column, ascending];
  table.querySelectorAll('th').forEach(th => th.removeAttribute('aria-sort'));
  header.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
  const numeric = header.dataset.type === 'number';
  const key = row => {
    const value = row.children[column].dataset.sort;
    return numeric ? (value === '' ? -Infinity : Number(value)) : value.toLowerCase();
  };
  const rows = Array.from(table.tBodies[0].rows);
  rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (ascending ? 1 : -1));
  rows.forEach(row => table.tBodies[0].appendChild(row));
}
function resortRuns() {
  if (runsSort) sortRuns(document.querySelectorAll('#runs-table th')[runsSort[0]], runsSort[1]);
}
function chooseRun(label) {
  const select = document.querySelector('select[name=run]');
  if (select) { select.value = select.value === label ? '' : label; select.dispatchEvent(new Event('change')); }
}
function showChosenRun() {
  const select = document.querySelector('select[name=run]');
  const label = select ? select.value : (document.querySelector('#runs-table tbody tr') || {dataset: {}}).dataset.run;
  document.querySelectorAll('#runs-table tbody tr').forEach(row => row.classList.toggle('chosen', row.dataset.run === label));
  document.querySelectorAll('#runs .run-details').forEach(details => details.classList.toggle('chosen', details.dataset.run === label));
}
document.addEventListener('click', event => {
  const header = event.target.closest('#runs-table th');
  if (header) return sortRuns(header);
  const row = event.target.closest('#runs-table tbody tr');
  if (row && !event.target.closest('a')) chooseRun(row.dataset.run);
});
"""


@dataclass(frozen=True)
class Column:
    title: str
    kind: str  # "text" or "number": how its cells sort


COLUMNS = (
    Column("run", "text"), Column("suite", "text"), Column("agent", "text"), Column("model", "text"),
    Column("tags", "text"), Column("accuracy [95% CI]", "number"), Column("samples", "number"),
    Column("errors", "number"), Column("cost", "number"), Column("date", "text"),
)  # fmt: skip


def model_name(info: dict[str, Any]) -> str:
    model = info.get("model")
    if isinstance(model, dict):
        model = model.get("model")
    return str(model or "—")


def _cell(shown: str, sort: object) -> str:
    return f'<td data-sort="{escape(str(sort))}">{shown}</td>'


def run_row(run: ViewedRun) -> str:
    report = run.report
    info, counts = report["run"], report["counts"]
    accuracy = (report.get("intervals") or {}).get("accuracy") or {}
    value = accuracy.get("value") if accuracy.get("n") else None
    interval = (
        f' <span class="ci">[{pct(accuracy["low"])}, {pct(accuracy["high"])}]</span>'
        if value is not None and accuracy.get("low") is not None
        else ""
    )
    usage = (report.get("agent") or {}).get("usage") or {}
    cost = usage.get("cost_usd") if usage.get("calls") else None
    labels = [*info.get("tags", []), *(f"{k}={v}" for k, v in (info.get("metadata") or {}).items())]
    created = str(info.get("created_at") or "")
    cells = (
        _cell(f'<a href="#run-{run.index}">{escape(run.label)}</a>', run.label),
        _cell(escape(str(info["suite"])), info["suite"]),
        _cell(escape(str(info["agent"])), info["agent"]),
        _cell(escape(model_name(info)), model_name(info)),
        _cell(escape(", ".join(labels)), ", ".join(labels)),
        _cell(pct(value) + interval, "" if value is None else value),
        _cell(str(counts["samples"]), counts["samples"]),
        _cell(str(counts["errors"]), counts["errors"]),
        _cell("—" if cost is None else f"${cost:.4f}", "" if cost is None else cost),
        _cell(
            f'<span title="{escape(created)}">{escape(created[:16].replace("T", " ")) or "—"}</span>', created
        ),
    )
    return f'<tr data-run="{escape(run.label)}">{"".join(cells)}</tr>'


def runs_table(runs: list[ViewedRun]) -> str:
    header = "".join(f'<th data-type="{c.kind}">{escape(c.title)}</th>' for c in COLUMNS)
    rows = "".join(run_row(run) for run in runs)
    return (
        f'<table id="runs-table" class="runs"><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>'
    )
