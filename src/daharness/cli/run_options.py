"""The options of `daharness run`, in bundles (`cli/bundles.py`): which samples and how the run is
labelled, the sandbox and its limits, the model, the agent's per-sample limits, where samples run. The
agents' own options are not here: they come from each agent's options model (`cli/families.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from daharness.cli.bundles import Bundle
from daharness.cli.families import AGENT_PANEL
from daharness.cli.options import CacheMode, default_cache_path
from daharness.runs.error_budget import DEFAULT_MAX_ERRORS

if TYPE_CHECKING:
    from daharness.agents import AgentSettings
    from daharness.core.limits import Limits
    from daharness.runs.executors import ExecutorSettings
    from daharness.runs.selection import TaskRange

MODEL, SCALE_OUT = "Model", "Scale-out"  # panels of `run --help`


def _option(help: str | None, panel: str | None = None, **limits: Any) -> Any:
    return typer.Option(help=help, rich_help_panel=panel, **limits)


@dataclass
class Selection(Bundle):
    """Which tasks, how often, how the run is labelled, and when it stops."""

    limit: Annotated[
        str | None,
        typer.Option(
            help="Run only the first N selected tasks (N), or tasks A to B of them, counted from 1, both "
            "included (A-B, e.g. 10-20).",
            callback=_checked_limit,
        ),
    ] = None
    ids: Annotated[
        str | None, _option("Comma-separated task ids to run (in a run set: each suite runs those it has).")
    ] = None
    sample_shuffle: Annotated[
        int | None,
        _option(
            "Shuffle the selected tasks with this seed before --limit: a random subset (and order) that the "
            "same seed gives again; kept in run.json (a resume keeps it, another seed is another run).",
        ),
    ] = None
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-j",
            min=1,
            help="Samples run at once (default 1; --backend ray: the cluster's CPUs / --ray-num-cpus).",
        ),
    ] = None
    epochs: Annotated[
        int,
        _option("Run each task N times: the report gives each task's mean score, pass@k and pass^k.", min=1),
    ] = 1
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="A label of the run (repeatable), shown in reports and compare."),
    ] = None
    meta: Annotated[
        list[str] | None,
        typer.Option(
            "--meta", help="A note on the run as KEY=VALUE (repeatable), shown in reports and compare."
        ),
    ] = None
    max_errors: Annotated[
        str,
        typer.Option(
            "--max-errors",
            help="Infrastructure errors (endpoint down, 500s, malformed replies, harness failures) the run may "
            "end with and still exit 0: a number of samples (3), a percentage (20%) or a fraction (0.2); more "
            "exit with code 3.",
        ),
    ] = DEFAULT_MAX_ERRORS
    stop_after_unreachable: Annotated[
        int,
        typer.Option(
            "--stop-after-unreachable",
            min=0,
            help="Stop the run (exit 3, resumable) after this many samples in a row could not connect to "
            "their model endpoint; 0: never.",
        ),
    ] = 3

    def labels(self) -> dict[str, Any]:
        return {"tags": self.tag or [], "metadata": _metadata(self.meta or [])}

    def task_range(self) -> TaskRange | None:
        return _task_range(self.limit)


def _task_range(value: str | None) -> TaskRange | None:
    """`--limit` read as the parser reads the other options, so that a bad one is said before anything."""
    from daharness.core.errors import UserError
    from daharness.runs.selection import TaskRange

    try:
        return None if value is None else TaskRange.parse(value)
    except UserError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--limit: ")) from None


def _checked_limit(value: str | None) -> str | None:
    _task_range(value)
    return value


def _metadata(pairs: list[str]) -> dict[str, str]:
    from daharness.core.errors import UserError

    found = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UserError(f"--meta {pair!r}: give KEY=VALUE, e.g. --meta prompt=v2")
        found[key.strip()] = value.strip()
    return found


@dataclass
class SandboxChoice(Bundle):
    """Where agent code runs, and its limits."""

    sandbox: Annotated[
        str, _option("Where agent code runs: 'bwrap' (isolated, default) or 'unsafe-local' (no isolation).")
    ] = "bwrap"
    step_timeout: Annotated[float, _option("Wall-time limit of one step, seconds.", min=0.1)] = 120.0
    sample_timeout: Annotated[
        float, _option("Wall-time limit of all steps of a sample, seconds.", min=1.0)
    ] = 1800.0
    memory_mb: Annotated[
        int,
        _option(
            "Memory of each sample's sandbox (tmpfs included) and of each of its processes, MB "
            "(Python with pandas needs about 512).",
            min=512,
        ),
    ] = 4096
    cpus: Annotated[
        float | None, _option("CPUs each sandbox may use at most (default: an equal share, no cap).", min=0.1)
    ] = None
    workspace_mb: Annotated[
        int, _option("MB the agent may add to its workspace (sparse files count in full).", min=1)
    ] = 2048
    workspace_files: Annotated[
        int, _option("Files and folders the agent may add to its workspace.", min=1)
    ] = 10_000
    desktop: Annotated[
        bool,
        _option(
            "Give every sample a desktop (a screen, a browser, LibreOffice): the GUI steps of workflow tasks "
            "then happen on it (the desktop agent always has one).",
        ),
    ] = False

    def limits(self) -> Limits:
        from daharness.core.limits import Limits

        return Limits(
            step_timeout_s=self.step_timeout, sample_timeout_s=self.sample_timeout, memory_mb=self.memory_mb,
            cpus=self.cpus, workspace_mb=self.workspace_mb, workspace_files=self.workspace_files,
        )  # fmt: skip


@dataclass
class ModelChoice(Bundle):
    """The model, its endpoint and sampling, and the response cache."""

    model: Annotated[
        str | None,
        _option("Model id, or a name from --models-file; several, comma-separated, make a run set.", MODEL),
    ] = None
    base_url: Annotated[
        str | None, _option("OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.", MODEL)
    ] = None
    api_key_env: Annotated[str | None, _option("Environment variable holding the API key.", MODEL)] = None
    models_file: Annotated[
        Path | None, _option("TOML file of named models (endpoint, sampling, prices).", MODEL)
    ] = None
    temperature: Annotated[
        float | None, _option("Sampling temperature (the endpoint's default if unset).", MODEL, min=0, max=2)
    ] = None
    top_p: Annotated[
        float | None, _option("Nucleus sampling (the endpoint's default if unset).", MODEL, min=0, max=1)
    ] = None
    max_tokens: Annotated[int | None, _option("Per reply.", MODEL, min=1)] = None
    seed: Annotated[
        int | None,
        _option("Sampling seed sent with each request, for endpoints that honour it (OpenAI, vLLM).", MODEL),
    ] = None
    cache: Annotated[
        CacheMode,
        _option(
            "Response cache: off (every request asks the model), on (a request identical to an earlier one, in "
            "the same epoch, gets its kept reply; said at the start) or refresh (ask, and keep the reply).",
            MODEL,
        ),
    ] = CacheMode.off
    cache_path: Annotated[Path | None, _option("SQLite file of the response cache.", MODEL)] = None

    def agent_settings(self, limits: AgentLimits, model: str | None = None) -> AgentSettings:
        """What every agent of the run shares, the model (`model`, else --model) resolved (its API key
        there) before any sample."""
        from daharness.agents import AgentSettings, SampleLimits

        settings = AgentSettings(
            models_file=self.models_file, base_url=self.base_url, api_key_env=self.api_key_env,
            cache_mode=self.cache.value, cache_path=self.cache_path or default_cache_path(),
            limits=SampleLimits(
                limits.max_steps, limits.max_sample_tokens, limits.max_sample_cost, limits.max_sample_seconds
            ),
        )  # fmt: skip
        sampling = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}
        settings.model = settings.named_model(model or self.model, **sampling, seed=self.seed)
        return settings


@dataclass
class AgentLimits(Bundle):
    """What every agent may use per sample, and the chosen agent's options given as KEY=VALUE."""

    max_steps: Annotated[
        int | None, _option("Model replies per sample (react: 10, da-agent: 20).", AGENT_PANEL, min=1)
    ] = None
    max_sample_tokens: Annotated[int | None, _option("Tokens per sample.", AGENT_PANEL, min=1)] = None
    max_sample_cost: Annotated[float | None, _option("USD per sample.", AGENT_PANEL, min=0)] = None
    max_sample_seconds: Annotated[
        float | None, _option("Agent wall time per sample.", AGENT_PANEL, min=0)
    ] = None
    agent_option: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-option",
            "-A",
            help="An option of the chosen agent as KEY=VALUE (repeatable), checked against its options "
            "(`daharness agents NAME` lists them), e.g. -A memory_window=10.",
            rich_help_panel=AGENT_PANEL,
        ),
    ] = None


@dataclass
class ScaleOut(Bundle):
    """Where samples run: threads of this process, or a Ray cluster."""

    backend: Annotated[
        str,
        _option(
            "Where samples run: 'local' (threads of this process) or 'ray' (tasks on a Ray cluster).",
            SCALE_OUT,
        ),
    ] = "local"
    ray_address: Annotated[
        str | None,
        _option(
            "Ray cluster to join, e.g. HEAD_IP:6379 or 'auto'; default: start Ray on this machine.", SCALE_OUT
        ),
    ] = None
    ray_num_cpus: Annotated[float, _option("CPUs Ray reserves for each sample.", SCALE_OUT, min=0.01)] = 1.0
    ray_memory_mb: Annotated[
        int | None, _option("Memory Ray reserves for each sample, MB.", SCALE_OUT, min=1)
    ] = None
    ray_shared_files: Annotated[
        bool,
        _option(
            "Every node reads task files at their paths (shared filesystem) instead of receiving them.",
            SCALE_OUT,
        ),
    ] = False

    def settings(self) -> ExecutorSettings:
        from daharness.runs.executors import ExecutorSettings

        return ExecutorSettings(
            self.backend, self.ray_address, self.ray_num_cpus, self.ray_memory_mb, self.ray_shared_files
        )
