"""The viewer's HTML pages: an overview of the runs with a filterable sample table, and a page per sample
with its whole trajectory (prompts, replies, code with syntax highlighting, observations, saved figures,
the user's turns) and its score with each check."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from daharness.core.errors import UserError
from daharness.core.record import SampleRecord
from daharness.core.runlog import file_safe
from daharness.core.submission import ActionEvent, ModelCall, Note, UserTurn
from daharness.core.task import Task
from daharness.report.epochs import epochs_line, labels_line
from daharness.report.html import (
    _CSS,
    card,
    family_sections,
    interval_card,
    plural,
    scoring_modes,
    usage_cards,
)
from daharness.report.run_tasks import request_text
from daharness.report.task_set import task_set_text
from daharness.report.trajectory import action_code, observation_text
from daharness.view.gold import csv_table, diff_summary, table_diff, workbook_diff
from daharness.view.model import IMAGE_TYPES, ViewedRun, row_of, verdict, version_of
from daharness.view.runs_table import RUNS_CSS, RUNS_SCRIPT, runs_table
from daharness.view.screens import SCREEN_CSS, SCREEN_SCRIPT, Screen, screen_html, screens_in_order

_FORMATTER = HtmlFormatter(cssclass="hl", style="friendly")
VIEW_CSS = (
    _CSS
    + _FORMATTER.get_style_defs(".hl")
    + """
