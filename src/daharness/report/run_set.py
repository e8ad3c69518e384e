"""A run set's figures: one row per run (from its report.json) and, for each suite run by several agents
or models, their comparison (`compare.compare_runs`, paired by sample); and the grouping by suite that
`daharness compare SET` uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from daharness.report.build import REPORT_JSON
from daharness.report.compare import compare_runs
from daharness.report.compare_render import pair_headline
from daharness.runs.run_set import RunSetFile, SetMember
from daharness.runs.rundir import RunDir


def set_summary(folder: Path, found: RunSetFile, codes: dict[str, int]) -> dict[str, Any]:
    """summary.json: each run's row (its exit code this time, `None` when it did not run) and the
    comparisons of the runs of each suite."""
    rows = [_row(folder, member, codes) for member in found.runs]
    reported = [folder / row["dir"] for row in rows if row["samples"] is not None]
    return {"set": str(folder), "runs": rows, "comparisons": compare_by_suite(reported)}


def _row(folder: Path, member: SetMember, codes: dict[str, int]) -> dict[str, Any]:
    row: dict[str, Any] = {**member.model_dump(), "exit": codes.get(member.dir)}
    path = folder / member.dir / REPORT_JSON
    report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    if report is None:
        return {
            **row,
            "samples": None,
            "errors": None,
            "accuracy": None,
            "mean_score": None,
            "task_set": None,
        }
    intervals = report.get("intervals") or {}
    return {
        **row,
        "samples": report["counts"]["samples"],
        "errors": report["counts"]["errors"],
        "accuracy": intervals.get("accuracy"),
        "mean_score": intervals.get("mean_score"),
        "task_set": (report["run"].get("task_set") or {}).get("hash"),
    }


def _short_interval(figure: dict[str, Any] | None) -> str:
    """`75.0% [50–100]`: the interval's ends in whole percents."""
    if not figure or figure.get("value") is None:
        return "—"
    if figure.get("low") is None:
        return f"{figure['value']:.1%}"
    return f"{figure['value']:.1%} [{figure['low'] * 100:.0f}–{figure['high'] * 100:.0f}]"


def compare_by_suite(dirs: list[Path]) -> list[dict[str, Any]]:
    """compare's figures for each suite that two or more of the runs ran (runs of different suites pair
    nothing: their sample ids name other tasks)."""
    return [compare_runs(group) for group in group_by_suite(dirs) if len(group) > 1]


def group_by_suite(dirs: list[Path]) -> list[list[Path]]:
    """The runs by the suite they ran, in the order each suite first appears."""
    groups: dict[str, list[Path]] = {}
    for path in dirs:
        groups.setdefault(str(RunDir.open_for_reading(path).spec().suite.get("name")), []).append(path)
    return list(groups.values())


SUMMARY_COLUMNS = ("run", "n", "errors", "accuracy", "mean", "task set", "exit")


def print_set_summary(console: Console, summary: dict[str, Any]) -> None:
    """The set's table, one row per run (its folder names its suite, agent and model), and a line per
    comparison of two runs of a suite."""
    table = Table(
        title=f"run set {escape(summary['set'])}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
        caption="n: samples; accuracy [95% CI]; mean: mean score; exit: the run's exit code this time",
        caption_justify="left",
    )  # fmt: skip
    for column in SUMMARY_COLUMNS:
        table.add_column(column, overflow="fold")
    for row in summary["runs"]:
        exit_code = "—" if row["exit"] is None else str(row["exit"])
        if row["samples"] is None:
            table.add_row(escape(row["dir"]), "not run", "", "", "", "", exit_code)
            continue
        mean = (row["mean_score"] or {}).get("value")
        table.add_row(
            escape(row["dir"]), str(row["samples"]), str(row["errors"]), _short_interval(row["accuracy"]),
            "—" if mean is None else f"{mean:.3f}", (row["task_set"] or "—")[:8], exit_code,
        )  # fmt: skip
    console.print(table)
    for figures in summary["comparisons"]:
        console.print(f"[bold]{escape(str(figures['runs'][0]['suite']))}[/]:")
        for run in figures["runs"]:
            model = escape(str(run["model"] or "—"))
            console.print(f"  {run['label']}: {escape(run['agent'])} · {model} ({escape(run['dir'])})")
        for comparison in figures["comparisons"]:
            console.print(f"  {escape(pair_headline(comparison))}", highlight=False)
        if figures.get("task_sets_differ"):
            console.print(f"  [yellow]warning[/]: {escape(figures['task_sets_differ'])}")
