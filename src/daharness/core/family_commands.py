"""What a family adds to the commands (`FamilyBase.rescoring`, `.generation`, `.doctor`): `daharness score`
rescoring the official outputs of its benchmark's own tools, `daharness generate <name>` writing a suite
of its format from a user's tables, and its lines in `daharness doctor`. Each command's options are a
typed model whose fields become the command's flags, so the command line loops over the registered
families and names none of them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daharness.core.options import TypedOptions


class CommandOptions(TypedOptions):
    """Base of a family command's options. Each field is a flag of the command (`--dacode-eval` for
    `dacode_eval`), its description the help; the flags of every family stand on the command together,
    so a field without a default is required only once the family's command is chosen."""


# ---- daharness score ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RescoringContext:
    """What the `score` command hands a family's rescoring besides its options."""

    mode: str  # the run-level mode of the family's scoring modes (`--workspace-mode`), "" without them
    sandbox: str  # `--sandbox`: where agents' files are read while scoring (bwrap, unsafe-local)
    concurrency: int  # `-j`: entries scored at once
    confined: Callable[[], bool]  # checks that `sandbox` can run; True when it confines the reading
    console: Any  # a rich Console for the family's table
    warn: Callable[[list[str]], None]  # says each warning on one line
    # draws typed figure tables (`core.figures.FamilyFigures`) with a title, as reports draw them
    draw: Callable[[Any, str], None] = lambda tables, title: None


class Rescoring:
    """`daharness score` on outputs of the benchmark's own tools (DA-Agent output folders, Tapilot-Crossing
    response files): chosen by its `selected_by` option, which no other family's rescoring has."""

    options: type[CommandOptions] = CommandOptions
    selected_by = ""  # the field of `options` whose flag chooses this rescoring (`dacode_eval`)
    what = ""  # what it rescores, for `score --help` ("DA-Agent output folders")

    def rescore(self, options: Any, context: RescoringContext) -> dict[str, Any]:
        """Score the outputs, print the family's table on `context.console`, and return the figures that
        `score --json` writes."""
        raise NotImplementedError


# ---- daharness generate -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerationRequest:
    """What `daharness generate <name>` hands a family's generation besides its options: the folder of the
    user's tables, the suite folder to write (a re-run goes on where it stopped), the sandbox solutions
    run in, the model client (`daharness.models.ModelClient`) and `advance`, called once per item done."""

    tables: Path
    out: Path
    sandbox: str
    client: Any
    advance: Callable[[Any], None]
    say: Callable[[str], None] = lambda line: None  # a note of one line (a table skipped or cut)
    encoding: str | None = None  # the tables' text encoding (`--encoding`); None: detected per table


class Generation:
    """`daharness generate <command>`: a suite of the family's format from the user's tables, written by a
    model and checked in the sandbox; its journal in the suite folder records every item done."""

    command = ""  # the subcommand's name
    help = ""  # its help (first paragraph: its summary)
    options: type[CommandOptions] = CommandOptions
    counts = "items"  # what the progress bar counts
    journal = "review.jsonl"  # JSON lines, one per item done (a resumed generation starts at their count)
    review_files: tuple[str, ...] = ("review.jsonl",)  # files of the suite folder that show what was kept

    def total(self, options: Any, tables: Path) -> int:
        """The items the generation makes in all."""
        raise NotImplementedError

    def generate(self, options: Any, request: GenerationRequest) -> list[Any]:
        """Write the suite; return its journal's entries."""
        raise NotImplementedError

    def summary(self, entries: list[Any]) -> Iterable[str]:
        """Lines saying what was kept."""
        return ()


# ---- daharness doctor ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DoctorSection:
    """A family's part of `daharness doctor`: its findings under `name` in `--json`, its lines (rich
    markup) in the terminal."""

    name: str
    findings: dict[str, Any] = field(default_factory=dict)
    lines: tuple[str, ...] = ()
