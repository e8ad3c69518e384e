"""`daharness compare` output: rich tables in the terminal and a self-contained HTML page."""

from __future__ import annotations

from html import escape
from typing import Any

from rich.console import Console
from rich.markup import escape as markup
from rich.table import Table

from daharness.report.compare import significant
from daharness.report.epochs import epochs_line, labels_line
from daharness.report.html import _CSS, pct
from daharness.report.task_set import task_set_text


def _signed_pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.1f} pt"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _interval(figure: dict[str, Any], show: Any) -> str:
    if figure.get("low") is None:
        return "[—]"
    return f"[{show(figure['low'])}, {show(figure['high'])}]"


METHODS = (
    "Intervals: 95% Wilson score over samples (rates; for mean scores in [0, 1], conservative). "
    "Δ = B − A on the samples scored in both runs: exact McNemar test for right/wrong, exact sign-flip "
    "permutation test for scores (Monte Carlo past 16 differing samples); a Δ interval is a paired "
    "percentile bootstrap, given only from 30 paired samples on ([—] below)."
)


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def run_rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    for run in report["runs"]:
        accuracy, score = run["figures"]["accuracy"], run["figures"]["mean_score"]
        rows.append(
            [
                run["label"], f"{run['agent']} · {run['model'] or '—'}", str(accuracy["n"]), str(run["errors"]),
                f"{pct(accuracy['value'])} {_interval(accuracy, pct)}",
                f"{_num(score['value'])} {_interval(score, _num)}",
            ]
        )  # fmt: skip
    return rows


RUN_COLUMNS = ["run", "agent · model", "scored", "errors", "accuracy [95% CI]", "mean score [95% CI]"]
PAIR_COLUMNS = ["group", "n", "acc A → B", "Δ acc [95% CI]", "McNemar p (A✓ B✓)", "Δ score [95% CI]", "p"]


def pair_rows(comparison: dict[str, Any]) -> list[tuple[list[str], bool]]:
    rows = []
    for group in comparison["groups"]:
        accuracy, score = group["accuracy"], group["mean_score"]
        test = accuracy["mcnemar"]
        row = [
            group["group"], str(group["n"]), f"{pct(accuracy['a'])} → {pct(accuracy['b'])}",
            f"{_signed_pct(accuracy['diff'])} {_interval(accuracy, _signed_pct)}",
            f"{_p(test['p'])} ({test['only_a_right']} {test['only_b_right']})",
            ("—" if score["diff"] is None else f"{score['diff']:+.3f}") + f" {_interval(score, lambda v: f'{v:+.3f}')}",
            _p(score["p"]),
        ]  # fmt: skip
        rows.append((row, significant(test["p"]) or significant(score["p"])))
    return rows


def print_comparison(console: Console, report: dict[str, Any]) -> None:
    for run in report["runs"]:
        console.print(f"{run['label']}: {markup(run['dir'])} ({markup(str(run['suite']))})")
        for line in _run_lines(run):
            console.print(f"   {markup(line)}")
    if report.get("task_sets_differ"):
        console.print(f"[yellow]warning[/]: {markup(report['task_sets_differ'])}")
    table = Table(title="runs", title_justify="left", caption="intervals: 95% Wilson score")
    for column in RUN_COLUMNS:
        table.add_column(column)
    for row in run_rows(report):
        table.add_row(*map(markup, row))
    console.print(table)
    for comparison in report["comparisons"]:
        title = f"{comparison['b']} vs {comparison['a']}: {comparison['paired']} paired samples"
        if not comparison["same_suite"]:
            console.print(f"[yellow]warning[/]: {markup(_suite_warning(report, comparison))}")
        pairs = Table(title=title, title_justify="left")
        for column in PAIR_COLUMNS:
            pairs.add_column(column)
        for row, flagged in pair_rows(comparison):
            pairs.add_row(*map(markup, row), style="bold" if flagged else None)
        console.print(pairs)
        console.print(METHODS, style="dim")
        left_out = len(comparison["only_in_a"]) + len(comparison["only_in_b"])
        if left_out:
            console.print(f"left out (scored in one run only): {left_out}")
        flipped = comparison["flipped"]
        console.print(f"flipped samples ({len(flipped)}):" if flipped else "no sample flipped")
        for flip in flipped:
            arrow = "✗ → ✓" if flip["direction"] == "gained" else "✓ → ✗"
            console.print(f"  {markup(flip['id'])}: {arrow} ({flip['a']:.2f} → {flip['b']:.2f})")


