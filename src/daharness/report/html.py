"""A self-contained report.html: figures, charts (inline SVG, `bars.py`) and every sample."""

from __future__ import annotations

from html import escape
from typing import Any

from daharness.core.figures import FigureTable, Section
from daharness.core.registry import families
from daharness.report.agent_metrics import cost_text
from daharness.report.bars import svg_bars
from daharness.report.epochs import epochs_line, labels_line
from daharness.report.figures import DrawnFigures, labelled_rows, value_text
from daharness.report.task_set import task_set_text

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{margin-bottom:.2rem} .sub{color:#666;margin-top:0}
.cards{display:flex;gap:1rem;flex-wrap:wrap;margin:1.5rem 0}
.card{border:1px solid #ddd;border-radius:8px;padding:.8rem 1.2rem;min-width:150px}
.card .v{font-size:1.8rem;font-weight:600} .card .k{color:#666;font-size:.85rem} .card .ci{color:#444;font-size:.8rem}
.charts{display:flex;gap:1rem;flex-wrap:wrap} .charts figure{margin:0;flex:1;min-width:420px}
table{border-collapse:collapse;width:100%;font-size:.9rem} th,td{border-bottom:1px solid #eee;padding:.35rem .5rem;text-align:left;vertical-align:top}
tr.right td:first-child{border-left:4px solid #2e7d32} tr.wrong td:first-child{border-left:4px solid #c62828}
tr.error td:first-child{border-left:4px solid #ef6c00} tr.excluded td:first-child{border-left:4px solid #9e9e9e}
.ok{color:#2e7d32} .bad{color:#c62828} code,pre{background:#f6f6f6;border-radius:4px} pre{padding:.5rem;white-space:pre-wrap;max-height:20rem;overflow:auto}
details summary{cursor:pointer;color:#1565c0}
caption{text-align:left;font-weight:600;padding:1rem 0 .3rem}
"""


def card(label: str, value: str) -> str:
    return f'<div class="card"><div class="v">{escape(value)}</div><div class="k">{escape(label)}</div></div>'


def interval_card(label: str, figure: dict[str, Any], *, percent: bool) -> str:
    """A card with a figure and, under it, its 95% interval (the method is the figure's `method`)."""
    show = pct if percent else (lambda v: f"{v:.3f}")
    interval = (
        f"95% CI {show(figure['low'])} – {show(figure['high'])} ({figure.get('method') or 'interval'})"
        if figure.get("low") is not None
        else "no interval"
    )
    return (
        f'<div class="card"><div class="v">{escape(show(figure["value"]))}</div>'
        f'<div class="ci">{escape(interval)}</div><div class="k">{escape(label)} · {plural(figure["n"], "sample")}</div></div>'
    )


def usage_cards(report: dict[str, Any]) -> str:
    """Tokens, cost (with the replies that came from the response cache) and wall time of a run."""
    usage = (report.get("agent") or {}).get("usage") or {}
    cards = ""
    if usage.get("calls"):
        cards += card("tokens in / out", f"{usage['prompt_tokens']:,} / {usage['completion_tokens']:,}")
        cards += card("cost", cost_text(usage))
        if usage.get("cached_calls") is not None:
            cards += card("model replies from the cache", f"{usage['cached_calls']} / {usage['calls']}")
    return cards + card("wall time", f"{report['wall_time_s']['elapsed']:.1f}s")


def plural(count: int, word: str) -> str:
    """'1 sample', '2 samples'."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def scoring_modes(report: dict[str, Any]) -> str:
    """The scoring modes of the families the run has samples of ('closed-form strict'), not of all."""
    groups = {
        families.get(name).impl.mode_group
        for name in {sample["family"] for sample in report["samples"]}
        if name in families
    }
    return ", ".join(f"{group} {mode}" for group, mode in report["run"]["scoring"].items() if group in groups)


def figures_html(figures: DrawnFigures) -> str:
    """The headline as cards, then each table: its charted sections as bars, the others as a table."""
    cards = "".join(card(f.label, value_text(f.value, f.measure, html=True)) for f in figures.headline)
    parts = [f'<div class="cards">{cards}</div>'] if cards else []
    for table in figures.tables:
        plain = [section for section in table.sections if section.chart is None or _charted(table) is None]
        if plain:
            parts.append(_html_table(table, plain))
        charts = [_chart(table, section) for section in table.sections if section not in plain]
        if charts:
            parts.append(f'<div class="charts">{"".join(charts)}</div>')
    return "".join(parts)


def _charted(table: FigureTable) -> int | None:
    """The column a chart of the table draws: its first rate or mean."""
    return next((i for i, c in enumerate(table.columns) if c.measure in ("rate", "mean")), None)


def _chart(table: FigureTable, section: Section) -> str:
    index = _charted(table)
    assert index is not None
    column = table.columns[index]
    values = {row.group: float(row.values[index]) for row in section.rows if row.values[index] is not None}
    title = f"{column.label} by {section.name}" if section.name else table.title or column.label
    return f"<figure>{svg_bars(values, title, section.chart == 'bars', column.label)}</figure>"


def _html_table(table: FigureTable, sections: list[Section]) -> str:
    headers, rows = labelled_rows(table, sections)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{escape(label)}</td>" for label in labels)
        + "".join(
            f"<td>{escape(value_text(v, c.measure, html=True))}</td>"
            for v, c in zip(row.values, table.columns, strict=True)
        )
        + "</tr>"
        for labels, row in rows
    )
    caption = f"<caption>{escape(table.title)}</caption>" if table.title else ""
    cells = "".join(f"<th>{escape(label)}</th>" for label in [*headers, *(c.label for c in table.columns)])
    return f"<table>{caption}<tr>{cells}</tr>{body}</table>"


def family_sections(report: dict[str, Any], heading: str) -> str:
    """Each family's figures under a heading that names it."""
    drawn = [DrawnFigures.model_validate(raw) for raw in report.get("family_tables", {}).values()]
    return "".join(f"<{heading}>{escape(f.title)}</{heading}>{figures_html(f)}" for f in drawn)


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _row_class(sample: dict[str, Any]) -> str:
    if sample["status"] == "error":
        return "error"
    if sample["excluded"]:
        return "excluded"
    return "right" if sample["value"] >= 1.0 else "wrong"


def _sample_row(sample: dict[str, Any]) -> str:
    verdict = {"error": "error", "excluded": "excluded", "right": "right", "wrong": "wrong"}[
        _row_class(sample)
    ]
    subs = "".join(
        f"<tr><td><code>{escape(name)}</code></td><td>{escape(str(entry['label']))}</td>"
        f"<td>{escape(str(entry['predicted']))}</td>"
        f'<td class="{"ok" if entry["correct"] else "bad"}">{"✓" if entry["correct"] else "✗"}</td></tr>'
        for name, entry in sample["sub_answers"].items()
    )
    sub_table = (
        f"<table><tr><th>answer</th><th>label</th><th>predicted</th><th></th></tr>{subs}</table>"
        if subs
        else ""
    )
    answer = f"<pre>{escape(sample['answer'] or '')}</pre>" if sample["answer"] else ""
    detail = f"<details><summary>{escape(sample['explanation'] or '')}</summary>{sub_table}{answer}</details>"
    return (
        f'<tr class="{_row_class(sample)}"><td>{escape(sample["id"])}</td><td>{verdict}</td>'
        f"<td>{escape(sample['level'] or '')}</td><td>{escape(', '.join(sample['concepts']))}</td>"
        f"<td>{detail}</td><td>{sample['duration_s']:.2f}s</td></tr>"
    )


def _integrity_list(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>None.</p>"
    items = []
    for row in rows:
        what = ([f"agent failure: {row['failure']}"] if row["failure"] else []) + [
            flag["detail"] for flag in row["suspicious"]
        ]
        what += [
            f"not collected: {entry['path']} ({entry['kind']}"
            + (f" to {entry['target']})" if entry.get("target") else ")")
            for entry in row["skipped_files"]
        ]
        items.append(f"<li><code>{escape(row['id'])}</code>: {escape('; '.join(what))}</li>")
    return f"<ul>{''.join(items)}</ul>"


def render_html(report: dict[str, Any]) -> str:
    run, counts = report["run"], report["counts"]
    modes = scoring_modes(report) or "—"
    cards = "".join(
        [
            card("samples", str(counts["samples"])),
            card("right / wrong", f"{counts['correct']} / {counts['wrong']}"),
            card("errors (infrastructure, not in the score)", str(counts["errors"])),
            card("mean score with errors as 0", pct(report.get("mean_score_errors_as_zero"))),
            card("agent failures (scored 0)", str(counts.get("agent_failures", 0))),
            card("samples with suspicious actions", str(counts.get("suspicious", 0))),
            card("excluded", str(counts["excluded"])),
        ]
    )
    extra_lines = "".join(
        f'<p class="sub">{escape(line)}</p>'
        for line in (labels_line(run), epochs_line(report.get("epochs")), task_set_text(run.get("task_set")))
        if line
    )
    intervals = report.get("intervals")
    if intervals and intervals["accuracy"]["n"]:
        cards += interval_card("accuracy", intervals["accuracy"], percent=True)
        cards += interval_card("mean score", intervals["mean_score"], percent=False)
    agent = report.get("agent") or {}
    if agent.get("samples") and agent.get("usage", {}).get("calls"):
        debug, usage = agent["self_debug"], agent["usage"]
        cards += "".join(
            [
                card("completed within the step limit", pct(agent["completion_rate"])),
                card("average steps", str(agent["average_steps"])),
                card("executable code", pct(agent["executable_code_rate"])),
                card(
                    "self-debug success rate (SDSR)", "—" if debug["sdsr"] is None else f"{debug['sdsr']:.2f}"
                ),
                card("model requests retried", str(usage.get("retries", 0))),
                card("reformat step", "used" if agent["reformat_used"] else "not used"),
            ]
        )
    cards += usage_cards(report)
    sections = family_sections(report, "h2")
    errors = "".join(
        f"<li><code>{escape(e['id'])}</code> (attempt {e['attempt']}): {escape(e['error'] or '')}</li>"
        for e in report["errors"]
    )
    rows = "".join(_sample_row(sample) for sample in report["samples"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>daharness · {escape(str(run["suite"]))}</title>
<style>{_CSS}</style></head><body>
<h1>{escape(str(run["suite"]))} · {escape(str(run["agent"]))}</h1>
<p class="sub">model <b>{escape(str(run.get("model") or "—"))}</b> · scoring <b>{escape(modes)}</b> · created {escape(str(run["created_at"]))}
 · daharness {escape(str(run["daharness_version"]))} · {escape(run["dir"])}</p>{extra_lines}
<div class="cards">{cards}</div>
{sections}
<h2>Integrity: agent failures, suspicious actions, files not collected</h2>
{_integrity_list(report.get("integrity", []))}
<h2>Errors of the harness</h2>
{f"<ul>{errors}</ul>" if errors else "<p>None.</p>"}
<h2>Samples</h2>
<table><tr><th>id</th><th>verdict</th><th>level</th><th>concepts</th><th>details</th><th>time</th></tr>{rows}</table>
</body></html>
"""
