"""`daharness run`: an agent on a suite, every sample scored, into a run directory and its report."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any

import typer

from daharness.cli.app import app
from daharness.cli.families import FamilyChoices, takes_family_options
from daharness.cli.options import (
    INFRASTRUCTURE_EXIT,
    CacheMode,
    DebugOption,
    SuiteOption,
    default_cache_path,
    error_line,
    id_list,
    print_warnings,
)
from daharness.core.errors import UserError
from daharness.runs.error_budget import DEFAULT_MAX_ERRORS

MODEL, AGENT, SCALE_OUT = "Model", "Agent", "Scale-out"  # panels of `run --help`


def _option(help: str | None, panel: str | None = None, **limits: Any) -> Any:
    return typer.Option(help=help, rich_help_panel=panel, **limits)


AgentOption = Annotated[str, typer.Option("--agent", "-a", help="Agent name (see `daharness agents`).")]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Run directory; re-running with it resumes. Default: the newest unfinished run of the same "
        "suite, agent and mode under runs/, else a new runs/<timestamp>-<suite>-<agent>/.",
    ),
]
LimitOption = Annotated[int | None, _option("Run only the first N selected tasks.", min=1)]
IdsOption = Annotated[str | None, _option("Comma-separated task ids to run.")]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "-j",
        min=1,
        help="Samples run at once (default 1; --backend ray: the cluster's CPUs / --ray-num-cpus).",
    ),
]
EpochsOption = Annotated[
    int,
    _option("Run each task N times: the report gives each task's mean score, pass@k and pass^k.", min=1),
]
TagOption = Annotated[
    list[str] | None,
    typer.Option("--tag", help="A label of the run (repeatable), shown in reports and compare."),
]
MetaOption = Annotated[
    list[str] | None,
    typer.Option("--meta", help="A note on the run as KEY=VALUE (repeatable), shown in reports and compare."),
]
MaxErrors = Annotated[
    str,
    typer.Option(
        "--max-errors",
        help="Infrastructure errors (endpoint down, 500s, malformed replies, harness failures) the run may end "
        "with and still exit 0: a number of samples (3), a percentage (20%) or a fraction (0.2); more exit "
        "with code 3.",
    ),
]
StopAfterUnreachable = Annotated[
    int,
    typer.Option(
        "--stop-after-unreachable",
        min=0,
        help="Stop the run (exit 3, resumable) after this many samples in a row could not connect to their "
        "model endpoint; 0: never.",
    ),
]
# ---- the sandbox and its limits
SandboxOption = Annotated[
    str, _option("Where agent code runs: 'bwrap' (isolated, default) or 'unsafe-local' (no isolation).")
]
StepTimeout = Annotated[float, _option("Wall-time limit of one step, seconds.", min=0.1)]
SampleTimeout = Annotated[float, _option("Wall-time limit of all steps of a sample, seconds.", min=1.0)]
MemoryOption = Annotated[
    int,
    _option(
        "Memory of each sample's sandbox (tmpfs included) and of each of its processes, MB "
        "(Python with pandas needs about 512).",
        min=512,
    ),
]
CpusOption = Annotated[
    float | None, _option("CPUs each sandbox may use at most (default: an equal share, no cap).", min=0.1)
]
WorkspaceMb = Annotated[
    int, _option("MB the agent may add to its workspace (sparse files count in full).", min=1)
]
WorkspaceFiles = Annotated[int, _option("Files and folders the agent may add to its workspace.", min=1)]
# ---- the model
ModelOption = Annotated[str | None, _option("Model id, or a name from --models-file.", MODEL)]
BaseUrl = Annotated[str | None, _option("OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.", MODEL)]
ApiKeyEnv = Annotated[str | None, _option("Environment variable holding the API key.", MODEL)]
ModelsFile = Annotated[Path | None, _option("TOML file of named models (endpoint, sampling, prices).", MODEL)]
Temperature = Annotated[
    float | None, _option("Sampling temperature (the endpoint's default if unset).", MODEL, min=0, max=2)
]
TopP = Annotated[
    float | None, _option("Nucleus sampling (the endpoint's default if unset).", MODEL, min=0, max=1)
]
MaxTokens = Annotated[int | None, _option("Per reply.", MODEL, min=1)]
Seed = Annotated[
    int | None,
    _option("Sampling seed sent with each request, for endpoints that honour it (OpenAI, vLLM).", MODEL),
]
CacheOption = Annotated[CacheMode, _option("Response cache: on, off or refresh.", MODEL)]
CachePath = Annotated[Path | None, _option("SQLite file of the response cache.", MODEL)]
# ---- the agent
MaxSteps = Annotated[int | None, _option("Model replies per sample (react: 10, da-agent: 20).", AGENT, min=1)]
MaxSampleTokens = Annotated[int | None, _option("Tokens per sample.", AGENT, min=1)]
MaxSampleCost = Annotated[float | None, _option("USD per sample.", AGENT, min=0)]
MaxSampleSeconds = Annotated[float | None, _option("Agent wall time per sample.", AGENT, min=0)]
DabenchCompat = Annotated[
    bool, _option("react: send only question and constraints, as the official pipeline.", AGENT)
]
ReformatModel = Annotated[
    str | None, _option("react: model of the reformat step (Table 25); same endpoint options.", AGENT)
]
MemoryWindow = Annotated[int, _option("da-agent: steps kept in the prompt.", AGENT, min=1)]
DesktopFlag = Annotated[
    bool,
    _option(
        "Give every sample a desktop (a screen, a browser, LibreOffice): the GUI steps of workflow tasks then "
        "happen on it (the desktop agent always has one).",
    ),
]
ObservationOption = Annotated[
    str, _option("desktop: screenshot, a11y_tree, screenshot_a11y_tree or som.", AGENT)
]
ActionSpaceOption = Annotated[str, _option("desktop: pyautogui (code) or json (the paper's actions).", AGENT)]
HistoryOption = Annotated[int, _option("desktop: earlier observations kept in the prompt.", AGENT, min=0)]
ReplayFrom = Annotated[Path | None, _option("replay: the run whose actions to repeat.", AGENT)]
SimulatorModel = Annotated[
    str | None,
    _option(
        "base/cot/react-mc/air: model of the user simulator that answers clarifying questions (default: "
        "the task's scripted answer); same endpoint options.",
        AGENT,
    ),
]
Clarify = Annotated[
    bool,
    _option("base/cot/react-mc/air: the agent may ask the user one question before each code answer.", AGENT),
]
# ---- where samples run
BackendOption = Annotated[
    str,
    _option(
        "Where samples run: 'local' (threads of this process) or 'ray' (tasks on a Ray cluster).", SCALE_OUT
    ),
]
RayAddress = Annotated[
    str | None,
    _option(
        "Ray cluster to join, e.g. HEAD_IP:6379 or 'auto'; default: start Ray on this machine.", SCALE_OUT
    ),
]
RayNumCpus = Annotated[float, _option("CPUs Ray reserves for each sample.", SCALE_OUT, min=0.01)]
RayMemory = Annotated[int | None, _option("Memory Ray reserves for each sample, MB.", SCALE_OUT, min=1)]
RaySharedFiles = Annotated[
    bool,
    _option(
        "Every node reads task files at their paths (shared filesystem) instead of receiving them.", SCALE_OUT
    ),
]


@app.command()
@takes_family_options("run", formats="all")
def run(
    suite: SuiteOption,
    agent: AgentOption,
    out_dir: OutOption = None,
    limit: LimitOption = None,
    ids: IdsOption = None,
    concurrency: ConcurrencyOption = None,
    epochs: EpochsOption = 1,
    tag: TagOption = None,
    meta: MetaOption = None,
    max_errors: MaxErrors = DEFAULT_MAX_ERRORS,
    stop_after_unreachable: StopAfterUnreachable = 3,
    families: FamilyChoices | None = None,
    sandbox: SandboxOption = "bwrap",
    step_timeout: StepTimeout = 120.0,
    sample_timeout: SampleTimeout = 1800.0,
    memory_mb: MemoryOption = 4096,
    cpus: CpusOption = None,
    workspace_mb: WorkspaceMb = 2048,
    workspace_files: WorkspaceFiles = 10_000,
    model: ModelOption = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    models_file: ModelsFile = None,
    temperature: Temperature = None,
    top_p: TopP = None,
    max_tokens: MaxTokens = None,
    seed: Seed = None,
    cache: CacheOption = CacheMode.on,
    cache_path: CachePath = None,
    max_steps: MaxSteps = None,
    max_sample_tokens: MaxSampleTokens = None,
    max_sample_cost: MaxSampleCost = None,
    max_sample_seconds: MaxSampleSeconds = None,
    dabench_compat: DabenchCompat = False,
    reformat_model: ReformatModel = None,
    memory_window: MemoryWindow = 15,
    desktop: DesktopFlag = False,
    observation: ObservationOption = "screenshot_a11y_tree",
    action_space: ActionSpaceOption = "pyautogui",
    history: HistoryOption = 3,
    replay_from: ReplayFrom = None,
    simulator_model: SimulatorModel = None,
    clarify: Clarify = False,
    backend: BackendOption = "local",
    ray_address: RayAddress = None,
    ray_num_cpus: RayNumCpus = 1.0,
    ray_memory_mb: RayMemory = None,
    ray_shared_files: RaySharedFiles = False,
    debug: DebugOption = False,
) -> None:
    """Run an agent on a suite, score every sample, write the run directory and its report."""
    from daharness.agents import AgentOptions, SampleLimits, agent_needs_desktop
    from daharness.core.limits import Limits
    from daharness.core.registry import task_mode_groups
    from daharness.runs.error_budget import ErrorBudget
    from daharness.runs.executors import ExecutorSettings
    from daharness.runs.pipeline import SandboxSettings

    assert families is not None
    _check_where_it_runs(sandbox, backend)
    budget = ErrorBudget.parse(max_errors)
    labels = {"tags": tag or [], "metadata": _metadata(meta or [])}
    limits = Limits(
        step_timeout_s=step_timeout, sample_timeout_s=sample_timeout, memory_mb=memory_mb, cpus=cpus,
        workspace_mb=workspace_mb, workspace_files=workspace_files,
    )  # fmt: skip
    if backend == "local":  # the kernel template's numpy and pandas load while the suite does
        from daharness.sandbox import prepare_run

        prepare_run(sandbox, limits)
    loaded = _load(suite, families)
    models = _Models(models_file, base_url, api_key_env)
    options = AgentOptions(
        model=models.resolve(model, temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
        reformat_model=models.resolve(reformat_model),
        cache_mode=cache.value,
        cache_path=cache_path or default_cache_path(),
        limits=SampleLimits(max_steps, max_sample_tokens, max_sample_cost, max_sample_seconds),
        dabench_compat=dabench_compat,
        memory_window=memory_window,
        replay_from=replay_from,
        simulator_model=models.resolve(simulator_model),
        clarify=clarify,
        extra={"observation": observation, "action_space": action_space, "history": history},
    )
    desktop = desktop or agent_needs_desktop(agent)
    _run_and_report(
        loaded, agent, options, out_dir, budget, ids=id_list(ids), limit=limit,
        stop_after_unreachable=stop_after_unreachable, epochs=epochs, labels=labels,
        scoring=families.scoring(task_mode_groups(loaded.tasks)), concurrency=concurrency,
        sandbox=SandboxSettings(sandbox, limits, desktop=desktop),
        executor=ExecutorSettings(backend, ray_address, ray_num_cpus, ray_memory_mb, ray_shared_files),
    )  # fmt: skip


def _check_where_it_runs(sandbox: str, backend: str) -> None:
    from daharness.cli.options import err
    from daharness.runs.executors import executor_names
    from daharness.sandbox import UNSAFE_BACKEND, UNSAFE_WARNING, check_backend

    check_backend(sandbox)
    if sandbox != UNSAFE_BACKEND:  # agents' files are scored in a bwrap worker, whatever runs the agent
        check_backend("bwrap")
    if backend not in executor_names():
        raise UserError(f"--backend: unknown executor {backend!r}; known: {', '.join(executor_names())}")
    if sandbox == UNSAFE_BACKEND:
        err.print(f"[bold red]{UNSAFE_WARNING}[/]")


def _metadata(pairs: list[str]) -> dict[str, str]:
    found = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UserError(f"--meta {pair!r}: give KEY=VALUE, e.g. --meta prompt=v2")
        found[key.strip()] = value.strip()
    return found


def _load(suite: str, families: FamilyChoices) -> Any:
    """The suite with the format options given, its loader's warnings said and its left-out tasks noted."""
    from rich.markup import escape

    from daharness.cli.options import err
    from daharness.suites import load_suite

    loaded = load_suite(suite, **families.format_options())
    print_warnings(loaded.warnings())
    if loaded.unsupported:
        err.print(
            f"[yellow]note[/]: {len(loaded.unsupported)} tasks cannot run here and are left out "
            f"(`daharness suites check {escape(suite)}` lists why)"
        )
    return loaded


