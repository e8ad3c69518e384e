"""The `daharness` command line: it parses options and delegates; the work is done elsewhere."""

from __future__ import annotations

import sys
import traceback
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from daharness.core.errors import UserError

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
_debug = {"on": False}


class ClosedFormMode(StrEnum):
    normalized = "normalized"
    strict = "strict"


class WorkspaceMode(StrEnum):
    corrected = "corrected"
    compat = "compat"


class InteractiveMode(StrEnum):
    corrected = "corrected"
    official = "official"


class InstructionKind(StrEnum):
    abstract = "abstract"
    verbose = "verbose"


class CacheMode(StrEnum):
    on = "on"
    off = "off"
    refresh = "refresh"


def _set_debug(value: bool) -> None:
    if value:
        _debug["on"] = True


DebugOption = Annotated[
    bool,
    typer.Option(
        "--debug",
        help="Show a Python traceback with an error.",
        callback=_set_debug,
        is_eager=True,
        expose_value=False,
    ),
]
SuiteOption = Annotated[
    str,
    typer.Option("--suite", "-s", help="Built-in suite name, or FORMAT:PATH (dabench:QUESTIONS.jsonl, ...)."),
]
LabelsOption = Annotated[Path | None, typer.Option(help="Labels JSONL for a dabench: suite.")]
TablesOption = Annotated[Path | None, typer.Option(help="Folder of CSV tables for a dabench: suite.")]
ModeOption = Annotated[
    ClosedFormMode,
    typer.Option("--mode", help="Closed-form scoring: 'normalized' or 'strict' (official rule)."),
]
WorkspaceModeOption = Annotated[
    WorkspaceMode, typer.Option(help="Workspace (DA-Code) scoring: 'corrected' or 'compat' (official rules).")
]
InteractiveModeOption = Annotated[
    InteractiveMode,
    typer.Option(help="Interactive (Tapilot-Crossing) scoring: 'corrected' or 'official' (released rules)."),
]
ScoringSandboxOption = Annotated[
    str,
    typer.Option(
        "--sandbox",
        help="Where the agents' files are read while scoring: 'bwrap' (a confined worker, default) or "
        "'unsafe-local' (unconfined, for files you trust).",
    ),
]
InstructionOption = Annotated[
    InstructionKind | None,
    typer.Option(help="spider2v: 'verbose' gives each task its step-by-step tutorial (default: as written)."),
]
RagOption = Annotated[
    bool, typer.Option("--rag", help="spider2v: add each task's retrieved documentation to its instruction.")
]


@app.callback()
def _main_options(debug: DebugOption = False) -> None:
    """Run, score and compare data-analysis agents."""


def _scoring(
    mode: ClosedFormMode, workspace_mode: WorkspaceMode, interactive_mode: InteractiveMode | None = None
) -> Any:
    """The run's modes; the interactive group only when it applies (so runs made before it still resume)."""
    from daharness.core.runlog import ScoringSettings

    modes = {"closed_form": mode.value, "workspace": workspace_mode.value}
    if interactive_mode is not None:
        modes["interactive"] = interactive_mode.value
    return ScoringSettings(modes=modes)


