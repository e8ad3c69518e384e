"""What `daharness run` will run: one run, or a run set of every suite × agent × model named
(comma-separated `--suite`, `--agent`, `--model`). Before the first sample every suite is loaded, every
agent built and every model resolved, and each option is handed to the runs it applies to: a format option
to the suites whose format reads it, an agent's option to the agents that have it, `--ids` to the suites
that hold the ids; one that applies to none is refused (exit 2)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daharness.cli.families import FamilyChoices
from daharness.cli.options import id_list, print_warnings
from daharness.core.errors import UserError

if TYPE_CHECKING:
    from daharness.agents import AgentSettings
    from daharness.cli.run_options import AgentLimits, ModelChoice, SandboxChoice, Selection
    from daharness.core.agent import Agent, AgentOptions
    from daharness.core.runlog import RunSpec, ScoringSettings
    from daharness.core.suite import Suite
    from daharness.runs.pipeline import SandboxSettings


@dataclass
class PlannedRun:
    """One run of the command: its suite (loaded), agent (built, and how), model and settings."""

    suite: Suite
    agent_name: str
    model: str | None  # as named on the command line; None when the agent asks no model
    settings: AgentSettings
    options: AgentOptions
    agent: Agent
    scoring: ScoringSettings
    sandbox: SandboxSettings
    ids: list[str] | None
    wanted: set[str]  # its sample keys (tasks × epochs)
    spec: RunSpec  # run.json as it would be written (to know whether a folder resumes it)

    def what(self) -> tuple[str, str, str | None]:
        return self.suite.spec, self.agent_name, self.model

    def models(self) -> Any:
        """The models it asks, checked before its first sample (none for an agent that names none)."""
        from daharness.models import RunModels

        settings = self.settings
        asked = (settings.model, *settings.named_models) if self.model is not None else ()
        return RunModels.of(*asked, cache_mode=settings.cache_mode, cache_path=settings.cache_path)


def comma_list(text: str | None, option: str) -> list[str]:
    """`a,b` -> [a, b], each once, in order; an empty item is refused."""
    if text is None:
        return []
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise UserError(f"{option} {text!r}: an empty name in the list")
    return list(dict.fromkeys(items))


def plan_runs(
    suites: str,
    agents: str,
    model: ModelChoice,
    families: FamilyChoices,
    selection: Selection,
    sandbox: SandboxChoice,
    limits: AgentLimits,
) -> list[PlannedRun]:
    """Every run the command names, checked before any sample; runs of an agent that asks no model are
    made once whatever the models (its `describe()` is the same under each)."""
    specs, names = comma_list(suites, "--suite"), comma_list(agents, "--agent")
    models = comma_list(model.model, "--model") or [None]
    options = _agent_options(names, families)
    loaded = _load_suites(specs, families)
    ids = _ids_per_suite(id_list(selection.ids), loaded)
    settings = {name: model.agent_settings(limits, name) for name in models}
    plans: list[PlannedRun] = []
    seen: set[tuple[str, str]] = set()
    for suite in loaded:
        for name in names:
            for asked in models:
                plan = _plan(suite, name, asked, settings[asked], options[name], families, selection, sandbox)
                plan.ids = ids[suite.spec]
                key = (suite.spec, json.dumps(plan.agent.describe(), sort_keys=True, default=str))
                if key not in seen:
                    seen.add(key)
                    plans.append(_checked(plan, selection))
    return plans


def _plan(
    suite: Suite,
    name: str,
    model: str | None,
    settings: AgentSettings,
    options: AgentOptions,
    families: FamilyChoices,
    selection: Selection,
    sandbox: SandboxChoice,
) -> PlannedRun:
    from daharness.agents import agent_needs_desktop, make_agent
    from daharness.core.registry import task_mode_groups
    from daharness.runs.pipeline import SandboxSettings
    from daharness.runs.runner import planned_spec

    agent = make_agent(name, settings, options)
    asks_model = "model" in agent.describe()
    scoring = families.scoring(task_mode_groups(suite.tasks))
    box = SandboxSettings(
        sandbox.sandbox, sandbox.limits(), desktop=sandbox.desktop or agent_needs_desktop(name)
    )
    spec = planned_spec(
        suite, agent, scoring, box, epochs=selection.epochs, labels=selection.labels(),
        sample_shuffle=selection.sample_shuffle, all_tasks=selection.ids is None,
    )  # fmt: skip
    return PlannedRun(
        suite, name, model if asks_model else None, settings, options, agent, scoring, box, None, set(), spec
    )


def _checked(plan: PlannedRun, selection: Selection) -> PlannedRun:
    """The run's tasks chosen and what every sample would meet checked now, for each run of a set before
    the first runs."""
    from daharness.core.record import sample_key
    from daharness.runs.runner import check_before_samples, select_tasks

    tasks = select_tasks(
        plan.suite.tasks, ids=plan.ids, limit=selection.task_range(), shuffle=selection.sample_shuffle,
        unsupported=plan.suite.unsupported,
    )  # fmt: skip
    check_before_samples(plan.suite, plan.agent, tasks, plan.sandbox)
    plan.wanted = {sample_key(task.id, epoch) for task in tasks for epoch in range(1, selection.epochs + 1)}
    return plan


def _agent_options(names: list[str], families: FamilyChoices) -> dict[str, AgentOptions]:
    """Each agent's options, from those given that it has; one that none of the agents has is refused
    (with one agent, as that agent's model words it)."""
    from daharness.core.registry import agents

    given = families.agent_options
    if len(names) == 1:
        return {names[0]: agents.get(names[0]).parse_options(given.values, given.spell)}
    fields = {name: set(agents.get(name).options.model_fields) for name in names}
    for key in given.values:
        if not any(key in own for own in fields.values()):
            raise UserError(f"{given.spell(key)}: not an option of any of the agents {', '.join(names)}")
    return {
        name: agents.get(name).parse_options(
            {k: v for k, v in given.values.items() if k in fields[name]}, given.spell
        )
        for name in names
    }


def _load_suites(specs: list[str], families: FamilyChoices) -> list[Suite]:
    """Every suite with the format options its format reads, its loader's warnings said and its left-out
    tasks noted; a mode switch that applies to no task of them is refused."""
    from rich.markup import escape

    from daharness.cli.options import err
    from daharness.core.registry import task_mode_groups
    from daharness.suites import load_suite, options_per_suite

    per_suite = options_per_suite(specs, families.format_options())
    loaded = []
    for spec in specs:
        suite = load_suite(spec, **per_suite[spec])
        print_warnings(suite.warnings())
        if suite.unsupported:
            err.print(
                f"[yellow]note[/]: {escape(spec)}: {len(suite.unsupported)} tasks cannot run here and are left "
                f"out (`daharness suites check {escape(spec)}` lists why)"
            )
        loaded.append(suite)
    used = set().union(*(task_mode_groups(suite.tasks) for suite in loaded))
    families.check_modes_used(used, "suite " + " or ".join(repr(spec) for spec in specs))
    return loaded


def _ids_per_suite(ids: list[str] | None, loaded: list[Suite]) -> dict[str, list[str] | None]:
    """`--ids` for each suite: with several suites, the ids each holds (those that cannot run here
    included, to be refused with their reason); an id that none holds, or a suite that holds none, is
    refused."""
    if ids is None or len(loaded) == 1:
        return {suite.spec: ids for suite in loaded}
    per_suite = {}
    for suite in loaded:
        held = {task.id for task in suite.tasks} | set(suite.unsupported)
        per_suite[suite.spec] = [i for i in ids if i in held]
        if not per_suite[suite.spec]:
            raise UserError(f"--ids: suite {suite.spec!r} has none of the tasks {', '.join(ids)}")
    nowhere = [i for i in ids if not any(i in own for own in per_suite.values())]
    if nowhere:
        raise UserError(f"--ids: no suite of the run set has a task with id {', '.join(nowhere)}")
    return per_suite
