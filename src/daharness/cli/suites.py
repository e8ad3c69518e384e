"""`daharness suites list` and `daharness suites check`: the built-in suites and formats, and a suite's
data defects."""

from __future__ import annotations

from typing import Annotated

import typer

from daharness.cli.app import suites_app
from daharness.cli.families import FamilyChoices, takes_family_options
from daharness.cli.options import DebugOption


@suites_app.command("list")
def suites_list(debug: DebugOption = False) -> None:
    """List the built-in suites (all their tasks, and how many run on this machine) and the formats that
    name suites by path."""
    from rich.markup import escape

    from daharness.cli.options import out
    from daharness.core.registry import suite_formats
    from daharness.suites import builtin_suites, load_suite

    for name in builtin_suites():
        loaded = load_suite(name)
        total, missing = len(loaded.tasks) + len(loaded.unsupported), len(loaded.unsupported)
        here = (
            f"{total - missing} run here ({missing} cannot: `daharness suites check {name}` says why)"
            if missing
            else "all run here"
        )
        out.print(f"{name}: {total} tasks, {here} — {loaded.description}", highlight=False)
    for name, entry in suite_formats.items():
        if entry.prefix:
            out.print(f"{entry.prefix}PATH: {escape(entry.summary)} ({name})")


@suites_app.command("check")
@takes_family_options("suites", "check", modes=(), formats="data")
def suites_check(
    suite: Annotated[str, typer.Argument(help="Built-in name or FORMAT:PATH.")] = "closed-form",
    families: FamilyChoices | None = None,
    debug: DebugOption = False,
) -> None:
    """Load a suite and list every task whose data has defects (exit 1 if any; option names no scorer
    reads, which the official code ignores too, are listed but are no defect)."""
    from rich.markup import escape

    from daharness.cli.options import out
    from daharness.report.terminal import print_unsupported
    from daharness.suites import load_suite

    assert families is not None
    loaded = load_suite(suite, **families.format_options())
    flagged = [task for task in loaded.tasks if task.warnings]
    for task in flagged:
        for warning in task.warnings:
            out.print(f"[yellow]{escape(warning)}[/]")
    if loaded.unsupported:
        print_unsupported(out, loaded.name, loaded.unsupported)
        out.print(f"{loaded.name}: {len(loaded.tasks)} supported, {len(loaded.unsupported)} unsupported")
    # a loader ends with "(ignored)" the warning about an option name no scorer reads (a misspelling in the
    # official configs, which the official code never reads either): said, but no defect of the data
    defective = [task for task in flagged if not all(w.endswith("(ignored)") for w in task.warnings)]
    out.print(f"{loaded.name}: {len(loaded.tasks)} tasks, {len(defective)} with defects")
    if ignoring := len(flagged) - len(defective):
        out.print(
            f"{loaded.name}: {ignoring} tasks name options that are ignored, as officially (not defects)"
        )
    if defective:
        raise typer.Exit(1)