class _Models:
    """The models named on the command line, resolved with the same endpoint options."""

    def __init__(self, config_file: Path | None, base_url: str | None, api_key_env: str | None) -> None:
        self.endpoint = {"config_file": config_file, "base_url": base_url, "api_key_env": api_key_env}

    def resolve(self, name: str | None, **sampling: Any) -> Any:
        from daharness.models import resolve_model

        if not name:
            return None
        settings = resolve_model(name, **self.endpoint, overrides=sampling)
        if missing := settings.missing_key():  # before any sample, not after every one's retries
            raise UserError(missing)
        return settings


def _run_and_report(
    loaded: Any, agent: str, options: Any, out_dir: Path | None, budget: Any, **run: Any
) -> None:
    """Run, write and print the report; exit 3 when the run stopped early or ended with more
    infrastructure errors than `budget` allows (2 stays for bad input)."""
    from daharness.agents import make_agent
    from daharness.cli.options import err, out
    from daharness.report.build import write_report
    from daharness.report.terminal import print_report
    from daharness.runs.rundir import RunDir
    from daharness.runs.runner import RunStopped, run_suite

    chosen = make_agent(agent, options)
    try:
        outcome = run_suite(
            loaded,
            chosen,
            out_dir,
            agent_factory=functools.partial(make_agent, agent, options),
            console=err,
            **run,
        )
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: finished samples are saved; run the same command to resume")
        raise typer.Exit(130) from None
    except RunStopped as exc:
        error_line(f"the run stopped: {exc}")
        raise typer.Exit(INFRASTRUCTURE_EXIT) from None
    report = write_report(RunDir.open_for_reading(outcome.run_dir))
    print_report(out, report)
    out.print(f"run directory: {outcome.run_dir} (report.html, report.json)")
    if budget.exceeded(outcome.errors, outcome.selected):
        error_line(
            f"{outcome.errors} of {outcome.selected} samples ended in infrastructure errors, more than "
            f"--max-errors {budget.text} allows (reasons in report.html; the same command retries them)"
        )
        raise typer.Exit(INFRASTRUCTURE_EXIT)
