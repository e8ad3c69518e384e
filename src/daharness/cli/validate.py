"""`daharness validate`: every task's reference scores 1 and wrong results score lower, each family's
tasks checked the way the family declares (`FamilyBase.validation`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from daharness.cli.app import app
from daharness.cli.families import FamilyChoices, takes_family_options
from daharness.cli.options import DebugOption, SuiteOption, id_list
from daharness.core.errors import UserError

JsonStates = Annotated[
    Path | None,
    typer.Option("--json", help="tasks checked by their states (workflow): write each one's result as JSON."),
]


@app.command()
@takes_family_options("validate")
def validate(
    suite: SuiteOption = "workspace",
    families: FamilyChoices | None = None,
    ids: Annotated[str | None, typer.Option(help="Comma-separated task ids to check.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Check only the first N selected tasks.")] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", min=1, help="Tasks checked at once.")
    ] = 2,
    json_path: JsonStates = None,
    debug: DebugOption = False,
) -> None:
    """Check every task: its reference solution scores 1 and damaged outputs score below (exit 1 if not);
    workflow tasks: the untouched state scores 0, their tools alone on the setup's files below 1, and a single
    gold file 1."""
    from daharness.core.registry import task_mode_groups
    from daharness.runs.pipeline import family_hooks
    from daharness.runs.runner import select_tasks
    from daharness.sandbox import check_backend
    from daharness.suites import load_suite

    assert families is not None
    check_backend("bwrap")
    loaded = load_suite(suite)
    tasks = select_tasks(loaded.tasks, ids=id_list(ids), limit=limit)
    if not tasks:  # e.g. an official suite whose every task needs what this machine cannot give
        why = (
            f" ({len(loaded.unsupported)} unsupported: `daharness suites check {suite}` lists why)"
            if loaded.unsupported
            else ""
        )
        raise UserError(f"{loaded.name}: no task to check{why}")
    scoring = families.scoring(task_mode_groups(tasks))
    by_damage = [task for task in tasks if family_hooks(task).validation != "states"]
    by_states = [task for task in tasks if family_hooks(task).validation == "states"]
    passed = _by_damage(loaded.name, by_damage, scoring, concurrency) if by_damage else True
    if by_states:
        passed = _by_states(loaded, by_states, scoring, concurrency, json_path) and passed
    if not passed:
        raise typer.Exit(1)


def _by_damage(suite: str, tasks: list[Any], scoring: Any, concurrency: int) -> bool:
    """The shared check (`runs/validate.py`) and its table. True when every task passes."""
    from concurrent.futures import ThreadPoolExecutor

    from daharness.cli.options import out
    from daharness.core.registry import task_mode_groups
    from daharness.report.terminal import print_validation
    from daharness.runs.validate import validate_task

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(lambda task: validate_task(task, scoring=scoring), tasks))
    used = task_mode_groups(tasks)
    shown = ", ".join(f"{group} {mode}" for group, mode in sorted(scoring.modes.items()) if group in used)
    print_validation(out, suite, shown or "no scoring modes", results)
    return all(result.ok for result in results)


def _by_states(loaded: Any, tasks: list[Any], scoring: Any, concurrency: int, json_path: Path | None) -> bool:
    """Tasks checked by their states, each family its own way (workflow: untouched 0, setup only below 1,
    gold 1). True when all pass."""
    from daharness.cli.options import out
    from daharness.report.build import write_json
    from daharness.runs.pipeline import family_hooks

    found: dict[str, Any] = {}
    passed = True
    for family in dict.fromkeys(family_hooks(task) for task in tasks):
        own = [task for task in tasks if family_hooks(task) is family]
        results = family.validate_states(loaded, own, scoring, concurrency)
        family.print_validation(out, loaded.name, results)
        found.update({result.task_id: result.as_json() for result in results})
        passed = passed and all(result.ok for result in results)
    if json_path is not None:
        write_json(json_path, found)
        out.print(f"wrote {json_path}")
    return passed