.hl pre{background:#f6f6f6;padding:.5rem;margin:0;white-space:pre-wrap}
nav{margin-bottom:1rem} nav a{margin-right:1rem}
.filters{display:flex;gap:.6rem;flex-wrap:wrap;align-items:center;margin:1rem 0}
.filters label{font-size:.85rem;color:#444}
.step{border:1px solid #e3e3e3;border-radius:8px;padding:.6rem .9rem;margin:.8rem 0}
.step h3{margin:.1rem 0 .5rem;font-size:.95rem} .step .meta{color:#777;font-size:.8rem;font-weight:normal}
.step.model{border-left:4px solid #1565c0} .step.action{border-left:4px solid #6a1b9a}
.step.user{border-left:4px solid #ef6c00;background:#fff8f0} .step.note{border-left:4px solid #9e9e9e}
.observation{background:#fbfbf4} img.figure{max-width:100%;border:1px solid #ddd;margin:.5rem 0}
.verdict{display:inline-block;padding:.1rem .5rem;border-radius:4px;color:#fff;font-size:.85rem}
.verdict.right{background:#2e7d32} .verdict.wrong{background:#c62828} .verdict.partial{background:#f9a825}
.verdict.error{background:#ef6c00} .verdict.excluded{background:#9e9e9e}
nav.pager{display:flex;justify-content:space-between} nav.pager .none{color:#aaa}
table.diff td.differs{background:#fdecea} table.diff del{color:#c62828} table.diff ins{color:#2e7d32;text-decoration:none;font-weight:600} table.diff ins.empty{color:#999;font-weight:normal}
table.diff .missing{background:#fff3e0;color:#8d6e63} table.diff .extra{background:#e3f2fd} td.n,th.n{color:#999}
.side{display:flex;gap:1rem;flex-wrap:wrap} .side figure{flex:1;min-width:320px;margin:0}
table.csv{font-size:.8rem;margin:.5rem 0} .live{color:#2e7d32;font-size:.85rem}
#samples span.request{display:inline-block;min-width:16rem;font-size:.85rem;color:#333}
"""
    + RUNS_CSS
    + SCREEN_CSS
)

_SCRIPT = """
const controls = Array.from(document.querySelectorAll('[data-filter]'));
const search = document.getElementById('search');
const shown = document.getElementById('shown');
function apply() {
  const query = search.value.trim().toLowerCase();
  let count = 0;
  for (const row of document.querySelectorAll('#samples tbody tr')) {
    let keep = controls.every(c => !c.value || row.dataset[c.dataset.filter] === c.value);
    if (keep && query) keep = row.dataset.search.includes(query);
    row.hidden = !keep;
    count += keep;
  }
  shown.textContent = count;
  showChosenRun();
}
controls.forEach(c => c.addEventListener('change', apply));
search.addEventListener('input', apply);
apply();
// served (not opened from files): samples a running run adds appear, the filters kept as they are
async function refresh() {
  try {
    const version = (await (await fetch('version', {cache: 'no-store'})).text()).trim();
    if (version !== document.getElementById('version').textContent) {
      const page = await (await fetch('index.html', {cache: 'no-store'})).text();
      const fresh = new DOMParser().parseFromString(page, 'text/html');
      for (const id of ['version', 'runs', 'total']) {
        document.getElementById(id).replaceWith(fresh.getElementById(id));
      }
      resortRuns();
      document.querySelector('#samples tbody').replaceWith(fresh.querySelector('#samples tbody'));
      for (const control of controls) {
        const value = control.value;
        control.innerHTML = fresh.querySelector(`select[name="${control.name}"]`).innerHTML;
        control.value = value;
      }
      apply();
    }
  } catch (error) {}  // the server stopped: keep the page as it is
  setTimeout(refresh, 2000);
}
if (location.protocol.startsWith('http')) setTimeout(refresh, 2000);
"""

_FILTERS = (
    ("verdict", "verdict"), ("family", "family"), ("category", "category"), ("level", "level"),
    ("errors", "errors"), ("stop_reason", "agent stop reason"),
)  # fmt: skip


def _page(title: str, body: str, depth: int) -> str:
    home = "../" * depth + "index.html"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title><style>{VIEW_CSS}</style></head>
<body><nav><a href="{home}">all samples</a></nav>{body}</body></html>
"""


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _run_section(run: ViewedRun) -> str:
    report = run.report
    counts, info = report["counts"], report["run"]
    modes = scoring_modes(report) or "—"
    cards = card("samples", str(counts["samples"])) + card(
        "right / wrong", f"{counts['correct']} / {counts['wrong']}"
    )
    cards += card("errors (infrastructure)", str(counts["errors"]))
    intervals = report.get("intervals") or {}
    if intervals.get("accuracy", {}).get("n"):
        cards += interval_card("accuracy", intervals["accuracy"], percent=True)
        cards += interval_card("mean score", intervals["mean_score"], percent=False)
    cards += usage_cards(report)
    figures = family_sections(report, "h3")
    model = info.get("model")
    if isinstance(model, dict):
        model = model.get("model")
    return (
        f'<section class="run" id="run-{run.index}"><h2>{escape(run.label)} · {escape(str(info["suite"]))} · '
        f"{escape(str(info['agent']))}</h2><p class=sub>model <b>{escape(str(model or '—'))}</b> · scoring "
        f"<b>{escape(modes)}</b> · created {escape(str(info['created_at'] or '—'))} · daharness "
        f"{escape(str(info['daharness_version']))} · {escape(str(run.root))}</p>"
        + "".join(
            f"<p class=sub>{escape(line)}</p>"
            for line in (
                labels_line(info),
                epochs_line(report.get("epochs")),
                task_set_text(info.get("task_set")),
            )
            if line
        )
        + f'<div class="cards">{cards}</div>{figures}</section>'
    )


def _dataset_key(key: str) -> str:
    """How a row's data-* attribute is named in JavaScript (data-stop-reason -> dataset.stopReason)."""
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


_ROW_DATA = ("run", "verdict", "family", "category", "level", "errors", "stop_reason", "search")


def _row_html(row: dict[str, Any]) -> str:
    data = " ".join(f'data-{key.replace("_", "-")}="{escape(str(row[key]))}"' for key in _ROW_DATA)
    score = "—" if row["value"] is None else f"{row['value']:.3f}"
    steps = "" if row["steps"] is None else str(row["steps"])
    cells = [
        escape(row["run"]), f'<a href="{row["page"]}">{escape(row["id"])}</a>',
        f'<span class="request" title="{escape(row["request"])}">{escape(shortened(row["request"], REQUEST_SHOWN))}</span>',
        f'<span class="verdict {row["verdict"]}">{row["verdict"]}</span>', score, escape(row["family"]),
        escape(row["category"]), escape(row["level"]), escape(row["stop_reason"]), steps,
        f"{row['duration_s']:.1f}s", escape(row["explanation"][:160]),
    ]  # fmt: skip
    row_class = row["verdict"] if row["verdict"] != "partial" else "wrong"
    return f'<tr class="{row_class}" {data}>' + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


_SAMPLE_COLUMNS = ("run", "id", "request", "verdict", "score", "family", "category", "level", "stop", "steps",
                   "time", "details")  # fmt: skip
REQUEST_SHOWN = 70  # characters of a sample's request in its row (all of it on hover)


def shortened(text: str, limit: int) -> str:
    """The start of `text` on one line, cut at a word with '…' when longer than `limit`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + "…"


def index_page(runs: list[ViewedRun]) -> str:
    rows = [row_of(run, record) for run in runs for record in run.ordered()]
    options = ""
    for key, label in _FILTERS:
        values = sorted({row[key] for row in rows if row[key]})
        choices = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
        options += (
            f'<label>{escape(label)} <select data-filter="{_dataset_key(key)}" name="{key}">'
            f'<option value="">all</option>{choices}</select></label>'
        )
    if len(runs) > 1:
        choices = "".join(f'<option value="{escape(r.label)}">{escape(r.label)}</option>' for r in runs)
        options = (
            f'<label>run <select data-filter="run" name="run"><option value="">all</option>{choices}</select></label>'
            + options
        )
    body_rows = "".join(_row_html(row) for row in rows)
    header = "".join(f"<th>{h}</th>" for h in _SAMPLE_COLUMNS)
    version = version_of(runs)
    sections = "".join(
        f'<div class="run-details" data-run="{escape(run.label)}">{_run_section(run)}</div>' for run in runs
    )
    body = (
        f'<h1>daharness · {plural(len(runs), "run")}</h1><span id="version" hidden>{version}</span>'
        + f'<div id="runs">{runs_table(runs)}{sections}</div>'
        + f'<h2>Samples</h2><div class="filters">{options}<label>search <input id="search" type="search" '
        f'placeholder="id, request, answer, explanation…"></label><span><b id="shown">{len(rows)}</b> of '
        f'<span id="total">{len(rows)}</span> shown</span></div>'
        f'<table id="samples"><thead><tr>{header}</tr></thead><tbody>{body_rows}</tbody></table>'
        f"<script>{RUNS_SCRIPT}{_SCRIPT}</script>"
    )
    return _page("daharness · runs", body, 0)


def _code(language: str, code: str) -> str:
    return highlight(code, get_lexer_by_name(language), _FORMATTER)


def artifact_url(record: SampleRecord, name: str) -> str:
    """Where a sample page finds a saved file (pages live in runs/<i>/samples/)."""
    return f"../artifacts/{quote(file_safe(record.key))}/{quote(name)}"


def attachment_url(run: ViewedRun, record: SampleRecord, name: str) -> str | None:
    """Where a sample page finds a file the harness attached to the trajectory (a screenshot it sent)."""
    found = run.saved_file("attachments", file_safe(record.key), name)
    return f"../attachments/{quote(file_safe(record.key))}/{quote(name)}" if found else None


def _images(run: ViewedRun, record: SampleRecord, names: list[str]) -> str:
    return "".join(
        f'<figure><img class="figure" alt="{escape(name)}" src="{escape(artifact_url(record, name))}">'
        f"<figcaption>{escape(name)}</figcaption></figure>"
        for name in names
        if PurePosixPath(name).suffix.lower() in IMAGE_TYPES and run.artifact(file_safe(record.key), name)
    )


def _step(run: ViewedRun, record: SampleRecord, number: int | None, step: Any, first_call: bool) -> str:
    """One event of the trajectory; `number`: its number when it is one of the agent's steps."""
    at = f"{number}. " if number else ""
    if isinstance(step, Screen):
        return screen_html(step)
    if isinstance(step, ModelCall):
        usage = step.usage or {}
        meta = f"{step.latency_s:.2f}s" + (
            f" · {usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tokens" if usage else ""
        )
        meta += " · cached" if step.cached else ""
        prompt = ""
        if first_call and step.messages:
            prompt = "<details><summary>prompt</summary>" + "".join(
                f"<p><b>{escape(str(m.get('role')))}</b></p><pre>{escape(str(m.get('content') or ''))}</pre>" for m in step.messages
            ) + "</details>"  # fmt: skip
        return (
            f'<div class="step model" data-kind="model"><h3>{at}model reply <span class="meta">{escape(meta)}</span></h3>'
            f'{prompt}<pre class="reply">{escape(step.reply)}</pre></div>'
        )
    if isinstance(step, ActionEvent):
        code = action_code(step)
        observation = observation_text(step.observation) or "(no output)"
        changed = step.observation.files_changed
        files = f'<p class="meta">files changed: {escape(", ".join(changed))}</p>' if changed else ""
        return (
            f'<div class="step action" data-kind="action"><h3>{at}{escape(code.label)} '
            f'<span class="meta">{step.observation.duration_s:.2f}s{" · failed" if not step.observation.ok else ""}</span></h3>'
            f'<div class="code">{_code(code.language, code.code)}</div>'
            f'<pre class="observation">{escape(observation)}</pre>{files}{_images(run, record, changed)}</div>'
        )
    if isinstance(step, UserTurn):
        asked = f'<p class="meta">answering: {escape(step.question)}</p>' if step.question else ""
        who = "user simulator" if step.source == "simulator" else "user (scripted)"
        return (
            f'<div class="step user" data-kind="user"><h3>{who}</h3>{asked}'
            f'<pre class="user-text">{escape(step.content)}</pre></div>'
        )
    if isinstance(step, Note):
        return f'<div class="step note" data-kind="note"><h3>note</h3><pre>{escape(step.text)}</pre></div>'
    return ""


def agent_steps(record: SampleRecord, events: list[Any]) -> tuple[int, dict[int, int]]:
    """How many steps the agent took (as its record says) and the number of each event that is one: its
    model calls, or without any, its actions when each is a step. Notes, screens and users' turns are not."""
    calls = [event for event in events if isinstance(event, ModelCall)]
    actions = [event for event in events if isinstance(event, ActionEvent)]
    said = record.agent_metrics.get("steps")
    count = said if isinstance(said, int) else len(calls) or len(actions)
    numbered = calls or (actions if len(actions) == count else [])
    return count, {id(event): number for number, event in enumerate(numbered, 1)}


def _score(record: SampleRecord) -> str:
    score = record.score
    if score is None:
        return f"<h2>Error of the harness</h2><pre>{escape(record.error or '')}</pre>"
    checks = "".join(
        f'<tr class="{"right" if c.passed else "wrong"}"><td>{escape(c.name)}</td>'
        f'<td class="{"ok" if c.passed else "bad"}">{"✓" if c.passed else "✗"}</td><td>{escape(c.explanation)}</td></tr>'
        for c in score.checks
    )
    subs = score.details.get("sub_answers", {})
    sub_rows = "".join(
        f'<tr class="{"right" if e.get("correct") else "wrong"}"><td><code>{escape(n)}</code></td><td>{escape(str(e.get("label")))}</td>'
        f'<td>{escape(str(e.get("predicted")))}</td><td class="{"ok" if e.get("correct") else "bad"}">{"✓" if e.get("correct") else "✗"}</td></tr>'
        for n, e in subs.items()
    )  # fmt: skip
    return (
        f"<h2>Score {score.value:.3f}{' (excluded)' if score.excluded else ''}</h2><p>{escape(score.explanation)}</p>"
        + (
            f'<table class="checks"><tr><th>check</th><th></th><th>details</th></tr>{checks}</table>'
            if checks
            else ""
        )
        + (
            f'<table class="checks"><tr><th>answer</th><th>label</th><th>predicted</th><th></th></tr>{sub_rows}</table>'
            if sub_rows
            else ""
        )
        + f"<details><summary>all score details</summary><pre>{escape(json.dumps(readable(score.details), indent=2, default=str))}</pre></details>"
    )


def readable(value: Any) -> Any:
    """Score details with the scorer's working paths (temporary folders, gone after the run) as file names."""
    if isinstance(value, dict):
        return {key: readable(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [readable(inner) for inner in value]
    if isinstance(value, str) and value.startswith("/") and "\n" not in value and len(value) < 500:
        return PurePosixPath(value).name
    return value


def gold_url(record: SampleRecord, name: str) -> str:
    return f"../gold/{quote(file_safe(record.id))}/{quote(name)}"


def _against_gold(run: ViewedRun, record: SampleRecord) -> str:
    """The agent's tables diffed against the gold tables, its charts beside the gold charts."""
    task = run.tasks.get(record.id)
    if task is None:
        return ""
    gold_files = {f.name: f.source for f in task.gold.files}
    parts = []
    for scorer in task.scorers:
        name = str(scorer.options.get("file") or "")
        if scorer.name not in ("table", "chart") or name not in gold_files:
            continue
        mine = run.artifact(file_safe(record.key), name)
        if scorer.name == "table":
            if mine is None:
                parts.append(f'<h3>{escape(name)}</h3><p class="bad">the agent left no {escape(name)}</p>')
                continue
            diff = table_diff(gold_files[name], mine, float(scorer.options.get("tolerance") or 1e-6))
            parts.append(
                f'<div class="table-diff" data-file="{escape(name)}"><h3>{escape(name)} '
                f'<span class="meta">{escape(diff_summary(diff))}</span></h3>{diff.html}</div>'
            )
        elif run.gold_image(record.id, name) is not None:
            theirs = (
                f'<img class="figure predicted" alt="the agent\'s {escape(name)}" src="{escape(artifact_url(record, name))}">'
                if mine is not None
                else f'<p class="bad">the agent left no {escape(name)}</p>'
            )
            parts.append(
                f'<div class="side chart-diff" data-file="{escape(name)}"><figure><figcaption>gold</figcaption>'
                f'<img class="figure gold" alt="gold {escape(name)}" src="{escape(gold_url(record, name))}"></figure>'
                f"<figure><figcaption>agent</figcaption>{theirs}</figure></div>"
            )
    parts += [_workbook_diff(run, record, name, gold) for name, gold in run.gold_workbooks(record)]
    return f'<h2>Against the gold</h2><div id="gold">{"".join(parts)}</div>' if parts else ""


def _workbook_diff(run: ViewedRun, record: SampleRecord, name: str, gold: Path) -> str:
    """The agent's workbook against the gold one, each sheet cell by cell (as tables are)."""
    mine = run.artifact(file_safe(record.key), name)
    if mine is None:
        return f'<h3>{escape(name)}</h3><p class="bad">the agent left no {escape(name)}</p>'
    try:
        sheets = workbook_diff(gold, mine)
    except ValueError as exc:  # not a workbook: said in one line
        return f'<h3>{escape(name)}</h3><p class="bad">{escape(name)}: {escape(str(exc))}</p>'
    return "".join(
        f'<div class="table-diff sheet-diff" data-file="{escape(name)}" data-sheet="{escape(sheet.sheet)}">'
        f'<h3>{escape(name)} · sheet {escape(sheet.sheet)} <span class="meta">'
        f"{escape(diff_summary(sheet.diff) if sheet.diff else sheet.problem)}</span></h3>"
        f"{sheet.diff.html if sheet.diff else ''}</div>"
        for sheet in sheets
    )


def _pager(run: ViewedRun, record: SampleRecord) -> str:
    """Links to the samples before and after this one, in the order of the sample table."""
    before, after = run.neighbours(record)

    def link(other: SampleRecord | None, rel: str, label: str) -> str:
        if other is None:
            return f'<span class="none">{label}</span>'
        return f'<a rel="{rel}" href="{quote(file_safe(other.key))}.html">{label} ({escape(other.key)})</a>'

    return f'<nav class="pager">{link(before, "prev", "← previous")}{link(after, "next", "next →")}</nav>'


def _inline(run: ViewedRun, record: SampleRecord, name: str) -> str:
    """A CSV file shown as a table under its link."""
    path = run.artifact(file_safe(record.key), name)
    if path is None or PurePosixPath(name).suffix.lower() != ".csv":
        return ""
    return f'<details open class="csv-file"><summary>{escape(name)}</summary>{csv_table(path)}</details>'


def _tapilot_entry(task: Task | None, record: SampleRecord) -> str:
    """An official Tapilot-Crossing entry: its conversation (the prompt as the file gives it), the code that
    was run for the reply (after the entry's history) and what the entry's eval_metrics printed."""
    if task is None or "release" not in task.gold.data:
        return ""
    messages = [turn.model_dump(include={"role", "content"}) for turn in task.prompt]
    conversation = "".join(
        f'<div class="turn {escape(str(m.get("role")))}"><p><b>{escape(str(m.get("role")))}</b></p>'
        f"<pre>{escape(str(m.get('content') or ''))}</pre></div>"
        for m in messages
    )
    release = task.gold.data["release"]
    details = record.score.details if record.score else {}
    parts = [f'<h3>Conversation <small>({plural(len(messages), "message")})</small></h3><div id="conversation">'
             f"{conversation or '<p>No prompt_with_hist_json in the entry.</p>'}</div>"]  # fmt: skip
    if history := str(release.get("ref_code_hist") or ""):
        parts.append(
            f"<details><summary>the history's code (ref_code_hist)</summary>{_code('python', history)}</details>"
        )
    if "code" in details:
        parts.append(
            f'<h3>Code run for the reply</h3><div class="code" id="reply-code">{_code("python", str(details["code"]))}</div>'
        )
    if "eval_output" in details:
        parts.append(
            f'<h3>eval_metrics output</h3><pre id="eval-output">{escape(str(details["eval_output"]) or "(nothing printed)")}</pre>'
        )
        parts.append(
            f"<details><summary>the entry's eval_metrics</summary>{_code('python', str(release.get('eval_metrics', '')))}</details>"
        )
    return (
        f"<h2>Tapilot-Crossing entry {escape(str(release.get('file')))}:{escape(str(release.get('data_id')))}</h2>"
        + "".join(parts)
    )


def sample_page(run: ViewedRun, record: SampleRecord) -> str:
    no_steps = "<p>No trajectory saved.</p>"
    try:
        trajectory = run.trajectory(record)
    except UserError as exc:  # one damaged file must not hide the run; the page says what is wrong
        trajectory, no_steps = None, f"<p>The trajectory could not be read: {escape(str(exc))}</p>"
    steps = trajectory.steps if trajectory else []
    events = screens_in_order(steps, lambda name: attachment_url(run, record, name))
    first_call = next((e for e in events if isinstance(e, ModelCall)), None)
    count, numbers = agent_steps(record, events)
    rendered = "".join(_step(run, record, numbers.get(id(e)), e, e is first_call) for e in events)
    actions = sum(isinstance(e, ActionEvent) for e in events)
    counted = plural(count, "step") + (f", {plural(actions, 'action')}" if actions > count else "")
    task = run.tasks.get(record.id)
    request = f"<h2>Request</h2><pre class=request>{escape(request_text(task))}</pre>" if task else ""
    metrics = record.agent_metrics
    facts = " · ".join(
        part for part in (
            f"run {run.label}", f"family {record.family or '—'}", f"category {record.category}" if record.category else "",
            f"level {record.level}" if record.level else "", f"concepts {', '.join(record.concepts)}" if record.concepts else "",
            f"attempt {record.attempt}", f"{record.duration_s:.1f}s",
            f"stop {metrics.get('stop_reason')}" if metrics.get("stop_reason") else "",
        ) if part
    )  # fmt: skip
    answers = trajectory.answers if trajectory and trajectory.answers else [record.answer]
    answer_html = "".join(f"<pre class=answer>{escape(a or '(none)')}</pre>" for a in answers)
    saved = [name for name in record.artifacts if run.artifact(file_safe(record.key), name)]
    shown = {
        name for step in steps if isinstance(step, ActionEvent) for name in step.observation.files_changed
    }
    not_shown = [name for name in saved if name not in shown]  # figures not already shown at their step
    body = (
        _pager(run, record)
        + f'<h1>sample {escape(record.key)} <span class="verdict {verdict(record)}">{verdict(record)}</span></h1>'
        f"<p class=sub>{escape(facts)}</p>{request}"
        f'<h2>Trajectory <small>({counted})</small></h2><div id="steps">{rendered or no_steps}</div>'
        f"{_tapilot_entry(task, record)}<h2>Final answer</h2>{answer_html}{_score(record)}{_against_gold(run, record)}"
        + (
            f"<h2>Files the agent left</h2>{_files(run, record, saved)}{_images(run, record, not_shown)}"
            if saved
            else ""
        )
        + f"<script>{SCREEN_SCRIPT}</script>"
    )
    return _page(f"sample {record.key}", body, 3)


def _files(run: ViewedRun, record: SampleRecord, names: list[str]) -> str:
    """The files the agent left, those of the desktop and its applications (under hidden folders:
    `.cache/fontconfig`, `.local/share`, LibreOffice's lock files) folded away below the others."""
    own = [name for name in names if not is_hidden(name)]
    hidden = [name for name in names if is_hidden(name)]

    def listed(chosen: list[str]) -> str:
        return "".join(
            f'<li><a href="{escape(artifact_url(record, name))}">{escape(name)}</a>{_inline(run, record, name)}</li>'
            for name in chosen
        )

    folded = (
        f'<details class="hidden-files"><summary>{plural(len(hidden), "hidden file")} '
        f"({escape(', '.join(sorted({name.split('/')[0] for name in hidden})))})</summary>"
        f"<ul>{listed(hidden)}</ul></details>"
        if hidden
        else ""
    )
    return f'<ul id="files">{listed(own)}</ul>{folded}'


def is_hidden(name: str) -> bool:
    """A path with a part that starts with a dot: where the desktop's applications keep their own files."""
    return any(part.startswith(".") for part in PurePosixPath(name).parts)
