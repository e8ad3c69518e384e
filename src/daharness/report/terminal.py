"""Terminal output of reports and checks (rich tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from daharness.report.agent_metrics import cost_text
from daharness.report.epochs import epochs_line, interval_basis, labels_line
from daharness.report.figures import DrawnFigures, print_figures
from daharness.report.task_set import task_set_text


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2%}"


def interval_text(figure: dict[str, Any] | None, percent: bool = True) -> str:
    """'75.00% (95% CI 50.00–100.00%)'; without its interval when there is none."""
    if not figure or figure.get("value") is None:
        return "—"
    show = pct if percent else (lambda v: f"{v:.3f}")
    if figure.get("low") is None:
        return show(figure["value"])
    return f"{show(figure['value'])} (95% CI {show(figure['low'])}–{show(figure['high'])})"


def print_report(console: Console, report: dict[str, Any]) -> None:
    run, counts = report["run"], report["counts"]
    for raw in report.get("family_tables", {}).values():
        figures = DrawnFigures.model_validate(raw)
        parts = (figures.title, run["suite"], run["agent"], figures.mode)
        print_figures(console, figures, " · ".join(str(part) for part in parts if part))
    console.print(
        f"samples {counts['samples']}: {counts['correct']} right, {counts['wrong']} wrong, "
        f"{counts['excluded']} excluded, [{'red' if counts['errors'] else 'green'}]{counts['errors']} errors[/]"
        f" · wall time {report['wall_time_s']['elapsed']:.1f}s"
    )
    intervals = report.get("intervals")
    if intervals and intervals["accuracy"]["n"]:
        console.print(
            f"accuracy {interval_text(intervals['accuracy'])} · mean score "
            f"{interval_text(intervals['mean_score'], percent=False)} {interval_basis(intervals['accuracy'])}"
        )
    for line in (epochs_line(report.get("epochs")), labels_line(run), task_set_text(run.get("task_set"))):
        if line:
            console.print(escape(line))
    print_integrity(console, report)
    agent = report.get("agent") or {}
    if agent.get("samples"):
        debug, usage = agent["self_debug"], agent["usage"]
        sdsr = "—" if debug["sdsr"] is None else f"{debug['sdsr']:.2f}"
        line = (
            f"agent: completed {pct(agent['completion_rate'])}, {agent['average_steps']} steps on average, "
            f"executable code {pct(agent['executable_code_rate'])}, SDSR {sdsr} "
            f"(passed/failed with self-debug {debug['passed_with_debug']}/{debug['failed_with_debug']})"
        )
        if usage["calls"]:  # a model was used
            line += (
                f", {usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion tokens, "
                f"{cost_text(usage)}"
            )
            if usage.get("retries"):
                line += f", {usage['retries']} model requests retried"
        console.print(line + (", answers reformatted" if agent["reformat_used"] else ""))
    for error in report["errors"][:10]:
        console.print(f"  [red]error[/] {escape(error['id'])}: {escape(str(error['error']))}")
    if len(report["errors"]) > 10:
        console.print(f"  … and {len(report['errors']) - 10} more in report.json")


def print_headline(console: Console, report: dict[str, Any]) -> None:
    """A run's figures in one line (a run of a run set; its report.html has the rest)."""
    run, counts = report["run"], report["counts"]
    accuracy = (report.get("intervals") or {}).get("accuracy")
    what = " · ".join(str(part) for part in (run["suite"], run["agent"], run.get("model")) if part)
    console.print(
        f"{escape(what)}: accuracy {interval_text(accuracy)} over {counts['samples']} samples, "
        f"[{'red' if counts['errors'] else 'green'}]{counts['errors']} errors[/] · {escape(run['dir'])}",
        highlight=False,
    )


def print_integrity(console: Console, report: dict[str, Any]) -> None:
    """The headline beside the accuracy: infrastructure errors (left out of it), agent failures (in it,
    as 0) and samples with suspicious actions, so that none of them can hide."""
    counts = report["counts"]
    errors, failures = counts["errors"], counts.get("agent_failures", 0)
    suspicious = counts.get("suspicious", 0)
    line = f"mean score {pct(report['mean_score'])}"
    if errors:
        line += (
            f" [red]· {errors} infrastructure errors left out[/] (counted as 0: "
            f"{pct(report.get('mean_score_errors_as_zero'))})"
        )
    line += f" · {failures} agent failures scored 0" if failures else ""
    line += f" · [yellow]{suspicious} samples with suspicious actions[/]" if suspicious else ""
    if errors or failures or suspicious:  # else the accuracy line above already gives the mean score
        console.print(line)
    for row in report.get("integrity", [])[:10]:
        what = [row["failure"]] if row["failure"] else []
        what += [flag["detail"] for flag in row["suspicious"][:3]]
        if what:
            console.print(f"  [yellow]check[/] {escape(row['id'])}: {escape('; '.join(what))}")