def _interactive(tasks: Any, mode: InteractiveMode) -> InteractiveMode | None:
    from daharness.core.registry import task_mode_groups

    return mode if "interactive" in task_mode_groups(tasks) else None


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
    limit: Annotated[int | None, typer.Option(min=1, help="Run only the first N selected tasks.")] = None,
    ids: Annotated[str | None, typer.Option(help="Comma-separated task ids to run.")] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-j",
            min=1,
            help="Samples run at once (default 1; --backend ray: the cluster's CPUs / --ray-num-cpus).",
        ),
    ] = None,
    mode: ModeOption = ClosedFormMode.normalized,
    workspace_mode: WorkspaceModeOption = WorkspaceMode.corrected,
    interactive_mode: InteractiveModeOption = InteractiveMode.corrected,
    labels: LabelsOption = None,
    tables: TablesOption = None,
    sandbox: Annotated[
        str,
        typer.Option(
            help="Where agent code runs: 'bwrap' (isolated, default) or 'unsafe-local' (no isolation)."
        ),
    ] = "bwrap",
    step_timeout: Annotated[
        float, typer.Option(min=0.1, help="Wall-time limit of one step, seconds.")
    ] = 120.0,
    sample_timeout: Annotated[
        float, typer.Option(min=1.0, help="Wall-time limit of all steps of a sample, seconds.")
    ] = 1800.0,
    memory_mb: Annotated[
        int,
        typer.Option(
            min=512,
            help="Memory of each sample's sandbox (tmpfs included) and of each of its processes, MB "
            "(Python with pandas needs about 512).",
        ),
    ] = 4096,
    cpus: Annotated[
        float | None,
        typer.Option(min=0.1, help="CPUs each sandbox may use at most (default: an equal share, no cap)."),
    ] = None,
    workspace_mb: Annotated[
        int, typer.Option(min=1, help="MB the agent may add to its workspace (sparse files count in full).")
    ] = 2048,
    workspace_files: Annotated[
        int, typer.Option(min=1, help="Files and folders the agent may add to its workspace.")
    ] = 10_000,
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
    temperature: Annotated[float | None, typer.Option(min=0, max=2, rich_help_panel="Model")] = None,
    top_p: Annotated[float | None, typer.Option(min=0, max=1, rich_help_panel="Model")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Per reply.", rich_help_panel="Model")] = None,
    seed: Annotated[int | None, typer.Option(rich_help_panel="Model")] = None,
    cache: Annotated[
        CacheMode, typer.Option(help="Response cache: on, off or refresh.", rich_help_panel="Model")
    ] = CacheMode.on,
    cache_path: Annotated[
        Path | None, typer.Option(help="SQLite file of the response cache.", rich_help_panel="Model")
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option(
            min=1, help="Model replies per sample (react: 10, da-agent: 20).", rich_help_panel="Agent"
        ),
    ] = None,
    max_sample_tokens: Annotated[
        int | None, typer.Option(min=1, help="Tokens per sample.", rich_help_panel="Agent")
    ] = None,
    max_sample_cost: Annotated[
        float | None, typer.Option(min=0, help="USD per sample.", rich_help_panel="Agent")
    ] = None,
    max_sample_seconds: Annotated[
        float | None, typer.Option(min=0, help="Agent wall time per sample.", rich_help_panel="Agent")
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
        int, typer.Option(min=1, help="da-agent: steps kept in the prompt.", rich_help_panel="Agent")
    ] = 15,
    replay_from: Annotated[
        Path | None, typer.Option(help="replay: the run whose actions to repeat.", rich_help_panel="Agent")
    ] = None,
    simulator_model: Annotated[
        str | None,
        typer.Option(
            help="base/cot/react-mc/air: model of the user simulator that answers clarifying questions (default: "
            "the task's scripted answer); same endpoint options.",
            rich_help_panel="Agent",
        ),
    ] = None,
    clarify: Annotated[
        bool,
        typer.Option(
            help="base/cot/react-mc/air: the agent may ask the user one question before each code answer.",
            rich_help_panel="Agent",
        ),
    ] = False,
    instruction: InstructionOption = None,
    rag: RagOption = False,
    backend: Annotated[
        str,
        typer.Option(
            help="Where samples run: 'local' (threads of this process) or 'ray' (tasks on a Ray cluster).",
            rich_help_panel="Scale-out",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster to join, e.g. HEAD_IP:6379 or 'auto'; default: start Ray on this machine.",
            rich_help_panel="Scale-out",
        ),
    ] = None,
    ray_num_cpus: Annotated[
        float, typer.Option(min=0.01, help="CPUs Ray reserves for each sample.", rich_help_panel="Scale-out")
    ] = 1.0,
    ray_memory_mb: Annotated[
        int | None,
        typer.Option(min=1, help="Memory Ray reserves for each sample, MB.", rich_help_panel="Scale-out"),
    ] = None,
    ray_shared_files: Annotated[
        bool,
        typer.Option(
            help="Every node reads task files at their paths (shared filesystem) instead of receiving them.",
            rich_help_panel="Scale-out",
        ),
    ] = False,
    debug: DebugOption = False,
) -> None:
    """Run an agent on a suite, score every sample, write the run directory and its report."""
    import functools

    from daharness.agents import AgentOptions, SampleLimits, make_agent
    from daharness.core.limits import Limits
    from daharness.models import resolve_model
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.runs.executors import ExecutorSettings, executor_names
    from daharness.runs.pipeline import SandboxSettings
    from daharness.runs.rundir import RunDir
    from daharness.runs.runner import run_suite
    from daharness.sandbox import UNSAFE_BACKEND, UNSAFE_WARNING, check_backend
    from daharness.suites import load_suite

    check_backend(sandbox)
    if sandbox != UNSAFE_BACKEND:  # agents' files are scored in a bwrap worker, whatever runs the agent
        check_backend("bwrap")
    if backend not in executor_names():
        raise UserError(f"--backend: unknown executor {backend!r}; known: {', '.join(executor_names())}")
    if sandbox == UNSAFE_BACKEND:
        err.print(f"[bold red]{UNSAFE_WARNING}[/]")
    limits = Limits(
        step_timeout_s=step_timeout, sample_timeout_s=sample_timeout, memory_mb=memory_mb, cpus=cpus,
        workspace_mb=workspace_mb, workspace_files=workspace_files,
    )  # fmt: skip
    loaded = load_suite(suite, labels=labels, tables=tables, **_format_options(instruction, rag))
    _print_warnings(loaded.warnings())
    if loaded.unsupported:
        err.print(
            f"[yellow]note[/]: {len(loaded.unsupported)} tasks cannot run here and are left out "
            f"(`daharness suites check {escape(suite)}` lists why)"
        )
    endpoint = {"config_file": models_file, "base_url": base_url, "api_key_env": api_key_env}
    sampling = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens, "seed": seed}
    options = AgentOptions(
        model=resolve_model(model, **endpoint, overrides=sampling) if model else None,
        reformat_model=resolve_model(reformat_model, **endpoint, overrides={}) if reformat_model else None,
        cache_mode=cache.value,
        cache_path=cache_path or _default_cache_path(),
        limits=SampleLimits(max_steps, max_sample_tokens, max_sample_cost, max_sample_seconds),
        dabench_compat=dabench_compat,
        memory_window=memory_window,
        replay_from=replay_from,
        simulator_model=resolve_model(simulator_model, **endpoint, overrides={}) if simulator_model else None,
        clarify=clarify,
    )
    chosen_agent = make_agent(agent, options)
    try:
        outcome = run_suite(
            loaded, chosen_agent, out_dir, ids=_id_list(ids), limit=limit,
            scoring=_scoring(mode, workspace_mode, _interactive(loaded.tasks, interactive_mode)),
            concurrency=concurrency,
            sandbox=SandboxSettings(sandbox, limits), console=err,
            executor=ExecutorSettings(backend, ray_address, ray_num_cpus, ray_memory_mb, ray_shared_files),
            agent_factory=functools.partial(make_agent, agent, options),
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
    mode: ModeOption = ClosedFormMode.normalized,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the figures as JSON.")] = None,
    dacode_tasks: Annotated[
        Path | None, typer.Option(help="DA-Code task JSONL (rescoring DA-Agent outputs).")
    ] = None,
    dacode_eval: Annotated[Path | None, typer.Option(help="DA-Code eval JSONL.")] = None,
    gold: Annotated[Path | None, typer.Option(help="DA-Code gold folder (gold/<id>/).")] = None,
    outputs: Annotated[
        Path | None, typer.Option(help="DA-Agent output folder (<id>/dabench/result.json).")
    ] = None,
    workspace_mode: WorkspaceModeOption = WorkspaceMode.corrected,
    sandbox: ScoringSandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Rescore existing outputs: closed-form responses (InfiAgent-DABench layout), or DA-Agent output folders."""
    from daharness.report.build import write_json

    if dacode_eval is not None:
        from daharness.report.terminal import print_rescored_outputs
        from daharness.rescore import rescore_dacode

        if dacode_tasks is None or gold is None or outputs is None:
            raise UserError("--dacode-eval needs --dacode-tasks, --gold and --outputs too")
        figures, warnings = rescore_dacode(
            dacode_tasks,
            dacode_eval,
            gold_dir=gold,
            outputs_dir=outputs,
            source_dir=None,
            mode=workspace_mode.value,
            confined=_scoring_confined(sandbox),
        )
        _print_warnings(warnings)
        print_rescored_outputs(out, figures, f"DA-Code outputs · {workspace_mode.value}")
    else:
        from daharness.families.closed_form import official_analysis, print_dabench
        from daharness.rescore import rescore_dabench

        if responses is None:
            raise UserError(
                "--responses is required (or --dacode-eval with --dacode-tasks, --gold, --outputs)"
            )
        figures, warnings = rescore_dabench(
            responses, questions=questions, labels=labels, suite=suite, mode=mode.value
        )
        _print_warnings(warnings)
        print_dabench(out, figures, f"{responses.name} · {mode.value}")
        figures = official_analysis(figures)
    if json_path is not None:
        write_json(json_path, figures)
        out.print(f"wrote {json_path}")


@app.command()
def rescore(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="The new run directory.")],
    mode: ModeOption = ClosedFormMode.normalized,
    workspace_mode: WorkspaceModeOption = WorkspaceMode.corrected,
    interactive_mode: InteractiveModeOption = InteractiveMode.corrected,
    sandbox: ScoringSandboxOption = "bwrap",
    debug: DebugOption = False,
) -> None:
    """Score a finished run again from its saved answers and artifacts, into a new run directory."""
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.rescore import rescore_run

    chosen = interactive_mode if interactive_mode != InteractiveMode.corrected else None
    confined = _scoring_confined(sandbox)
    run = rescore_run(run_dir, out_dir, _scoring(mode, workspace_mode, chosen), confined=confined)
    print_report(out, write_report(run))
    out.print(f"run directory: {out_dir} (report.html, report.json)")


def _scoring_confined(sandbox: str) -> bool:
    """Whether `--sandbox` confines the scoring of agents' files (refused when bwrap cannot work)."""
    from daharness.sandbox import UNSAFE_BACKEND, check_backend

    if sandbox not in ("bwrap", UNSAFE_BACKEND):
        raise UserError(f"--sandbox: choose 'bwrap' or '{UNSAFE_BACKEND}', not {sandbox!r}")
    check_backend(sandbox)
    if sandbox == UNSAFE_BACKEND:
        err.print("[bold red]warning: --sandbox unsafe-local reads the agents' files unconfined[/]")
    return sandbox == "bwrap"


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")], debug: DebugOption = False
) -> None:
    """Recompute report.json and report.html for a run directory and print the figures."""
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.runs.rundir import RunDir

    print_report(out, write_report(RunDir.open_for_reading(run_dir)))
    out.print(f"wrote {run_dir / 'report.json'} and {run_dir / 'report.html'}")


