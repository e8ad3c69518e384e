"""`daharness generate`: new suites from a user's own tables, written by a model and checked in the sandbox."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from daharness.cli.app import app
from daharness.cli.options import INFRASTRUCTURE_EXIT, DebugOption, error_line
from daharness.core.errors import UserError

JOURNAL = "review.jsonl"  # each family's generator keeps its journal under this name
generate_app = typer.Typer(help="Generate a suite from your own tables.", no_args_is_help=True)
app.add_typer(generate_app, name="generate")

TablesOption = Annotated[Path, typer.Option("--tables", help="Folder of CSV tables.")]
ModelOption = Annotated[str, typer.Option("--model", help="Model id, or a name from --models-file.")]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.")
]
ModelsFileOption = Annotated[
    Path | None, typer.Option("--models-file", help="TOML file of named models (endpoint, sampling, prices).")
]
OutOption = Annotated[
    Path,
    typer.Option("--out", "-o", help="Suite folder to write; re-running with it goes on where it stopped."),
]
SandboxOption = Annotated[
    str, typer.Option("--sandbox", help="Where solutions run: 'bwrap' (isolated, default) or 'unsafe-local'.")
]
TemperatureOption = Annotated[
    float | None, typer.Option("--temperature", min=0, max=2, help="Sampling temperature (default 0.7).")
]


def _client(model: str, base_url: str | None, models_file: Path | None, temperature: float | None) -> Any:
    from daharness.models import ModelClient, resolve_model

    settings = resolve_model(
        model,
        config_file=models_file,
        base_url=base_url,
        api_key_env=None,
        overrides={"temperature": temperature},
    )
    if missing := settings.missing_key():
        raise UserError(missing)
    return ModelClient(settings, cache_mode="off")  # independent solutions: never the same reply twice


@contextmanager
def _progress(what: str, total: int, out_dir: Path, client: Any) -> Iterator[Callable[[Any], None]]:
    """A bar of the items done (a resumed generation starts at those in its journal) and the tokens used."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from daharness.cli.options import err
    from daharness.core.jsonl import read_journal

    columns = (TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[tokens]}"))
    with Progress(*columns, console=err) as progress:
        bar = progress.add_task(what, total=total, tokens="", completed=len(read_journal(out_dir / JOURNAL)))

        def advance(entry: Any) -> None:
            used = client.usage
            progress.update(bar, advance=1, tokens=f"{used.prompt_tokens + used.completion_tokens} tokens")

        yield advance


@contextmanager
def _model_outage() -> Iterator[None]:
    """The model failing after its retries stops the generation with one line and exit 3; what is done is
    in the journal, and the same command goes on."""
    from daharness.models import ModelError

    try:
        yield
    except ModelError as exc:
        error_line(f"{exc}; finished items are kept: run the same command again to go on")
        raise typer.Exit(INFRASTRUCTURE_EXIT) from None


def _checked_start(
    tables: Path, sandbox: str, model: str, base_url: str | None, models_file: Path | None, temperature: float
) -> Any:
    """What both generators check before asking anything (the tables' folder, the sandbox), and their
    model client."""
    from daharness.cli.options import err
    from daharness.sandbox import UNSAFE_BACKEND, UNSAFE_WARNING, check_backend

    if not tables.is_dir():
        raise UserError(f"--tables: {tables} is not a folder")
    check_backend(sandbox)
    if sandbox == UNSAFE_BACKEND:
        err.print(f"[yellow]warning[/]: {UNSAFE_WARNING}")
    return _client(model, base_url, models_file, temperature)


@generate_app.command("closed-form")
def closed_form(
    tables: TablesOption,
    model: ModelOption,
    out_dir: OutOption,
    base_url: BaseUrlOption = None,
    models_file: ModelsFileOption = None,
    per_table: Annotated[int, typer.Option("--per-table", min=1, help="Questions asked per table.")] = 4,
    concepts: Annotated[
        str | None,
        typer.Option("--concepts", help="Comma-separated DABench concepts (default: all seven)."),
    ] = None,
    solutions: Annotated[
        int, typer.Option("--solutions", min=1, help="Independent solutions run per question.")
    ] = 3,
    agree: Annotated[
        int | None, typer.Option("--agree", min=1, help="Solutions that must agree (default: all of them).")
    ] = None,
    temperature: TemperatureOption = 0.7,
    sandbox: SandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Questions per table, concept and level; answers fixed by agreeing solutions run in the sandbox."""
    from daharness.cli.options import out
    from daharness.families.closed_form import (
        CONCEPTS,
        GenerationSettings,
        generate_closed_form,
        summary,
    )

    chosen = tuple(c.strip() for c in concepts.split(",")) if concepts else CONCEPTS
    if unknown := [c for c in chosen if c not in CONCEPTS]:
        raise UserError(f"--concepts: unknown concept {unknown[0]!r}; known: {', '.join(CONCEPTS)}")
    if agree is not None and agree > solutions:
        raise UserError(f"--agree: {agree} is more than the {solutions} solutions")
    client = _checked_start(tables, sandbox, model, base_url, models_file, temperature)
    settings = GenerationSettings(tables, out_dir, per_table, chosen, solutions, agree or solutions, sandbox)
    total = len(list(tables.glob("*.csv"))) * per_table
    with _progress("questions", total, out_dir, client) as advance, _model_outage():
        entries = generate_closed_form(settings, client, advance)
    for line in summary(entries):
        out.print(line)
    out.print(f"suite: {out_dir} (review: {out_dir / 'review.html'}, {out_dir / JOURNAL})")


@generate_app.command("interactive")
def interactive(
    tables: TablesOption,
    model: ModelOption,
    out_dir: OutOption,
    base_url: BaseUrlOption = None,
    models_file: ModelsFileOption = None,
    dialogues: Annotated[int, typer.Option("--dialogues", min=1, help="Dialogues to write.")] = 2,
    turns: Annotated[int, typer.Option("--turns", min=1, help="Turns tried per dialogue.")] = 6,
    temperature: TemperatureOption = 0.7,
    sandbox: SandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Tapilot-Crossing's Decision Company loop: a client persona asks, a data scientist answers with code
    run in the sandbox; normal, clarification, plot, insight-mining, plot-QA and best-guess turns."""
    from daharness.cli.options import out
    from daharness.families.interactive import DialogueSettings, dialogue_summary, generate_interactive

    client = _checked_start(tables, sandbox, model, base_url, models_file, temperature)
    settings = DialogueSettings(tables, out_dir, dialogues, turns, sandbox)
    with _progress("dialogues", dialogues, out_dir, client) as advance, _model_outage():
        entries = generate_interactive(settings, client, advance)
    for line in dialogue_summary(entries):
        out.print(line)
    out.print(f"suite: {out_dir} (review: {out_dir / JOURNAL})")
