"""The `daharness` command line."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from daharness.errors import UserError

app = typer.Typer(
    help="Run, score and compare data-analysis agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
suites_app = typer.Typer(help="List and check suites.", no_args_is_help=True)
app.add_typer(suites_app, name="suites")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

SuiteOption = Annotated[
    str,
    typer.Option("--suite", "-s", help="Built-in suite name, or dabench:QUESTIONS.jsonl for official files."),
]
LabelsOption = Annotated[Path | None, typer.Option(help="Labels JSONL for a dabench: suite.")]
TablesOption = Annotated[Path | None, typer.Option(help="Folder of CSV tables for a dabench: suite.")]
ModeOption = Annotated[
    str,
    typer.Option("--mode", help="Closed-form scoring: 'normalized' (default) or 'strict' (official rule)."),
]


def _check_mode(mode: str) -> str:
    from daharness.scoring.closed_form import MODES

    if mode not in MODES:
        raise UserError(f"--mode: unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    return mode


@app.command()
def run(
    suite: SuiteOption = "closed-form",
    agent: Annotated[
        str, typer.Option("--agent", "-a", help="Agent name (see `daharness agents`).")
    ] = "reference",
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Run directory; re-running with it resumes. Default: the newest unfinished run of the same "
            "suite, agent and mode under runs/, else a new runs/<timestamp>-<suite>-<agent>/.",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Run only the first N selected tasks.")] = None,
    ids: Annotated[str | None, typer.Option(help="Comma-separated task ids to run.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", help="Samples run at once.")] = 1,
    mode: ModeOption = "normalized",
    workspace_mode: Annotated[
        str,
        typer.Option(help="Workspace (DA-Code) scoring: 'corrected' (default) or 'compat' (official rules)."),
    ] = "corrected",
    labels: LabelsOption = None,
    tables: TablesOption = None,
    sandbox: Annotated[
        str,
        typer.Option(
            help="Where agent code runs: 'bwrap' (isolated, default) or 'unsafe-local' (no isolation)."
        ),
    ] = "bwrap",
    step_timeout: Annotated[float, typer.Option(help="Wall-time limit of one step, seconds.")] = 120.0,
    sample_timeout: Annotated[
        float, typer.Option(help="Wall-time limit of all steps of a sample, seconds.")
    ] = 1800.0,
    memory_mb: Annotated[int, typer.Option(help="Memory limit of each sandbox process, MB.")] = 4096,
    model: Annotated[
        str | None, typer.Option(help="Model id, or a name from --models-file.", rich_help_panel="Model")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.", rich_help_panel="Model"
        ),
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key.", rich_help_panel="Model")
    ] = None,
    models_file: Annotated[
        Path | None,
        typer.Option(help="TOML file of named models (endpoint, sampling, prices).", rich_help_panel="Model"),
    ] = None,
    temperature: Annotated[float | None, typer.Option(rich_help_panel="Model")] = None,
    top_p: Annotated[float | None, typer.Option(rich_help_panel="Model")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Per reply.", rich_help_panel="Model")] = None,
    seed: Annotated[int | None, typer.Option(rich_help_panel="Model")] = None,
    cache: Annotated[
        str, typer.Option(help="Response cache: on, off or refresh.", rich_help_panel="Model")
    ] = "on",
    cache_path: Annotated[
        Path | None, typer.Option(help="SQLite file of the response cache.", rich_help_panel="Model")
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option(help="Model replies per sample (react: 10, da-agent: 20).", rich_help_panel="Agent"),
    ] = None,
    max_sample_tokens: Annotated[
        int | None, typer.Option(help="Tokens per sample.", rich_help_panel="Agent")
    ] = None,
    max_sample_cost: Annotated[
        float | None, typer.Option(help="USD per sample.", rich_help_panel="Agent")
    ] = None,
    max_sample_seconds: Annotated[
        float | None, typer.Option(help="Agent wall time per sample.", rich_help_panel="Agent")
    ] = None,
    dabench_compat: Annotated[
        bool,
        typer.Option(
            help="react: send only question and constraints, as the official pipeline.",
            rich_help_panel="Agent",
        ),
    ] = False,
    reformat_model: Annotated[
        str | None,
        typer.Option(
            help="react: model of the reformat step (Table 25); same endpoint options.",
            rich_help_panel="Agent",
        ),
    ] = None,
    memory_window: Annotated[
        int, typer.Option(help="da-agent: steps kept in the prompt.", rich_help_panel="Agent")
    ] = 15,
    replay_from: Annotated[
        Path | None, typer.Option(help="replay: the run whose actions to repeat.", rich_help_panel="Agent")
    ] = None,
) -> None:
    """Run an agent on a suite, score every sample, write the run directory and its report."""
    from daharness.agents import AgentOptions, SampleLimits, make_agent
    from daharness.models import resolve_model
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.runs.rundir import RunDir
    from daharness.runs.runner import SandboxSettings, run_suite
    from daharness.sandbox import BACKENDS, UNSAFE_WARNING, Limits
    from daharness.suites import load_suite

    _check_mode(mode)
    if workspace_mode not in ("corrected", "compat"):
        raise UserError(f"--workspace-mode: {workspace_mode!r} is not one of corrected, compat")
    if sandbox not in BACKENDS:
        raise UserError(f"--sandbox: unknown backend {sandbox!r}; choose one of {', '.join(BACKENDS)}")
    if sandbox == "unsafe-local":
        err.print(f"[bold red]{UNSAFE_WARNING}[/]")
    limits = Limits(step_timeout_s=step_timeout, sample_timeout_s=sample_timeout, memory_mb=memory_mb)
    loaded = load_suite(suite, labels=labels, tables=tables)
    _print_warnings(loaded.warnings())
    if cache not in ("on", "off", "refresh"):
        raise UserError(f"--cache: {cache!r} is not one of on, off, refresh")
    endpoint = {"config_file": models_file, "base_url": base_url, "api_key_env": api_key_env}
    sampling = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens, "seed": seed}
    options = AgentOptions(
        model=resolve_model(model, **endpoint, overrides=sampling) if model else None,
        reformat_model=resolve_model(reformat_model, **endpoint, overrides={}) if reformat_model else None,
        cache_mode=cache,
        cache_path=cache_path or _default_cache_path(),
        limits=SampleLimits(max_steps, max_sample_tokens, max_sample_cost, max_sample_seconds),
        dabench_compat=dabench_compat,
        memory_window=memory_window,
        replay_from=replay_from,
    )
    chosen_agent = make_agent(agent, options)
    id_list = [i.strip() for i in ids.split(",") if i.strip()] if ids else None
    try:
        outcome = run_suite(
            loaded, chosen_agent, out_dir, closed_form_mode=mode, workspace_mode=workspace_mode, ids=id_list, limit=limit,
            concurrency=concurrency, sandbox=SandboxSettings(sandbox, limits), console=err,  # type: ignore[arg-type]
        )  # fmt: skip
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: finished samples are saved; run the same command to resume")
        raise typer.Exit(130) from None
    report = write_report(RunDir.open_for_reading(outcome.run_dir))
    print_report(out, report)
    out.print(f"run directory: {outcome.run_dir} (report.html, report.json)")


@app.command()
def score(
    responses: Annotated[
        Path | None, typer.Option(help='Responses JSONL: {"id": ..., "response": "..."} per line.')
    ] = None,
    questions: Annotated[Path | None, typer.Option(help="Official questions JSONL.")] = None,
    labels: LabelsOption = None,
    suite: Annotated[
        str | None, typer.Option(help="A built-in suite instead of --questions/--labels.")
    ] = None,
    mode: ModeOption = "normalized",
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the figures in the official layout.")
    ] = None,
    dacode_tasks: Annotated[
        Path | None, typer.Option(help="DA-Code task JSONL (rescoring DA-Agent outputs).")
    ] = None,
    dacode_eval: Annotated[Path | None, typer.Option(help="DA-Code eval JSONL.")] = None,
    gold: Annotated[Path | None, typer.Option(help="DA-Code gold folder (gold/<id>/).")] = None,
    outputs: Annotated[
        Path | None, typer.Option(help="DA-Agent output folder (<id>/dabench/result.json).")
    ] = None,
    workspace_mode: Annotated[
        str, typer.Option(help="DA-Code scoring: 'corrected' or 'compat'.")
    ] = "corrected",
) -> None:
    """Rescore existing outputs: closed-form responses (InfiAgent-DABench layout), or DA-Agent output folders."""
    if dacode_eval is not None:
        _score_dacode(dacode_tasks, dacode_eval, gold, outputs, workspace_mode, json_path)
        return
    if responses is None:
        raise UserError("--responses is required (or --dacode-eval with --dacode-tasks, --gold, --outputs)")
    from daharness.report.build import official_analysis, write_json
    from daharness.report.terminal import print_figures
    from daharness.rescore import rescore_dabench

    _check_mode(mode)
    figures, warnings = rescore_dabench(responses, questions=questions, labels=labels, suite=suite, mode=mode)
    _print_warnings(warnings)
    print_figures(out, figures, f"{responses.name} · {mode}")
    if json_path is not None:
        write_json(json_path, official_analysis(figures))
        out.print(f"wrote {json_path}")


def _score_dacode(
    tasks: Path | None,
    evals: Path,
    gold: Path | None,
    outputs: Path | None,
    mode: str,
    json_path: Path | None,
) -> None:
    from rich.table import Table

    from daharness.report.build import write_json
    from daharness.rescore import rescore_dacode

    if tasks is None or gold is None or outputs is None:
        raise UserError("--dacode-eval needs --dacode-tasks, --gold and --outputs too")
    if mode not in ("corrected", "compat"):
        raise UserError(f"--workspace-mode: {mode!r} is not one of corrected, compat")
    figures, warnings = rescore_dacode(
        tasks, evals, gold_dir=gold, outputs_dir=outputs, source_dir=None, mode=mode
    )
    _print_warnings(warnings)
    table = Table(title=f"DA-Code outputs · {mode}", title_justify="left")
    table.add_column("task")
    table.add_column("score", justify="right")
    for task_id, value in figures["scores"].items():
        table.add_row(
            task_id, f"{value:.4f}" + (" (no output)" if task_id in figures["missing_outputs"] else "")
        )
    out.print(table)
    for label, key in (("by type", "by_type"), ("by hardness", "by_hardness")):
        out.print(f"{label}: " + ", ".join(f"{k} {v:.4f}" for k, v in figures[key].items()))
    out.print(f"average {figures['average']:.4f} over {len(figures['scores'])} tasks")
    if figures.get("official_average_without_missing") is not None:
        out.print(
            f"the official tool drops tasks without output: its average would be {figures['official_average_without_missing']:.4f}"
        )
    if json_path is not None:
        write_json(json_path, figures)
        out.print(f"wrote {json_path}")


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="A run directory.")]) -> None:
    """Recompute report.json and report.html for a run directory and print the figures."""
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.runs.rundir import RunDir

    result = write_report(RunDir.open_for_reading(run_dir))
    print_report(out, result)
    out.print(f"wrote {run_dir / 'report.json'} and {run_dir / 'report.html'}")


@app.command()
def validate(
    suite: SuiteOption = "workspace",
    workspace_mode: Annotated[str, typer.Option(help="'corrected' (default) or 'compat'.")] = "corrected",
    ids: Annotated[str | None, typer.Option(help="Comma-separated task ids to check.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", help="Tasks checked at once.")] = 2,
) -> None:
    """Check every task: its reference solution scores 1 and damaged outputs score below (exit 1 if not)."""
    from concurrent.futures import ThreadPoolExecutor

    from rich.table import Table

    from daharness.runs.runner import select_tasks
    from daharness.sandbox import check_backend
    from daharness.suites import load_suite
    from daharness.validate import validate_task

    check_backend("bwrap")
    loaded = load_suite(suite)
    tasks = select_tasks(loaded.tasks, ids=[i.strip() for i in ids.split(",")] if ids else None, limit=None)
    with ThreadPoolExecutor(max_workers=max(concurrency, 1)) as pool:
        results = list(pool.map(lambda task: validate_task(task, workspace_mode=workspace_mode), tasks))
    table = Table(title=f"{loaded.name}: validation ({workspace_mode})", title_justify="left")
    for column in ("task", "reference", "mutations scored below", "problems"):
        table.add_column(column)
    for result in results:
        below = sum(value < (result.reference_score or 0) for value in result.mutations.values())
        reference = "—" if result.reference_score is None else f"{result.reference_score:.3f}"
        verdict = "[green]ok[/]" if result.ok else "[red]" + "; ".join(result.problems) + "[/]"
        table.add_row(result.task_id, reference, f"{below}/{len(result.mutations)}", verdict)
    out.print(table)
    failed = [r.task_id for r in results if not r.ok]
    out.print(
        f"{len(results) - len(failed)} of {len(results)} tasks pass"
        + (f"; failing: {', '.join(failed)}" if failed else "")
    )
    if failed:
        raise typer.Exit(1)


@app.command()
def schema() -> None:
    """Print the JSON schema of the Task model."""
    import json

    from daharness.tasks.model import task_json_schema

    sys.stdout.write(json.dumps(task_json_schema(), indent=2) + "\n")


@app.command()
def agents() -> None:
    """List the available agents."""
    from daharness.agents import AGENTS

    for name, description in AGENTS.items():
        out.print(f"{name}: {description}")


@suites_app.command("list")
def suites_list() -> None:
    """List the built-in suites."""
    from daharness.suites import builtin_suites, load_suite

    for name in builtin_suites():
        loaded = load_suite(name)
        out.print(f"{name}: {len(loaded.tasks)} tasks — {loaded.description}")


@suites_app.command("check")
def suites_check(
    suite: Annotated[str, typer.Argument(help="Built-in name or dabench:QUESTIONS.jsonl.")] = "closed-form",
    labels: LabelsOption = None,
    tables: TablesOption = None,
) -> None:
    """Load a suite and list every task whose data has defects (exit 1 if any)."""
    from daharness.suites import load_suite

    loaded = load_suite(suite, labels=labels, tables=tables)
    flagged = [task for task in loaded.tasks if task.warnings]
    for task in flagged:
        for warning in task.warnings:
            out.print(f"[yellow]{escape(warning)}[/]")
    out.print(f"{loaded.name}: {len(loaded.tasks)} tasks, {len(flagged)} with defects")
    if flagged:
        raise typer.Exit(1)


def _default_cache_path() -> Path:
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "daharness" / "responses.sqlite"


def _print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        err.print(f"[yellow]warning[/]: {escape(warning)}")


def main() -> None:
    debug = "--debug" in sys.argv[1:]
    if debug:
        sys.argv.remove("--debug")
    try:
        app()
    except UserError as exc:
        if debug:
            traceback.print_exc()
        err.print(f"[red]error[/]: {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
