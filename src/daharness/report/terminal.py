"""Terminal tables for a report (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from daharness.report.dabench_metrics import ACCURACY_BY_QUESTION


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2%}"


def print_figures(console: Console, figures: dict[str, Any], title: str) -> None:
    """Print the DABench figures: main results, then by concept, by concept count and by level."""
    main = Table(title=title, title_justify="left", show_header=True)
    main.add_column("metric")
    main.add_column("value", justify="right")
    for name, value in figures["main_results"].items():
        main.add_row(name, _pct(value))
    main.add_row("Accuracy for >= 2 concepts", _pct(figures["two_or_more_concepts_accuracy"]))
    counts = figures.get("counts", {})
    if counts:
        main.add_row("questions counted / excluded", f"{counts['counted']} / {counts['excluded']}")
    console.print(main)

    breakdown = Table(show_header=True, title_justify="left")
    breakdown.add_column("breakdown")
    breakdown.add_column("group")
    breakdown.add_column(ACCURACY_BY_QUESTION, justify="right")
    sections = (
        ("concept", figures["concept_accuracy_analysis"]),
        ("# concepts", figures["concept_count_accuracy_analysis"]),
        ("level", figures["by_level"]),
    )
    for label, values in sections:
        for group, value in sorted(values.items()):
            breakdown.add_row(label, str(group), _pct(value))
    console.print(breakdown)


def print_categories(console: Console, figures: dict[str, Any], title: str) -> None:
    """DA-Code style: mean score overall, by category, sub-category and difficulty."""
    table = Table(title=title, title_justify="left")
    table.add_column("breakdown")
    table.add_column("group")
    table.add_column("score", justify="right")
    table.add_row("all", "", _pct(figures["score"]))
    for label, key in (
        ("category", "by_category"),
        ("sub-category", "by_subcategory"),
        ("difficulty", "by_level"),
    ):
        for group, value in figures[key].items():
            table.add_row(label, group, _pct(value))
    console.print(table)


def print_report(console: Console, report: dict[str, Any]) -> None:
    run, counts = report["run"], report["counts"]
    if report.get("categories"):
        mode = run["scoring"].get("workspace_mode", "")
        print_categories(console, report["categories"], f"{run['suite']} · {run['agent']} · {mode}")
    else:
        mode = run["scoring"].get("closed_form_mode", "")
        print_figures(console, report["dabench"], f"{run['suite']} · {run['agent']} · {mode}")
    console.print(
        f"samples {counts['samples']}: {counts['correct']} right, {counts['wrong']} wrong, "
        f"{counts['excluded']} excluded, [{'red' if counts['errors'] else 'green'}]{counts['errors']} errors[/]"
        f" · wall time {report['wall_time_s']['elapsed']:.1f}s"
    )
    agent = report.get("agent") or {}
    if agent.get("samples"):
        debug, usage = agent["self_debug"], agent["usage"]
        sdsr = "—" if debug["sdsr"] is None else f"{debug['sdsr']:.2f}"
        line = (
            f"agent: completed {_pct(agent['completion_rate'])}, {agent['average_steps']} steps on average, "
            f"executable code {_pct(agent['executable_code_rate'])}, SDSR {sdsr} "
            f"(passed/failed with self-debug {debug['passed_with_debug']}/{debug['failed_with_debug']})"
        )
        if usage["calls"]:  # a model was used
            line += (
                f", {usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion tokens, "
                f"${usage['cost_usd']:.4f}"
            )
        console.print(line + (", answers reformatted" if agent["reformat_used"] else ""))
    for error in report["errors"][:10]:
        console.print(f"  [red]error[/] {error['id']}: {error['error']}")
    if len(report["errors"]) > 10:
        console.print(f"  … and {len(report['errors']) - 10} more in report.json")