def print_validation(console: Console, suite: str, mode: str, results: list[Any]) -> None:
    """The table of `daharness validate`: each task's reference score, mutations, problems."""
    table = Table(title=f"{suite}: validation ({mode})", title_justify="left")
    for column in ("task", "reference", "mutations scored below", "allowed changes kept", "problems"):
        table.add_column(column)
    for result in results:
        below = sum(value < (result.reference_score or 0) for value in result.mutations.values())
        kept = sum(value >= (result.reference_score or 0) for value in result.allowed.values())
        reference = "—" if result.reference_score is None else f"{result.reference_score:.3f}"
        verdict = "[green]ok[/]" if result.ok else "[red]" + escape("; ".join(result.problems)) + "[/]"
        table.add_row(
            result.task_id,
            reference,
            f"{below}/{len(result.mutations)}",
            f"{kept}/{len(result.allowed)}",
            verdict,
        )
    console.print(table)
    failed = [r.task_id for r in results if not r.ok]
    console.print(
        f"{len(results) - len(failed)} of {len(results)} tasks pass"
        + (f"; failing: {', '.join(failed)}" if failed else "")
    )


def print_unsupported(console: Console, suite: str, unsupported: dict[str, str]) -> None:
    """The tasks a suite lists as unsupported here, with the reason."""
    table = Table(title=f"{suite}: unsupported tasks", title_justify="left")
    table.add_column("task")
    table.add_column("reason")
    for task_id, reason in unsupported.items():
        table.add_row(task_id, escape(reason))
    console.print(table)


def print_isolation(console: Console, report: dict[str, Any]) -> None:
    """`daharness doctor`: how agent code is isolated here and how each limit is enforced."""
    backend = escape(report["backend"])
    if report.get("isolated") is False:
        console.print(f"sandbox {backend}: [bold red]no isolation[/]")
    elif report.get("isolated") is None:
        console.print(f"sandbox {backend}: [yellow]isolation of its own, which it does not describe[/]")
    else:
        works = report.get("works", True)
        state = "[green]works[/]" if works else f"[red]cannot run[/]: {escape(report.get('problem', ''))}"
        tool = (
            f" (bubblewrap {report.get('bwrap_version')}, {report.get('bwrap')})" if "bwrap" in report else ""
        )
        console.print(f"sandbox {backend}: {state}{tool}")
        if works and "namespaces" in report:
            console.print(f"  namespaces: {report['namespaces']}; user: {report['user']}")
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("limit", "applies to", "through", "value"):
        table.add_column(column)
    for name, entry in report["limits"].items():
        if isinstance(entry, dict) and "scope" in entry:
            scope = {"sandbox": "the whole sandbox", "process": "[yellow]each process[/]"}.get(
                entry["scope"], f"[yellow]{escape(str(entry['scope']))}[/]"
            )
            table.add_row(name, scope, entry["via"], escape(entry["limit"]))
        elif isinstance(entry, dict):
            table.add_row(name, "the sandbox", "tmpfs size", ", ".join(f"{k} {v}" for k, v in entry.items()))
        else:
            table.add_row(name, "the sample", "the host", escape(str(entry)))
    console.print(table)
    _print_desktop(console, report.get("desktop"))
    for path in report.get("stale_folders_removed", []):
        console.print(f"removed the folder of a dead run: {escape(path)}")


def _print_desktop(console: Console, desktop: dict[str, Any] | None) -> None:
    """`daharness doctor`'s line on the desktop: available or why not, and the applications it lacks."""
    if desktop is None:
        return
    if not desktop["available"]:
        console.print(f"desktop: [yellow]not available[/]: {escape(desktop['problem'])}")
        return
    programs = ", ".join(Path(path).name for path in desktop["programs"].values() if path)
    console.print(f"desktop: [green]available[/] ({escape(programs)})")
    missing = [name for name, path in desktop["applications"].items() if not path]
    if missing:
        console.print(
            f"  applications missing: {escape(', '.join(missing))}; install with {escape(desktop['install'])}"
        )
