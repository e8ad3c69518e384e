"""`daharness score`: official outputs of other tools scored again (InfiAgent-DABench responses, DA-Agent
output folders, Tapilot-Crossing response files), by the families whose benchmarks define them: each
family's rescoring (`FamilyBase.rescoring`) brings its options and is chosen by one of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from daharness.cli.app import app
from daharness.cli.families import FamilyChoices, takes_family_options
from daharness.cli.options import (
    DebugOption,
    JsonOption,
    ScoringSandboxOption,
    print_warnings,
    scoring_confined,
)
from daharness.cli.typed_options import flag
from daharness.core.errors import UserError

if TYPE_CHECKING:
    from daharness.core.family import FamilyBase


@app.command()
@takes_family_options("score", modes=lambda family: family.rescoring is not None, rescoring=True)
def score(
    families: FamilyChoices | None = None,
    json_path: JsonOption = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", help="Entries scored at once.", min=1)
    ] = 1,
    sandbox: ScoringSandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Rescore outputs of a benchmark's own tools (response files, output folders), as the family that
    owns the benchmark scores them: the options given choose the family (the options below)."""
    from daharness.cli.options import out
    from daharness.core.family_commands import RescoringContext
    from daharness.report.build import check_writable, write_json
    from daharness.report.figures import print_figures

    assert families is not None
    family = _chosen(families)
    rescoring = family.rescoring
    assert rescoring is not None
    selected = flag(rescoring.selected_by)
    options = families.rescoring.parsed(rescoring.options, f"score {selected}")
    check_writable(json_path)  # before the scoring, not after it
    context = RescoringContext(
        mode=families.mode_of(family), sandbox=sandbox, concurrency=concurrency,
        confined=lambda: scoring_confined(sandbox), console=out, warn=print_warnings,
        draw=lambda tables, title: print_figures(out, tables, title),
    )  # fmt: skip
    figures = rescoring.rescore(options, context)
    if json_path is not None:
        write_json(json_path, figures)
        out.print(f"wrote {json_path}")


def _chosen(families: FamilyChoices) -> FamilyBase:
    """The family whose rescoring the options choose: exactly one rescoring's selecting option given."""
    offered = [family for family in families.ordered if family.rescoring is not None]
    given = [family for family in offered if family.rescoring.selected_by in families.rescoring.values]  # type: ignore[union-attr]
    if len(given) > 1:
        names = " and ".join(flag(family.rescoring.selected_by) for family in given)  # type: ignore[union-attr]
        raise UserError(f"{names} rescore different outputs: give one of them")
    if not given:
        raise UserError(_which_options(offered))
    return given[0]


def _which_options(offered: list[FamilyBase]) -> str:
    """`--responses is required (or --dacode-eval with --dacode-tasks, --gold, --outputs; or ...)`."""
    ways: list[str] = []
    for family in offered:
        rescoring: Any = family.rescoring
        needs = [
            flag(name)
            for name, info in rescoring.options.model_fields.items()
            if info.is_required() and name != rescoring.selected_by
        ]
        ways.append(flag(rescoring.selected_by) + (f" with {', '.join(needs)}" if needs else ""))
    if not ways:
        return "no family rescores outputs here"
    others = f" (or {'; or '.join(ways[1:])})" if ways[1:] else ""
    return f"{ways[0]} is required{others}"