@app.command()
def compare(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Two or more run directories; the first is the baseline.")
    ],
    html_path: Annotated[Path | None, typer.Option("--html", help="Write the comparison as HTML.")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the figures as JSON.")] = None,
    debug: DebugOption = False,
) -> None:
    """Compare runs: figures with 95% intervals, paired differences and tests by group, flipped samples."""
    from daharness.report.build import write_json, write_text
    from daharness.report.compare import compare_runs
    from daharness.report.compare_render import print_comparison, render_comparison_html

    if len(run_dirs) < 2:
        raise UserError("compare needs at least two run directories")
    figures = compare_runs(run_dirs)
    print_comparison(out, figures)
    if html_path is not None:
        write_text(html_path, render_comparison_html(figures))
        out.print(f"wrote {html_path}")
    if json_path is not None:
        write_json(json_path, figures)
        out.print(f"wrote {json_path}")


@app.command()
def view(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories.")],
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = 8765,
    export_dir: Annotated[
        Path | None, typer.Option("--export", help="Write static HTML into this folder instead of serving.")
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Look at runs in a browser: figures, a filterable sample table, each sample's whole trajectory."""
    from daharness.view.site import ViewSite, make_server

    site = ViewSite(run_dirs)
    if export_dir is not None:
        pages = site.export(export_dir)
        out.print(f"wrote {pages} pages to {export_dir} (open {export_dir / 'index.html'})")
        return
    server = make_server(site, port)
    out.print(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


class ExportFormat(StrEnum):
    inspect = "inspect"


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    out_path: Annotated[Path, typer.Argument(help="The file (.eval or .json) or folder to write.")],
    format: Annotated[
        ExportFormat, typer.Option("--format", help="inspect: an Inspect AI eval log.")
    ] = ExportFormat.inspect,
    debug: DebugOption = False,
) -> None:
    """Write a run in another tool's format (Inspect AI: `inspect view` reads it)."""
    from daharness.export.inspect_log import export_inspect

    written = export_inspect(run_dir, out_path)
    out.print(f"wrote {written}")


@app.command()
def validate(
    suite: SuiteOption = "workspace",
    mode: ModeOption = ClosedFormMode.normalized,
    workspace_mode: WorkspaceModeOption = WorkspaceMode.corrected,
    interactive_mode: InteractiveModeOption = InteractiveMode.corrected,
    ids: Annotated[str | None, typer.Option(help="Comma-separated task ids to check.")] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", min=1, help="Tasks checked at once.")
    ] = 2,
    json_path: Annotated[
        Path | None,
        typer.Option(
            "--json", help="tasks checked by their states (workflow): write each one's result as JSON."
        ),
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Check every task: its reference solution scores 1 and damaged outputs score below (exit 1 if not);
    workflow tasks: the untouched state scores 0, their tools alone on the setup's files below 1, and a single
    gold file 1."""
    from concurrent.futures import ThreadPoolExecutor

    from daharness.core.registry import task_mode_groups
    from daharness.report.terminal import print_validation
    from daharness.runs.pipeline import family_hooks
    from daharness.runs.runner import select_tasks
    from daharness.sandbox import check_backend
    from daharness.suites import load_suite
    from daharness.validate import validate_task

    check_backend("bwrap")
    loaded = load_suite(suite)
    tasks = select_tasks(loaded.tasks, ids=_id_list(ids), limit=None)
    if not tasks:  # e.g. an official suite whose every task needs what this machine cannot give
        why = (
            f" ({len(loaded.unsupported)} unsupported: `daharness suites check {suite}` lists why)"
            if loaded.unsupported
            else ""
        )
        raise UserError(f"{loaded.name}: no task to check{why}")
    scoring = _scoring(mode, workspace_mode, _interactive(tasks, interactive_mode))
    by_states = [task for task in tasks if family_hooks(task).validation == "states"]
    by_damage = [task for task in tasks if family_hooks(task).validation != "states"]
    failed = False
    if by_damage:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            results = list(pool.map(lambda task: validate_task(task, scoring=scoring), by_damage))
        used = task_mode_groups(by_damage)
        shown = ", ".join(f"{group} {mode}" for group, mode in sorted(scoring.modes.items()) if group in used)
        print_validation(out, loaded.name, shown or "no scoring modes", results)
        failed = any(not result.ok for result in results)
    if by_states:
        failed = not _validate_states(loaded, by_states, scoring, concurrency, json_path) or failed
    if failed:
        raise typer.Exit(1)


def _validate_states(
    loaded: Any, tasks: list[Any], scoring: Any, concurrency: int, json_path: Path | None
) -> bool:
    """Tasks checked by their states (workflow families): untouched 0, setup only below 1, gold 1. True
    when all pass."""
    from concurrent.futures import ThreadPoolExecutor

    from daharness.report.build import write_json
    from daharness.report.terminal import print_workflow_validation
    from daharness.validate_workflow import WorkflowValidation, validate_workflow_task

    unsupported = [
        WorkflowValidation(i, supported=False, reason=why) for i, why in loaded.unsupported.items()
    ]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        checked = list(pool.map(lambda task: validate_workflow_task(task, scoring=scoring), tasks))
    results = sorted(unsupported + checked, key=lambda result: result.task_id)
    print_workflow_validation(out, loaded.name, results)
    if json_path is not None:
        write_json(json_path, {result.task_id: result.as_json() for result in results})
        out.print(f"wrote {json_path}")
    return all(result.ok for result in results)


class SchemaName(StrEnum):
    task = "task"
    record = "record"
    run = "run"
    trajectory = "trajectory"


@app.command()
def schema(
    name: Annotated[
        SchemaName, typer.Argument(help="task (default), record, run or trajectory.")
    ] = SchemaName.task,
    debug: DebugOption = False,
) -> None:
    """Print a JSON schema: the Task, a samples.jsonl record, run.json, or a trajectory file."""
    import json

    from daharness.core import RunSpec, SampleRecord, Task, TrajectoryFile

    model = {"task": Task, "record": SampleRecord, "run": RunSpec, "trajectory": TrajectoryFile}[name.value]
    sys.stdout.write(json.dumps(model.model_json_schema(), indent=2) + "\n")


@app.command()
def doctor(
    sandbox: Annotated[str, typer.Option(help="The sandbox backend to examine.")] = "bwrap",
    json_output: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
    debug: DebugOption = False,
) -> None:
    """Say which isolation and limits this machine gives agent code, and whether samples can have a
    desktop (exit 1 if the sandbox cannot run)."""
    import json

    from daharness.core.limits import Limits
    from daharness.core.registry import backends
    from daharness.report.terminal import print_isolation
    from daharness.sandbox import cgroups, describe_desktop, describe_isolation
    from daharness.sandbox.scratch import reap_stale

    if sandbox not in backends:
        raise UserError(f"--sandbox: no backend {sandbox!r} (known: {', '.join(backends)})")
    reaped = reap_stale()
    cgroups.remove_stale()
    report = describe_isolation(sandbox, Limits())
    report["desktop"] = describe_desktop(sandbox)
    report["stale_folders_removed"] = [str(path) for path in reaped]
    if json_output:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        print_isolation(out, report)
    if report.get("works") is False:
        raise typer.Exit(1)


@app.command()
def agents(debug: DebugOption = False) -> None:
    """List the available agents."""
    from daharness.agents import agent_summaries

    for name, description in agent_summaries().items():
        out.print(f"{name}: {escape(description)}")


@suites_app.command("list")
def suites_list(debug: DebugOption = False) -> None:
    """List the built-in suites and the formats that name suites by path."""
    from daharness.core.registry import suite_formats
    from daharness.suites import builtin_suites, load_suite

    for name in builtin_suites():
        loaded = load_suite(name)
        out.print(f"{name}: {len(loaded.tasks)} tasks — {loaded.description}")
    for name, entry in suite_formats.items():
        if entry.prefix:
            out.print(f"{entry.prefix}PATH: {escape(entry.summary)} ({name})")


@suites_app.command("check")
def suites_check(
    suite: Annotated[str, typer.Argument(help="Built-in name or FORMAT:PATH.")] = "closed-form",
    labels: LabelsOption = None,
    tables: TablesOption = None,
    debug: DebugOption = False,
) -> None:
    """Load a suite and list every task whose data has defects (exit 1 if any)."""
    from daharness.report.terminal import print_unsupported
    from daharness.suites import load_suite

    loaded = load_suite(suite, labels=labels, tables=tables)
    flagged = [task for task in loaded.tasks if task.warnings]
    for task in flagged:
        for warning in task.warnings:
            out.print(f"[yellow]{escape(warning)}[/]")
    if loaded.unsupported:
        print_unsupported(out, loaded.name, loaded.unsupported)
        out.print(f"{loaded.name}: {len(loaded.tasks)} supported, {len(loaded.unsupported)} unsupported")
    out.print(f"{loaded.name}: {len(loaded.tasks)} tasks, {len(flagged)} with defects")
    if flagged:
        raise typer.Exit(1)


def _format_options(instruction: InstructionKind | None, rag: bool) -> dict[str, Any]:
    """Options of the spider2v format (None ones are left out, so other formats never see them)."""
    return {"instruction": instruction.value if instruction else None, "rag": True if rag else None}


def _id_list(ids: str | None) -> list[str] | None:
    # `--ids ""` or `--ids ,` is an empty list, which select_tasks refuses (never "every task")
    return None if ids is None else [i.strip() for i in ids.split(",") if i.strip()]


def _default_cache_path() -> Path:
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "daharness" / "responses.sqlite"


def _print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        err.print(f"[yellow]warning[/]: {escape(warning)}")


# typer's base of usage errors (from click, which newer typers vendor): found through a public subclass
_UsageProblem = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    try:
        code = app(standalone_mode=False)
    except UserError as exc:
        if _debug["on"]:
            traceback.print_exc()
        _error_line(str(exc))
        sys.exit(2)
    except _UsageProblem as exc:  # a bad option or value: one line, like ours
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()
        else:
            _error_line(exc.format_message())
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _error_line(message: str) -> None:
    err.print(f"[red]error[/]: {escape(' '.join(message.split()))}", highlight=False, soft_wrap=True)
