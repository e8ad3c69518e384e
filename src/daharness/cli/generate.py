"""`daharness generate <name>`: new suites from a user's own tables, written by a model and checked in the
sandbox. Each family with a generation (`FamilyBase.generation`) is one subcommand, with the options
every generation shares (tables, model, output folder, sandbox) and its own (its options model)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from daharness.cli.app import app
from daharness.cli.families import installs, ordered_families
from daharness.cli.options import INFRASTRUCTURE_EXIT, DebugOption, error_line
from daharness.cli.typed_options import Given, given_of, typed_parameters
from daharness.core.errors import UserError

if TYPE_CHECKING:
    from daharness.core.family_commands import Generation

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
EncodingOption = Annotated[
    str | None,
    typer.Option(
        "--encoding", help="Text encoding of the tables, e.g. cp1252 (default: detected per table)."
    ),
]
TemperatureOption = Annotated[
    float | None, typer.Option("--temperature", min=0, max=2, help="Sampling temperature (default 0.7).")
]


def _shared(
    tables: TablesOption,
    model: ModelOption,
    out_dir: OutOption,
    base_url: BaseUrlOption = None,
    models_file: ModelsFileOption = None,
    temperature: TemperatureOption = 0.7,
    sandbox: SandboxOption = "bwrap",
    encoding: EncodingOption = None,
    debug: DebugOption = False,
) -> None:
    """The options every generation takes (this function only lends them its signature)."""


@installs("generate")
def _add_subcommands() -> None:
    """One subcommand per family that generates suites."""
    for family in ordered_families():
        if family.generation is not None:
            generate_app.command(family.generation.command)(_subcommand(family.generation))


def _subcommand(generation: Generation) -> Callable[..., Any]:
    shared = list(inspect.signature(_shared, eval_str=True).parameters.values())
    own = typed_parameters({generation.command: generation.options}, {param.name for param in shared})

    def command(**values: Any) -> None:
        values.pop("debug", None)  # --debug acts when it is parsed
        given = Given()
        given_of(own, values, given)
        options = given.parsed(generation.options, f"generate {generation.command}")
        _generate(generation, options, **values)

    command.__doc__ = generation.help
    command.__signature__ = inspect.Signature([*shared, *own])  # type: ignore[attr-defined]
    return command


def _generate(
    generation: Generation,
    options: Any,
    *,
    tables: Path,
    model: str,
    out_dir: Path,
    base_url: str | None,
    models_file: Path | None,
    temperature: float | None,
    sandbox: str,
    encoding: str | None,
) -> None:
    from daharness.cli.options import out
    from daharness.core.family_commands import GenerationRequest

    if encoding is not None:  # before the bar is drawn and anything is asked
        from daharness.suites.user_tables import check_encoding

        check_encoding(encoding)
    client = _checked_start(tables, sandbox, model, base_url, models_file, temperature)
    total = generation.total(options, tables)
    with _progress(generation, total, out_dir, client) as advance, _model_outage():
        entries = generation.generate(
            options,
            GenerationRequest(tables, out_dir, sandbox, client, advance, say=_note, encoding=encoding),
        )
    for line in generation.summary(entries):
        out.print(line)
    review = ", ".join(str(out_dir / name) for name in generation.review_files)
    out.print(f"suite: {out_dir} (review: {review})")


def _checked_start(
    tables: Path,
    sandbox: str,
    model: str,
    base_url: str | None,
    models_file: Path | None,
    temperature: float | None,
) -> Any:
    """What every generation checks before asking anything (the tables' folder, the sandbox), and its
    model client."""
    from daharness.cli.options import err
    from daharness.models import ModelClient, resolve_model
    from daharness.sandbox import UNSAFE_BACKEND, UNSAFE_WARNING, check_backend

    if not tables.is_dir():
        raise UserError(f"--tables: {tables} is not a folder")
    check_backend(sandbox)
    if sandbox == UNSAFE_BACKEND:
        err.print(f"[yellow]warning[/]: {UNSAFE_WARNING}")
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
def _progress(
    generation: Generation, total: int, out_dir: Path, client: Any
) -> Iterator[Callable[[Any], None]]:
    """A bar of the items done (a resumed generation starts at those in its journal) and the tokens used."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from daharness.cli.options import err
    from daharness.core.jsonl import read_journal

    what = generation.counts
    columns = (TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[tokens]}"))
    with Progress(*columns, console=err) as progress:
        done = len(read_journal(out_dir / generation.journal))
        bar = progress.add_task(what, total=total, tokens="", completed=done)

        def advance(entry: Any) -> None:
            used = client.usage
            progress.update(bar, advance=1, tokens=f"{used.prompt_tokens + used.completion_tokens} tokens")

        yield advance


def _note(line: str) -> None:
    """A table skipped or cut, or the estimate of the tokens: one line on standard error."""
    from rich.markup import escape

    from daharness.cli.options import err

    err.print(f"[yellow]note[/]: {escape(line)}", highlight=False, soft_wrap=True)


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