def _run_lines(run: dict[str, Any]) -> list[str]:
    lines = (labels_line(run), epochs_line(run.get("epochs")), task_set_text(run.get("task_set")))
    return [line for line in lines if line]


def _suite_warning(report: dict[str, Any], comparison: dict[str, Any]) -> str:
    suites = {run["label"]: run["suite"] for run in report["runs"]}
    a, b = comparison["a"], comparison["b"]
    return (
        f"{b} is a run of suite {suites[b]!r} and {a} of {suites[a]!r}: samples are paired by id, "
        "which may name different tasks in different suites"
    )


def _table(columns: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join(
        f'<tr class="{(classes or [""] * len(rows))[i]}">'
        + "".join(f"<td>{escape(c)}</td>" for c in row)
        + "</tr>"
        for i, row in enumerate(rows)
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def render_comparison_html(*reports: dict[str, Any]) -> str:
    """One page of comparisons: each report's (a run set's suites one after another, under their names)."""
    many = len(reports) > 1
    body = "".join(
        (f"<h1>{escape(str(report['runs'][0]['suite']))}</h1>" if many else "") + _sections(report)
        for report in reports
    )
    count = sum(len(report["runs"]) for report in reports)
    note = f"<p class=sub>{escape(METHODS)} Bold rows: p &lt; 0.05.</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>daharness · comparison</title>
<style>{_CSS} tr.sig td{{font-weight:600}} li.gained{{color:#2e7d32}} li.lost{{color:#c62828}}</style></head><body>
<h1>Comparison of {count} runs</h1>{note}{body}
</body></html>
"""


def pair_headline(comparison: dict[str, Any]) -> str:
    """`B vs A: Δ accuracy +12.5 pt [-3.1 pt, +28.0 pt], McNemar p 0.031, 3 of 12 paired samples flipped`."""
    pair = f"{comparison['b']} vs {comparison['a']}"
    if not comparison["paired"]:
        return f"{pair}: no scored sample in common"
    accuracy = comparison["groups"][0]["accuracy"]  # the group of every paired sample
    return (
        f"{pair}: Δ accuracy {_signed_pct(accuracy['diff'])} {_interval(accuracy, _signed_pct)}, McNemar p "
        f"{_p(accuracy['mcnemar']['p'])}, {len(comparison['flipped'])} of {comparison['paired']} paired "
        "samples flipped"
    )


def _sections(report: dict[str, Any]) -> str:
    legend = "".join(
        f"<li><b>{escape(run['label'])}</b>: {escape(run['dir'])} ({escape(str(run['suite']))})"
        + "".join(f"<br>{escape(line)}" for line in _run_lines(run))
        + "</li>"
        for run in report["runs"]
    )
    warning = report.get("task_sets_differ")
    differ = f'<p class="bad">{escape(warning)}</p>' if warning else ""
    sections = [f"<h2>Runs</h2><ul>{legend}</ul>{differ}{_table(RUN_COLUMNS, run_rows(report))}"]
    for comparison in report["comparisons"]:
        rows = pair_rows(comparison)
        flips = "".join(
            f'<li class="{flip["direction"]}"><code>{escape(flip["id"])}</code> '
            f"{'✗ → ✓' if flip['direction'] == 'gained' else '✓ → ✗'} ({flip['a']:.2f} → {flip['b']:.2f})</li>"
            for flip in comparison["flipped"]
        )
        sections.append(
            f"<h2>{escape(comparison['b'])} vs {escape(comparison['a'])} "
            f"<small>({comparison['paired']} paired samples)</small></h2>"
            + (
                ""
                if comparison["same_suite"]
                else f'<p class="bad">{escape(_suite_warning(report, comparison))}</p>'
            )
            + _table(
                PAIR_COLUMNS, [row for row, _ in rows], ["sig" if flagged else "" for _, flagged in rows]
            )
            + f"<h3>Flipped samples ({len(comparison['flipped'])})</h3>"
            + (f'<ul class="flips">{flips}</ul>' if flips else "<p>None.</p>")
        )
    return "".join(sections)
