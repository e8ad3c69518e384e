"""The workflow family (Spider2-V): its tasks' sandboxes, setup and check scripts, and report figures.

Sandboxes: the workspace is the task's home (HOME too), and stand-ins for `conda` and the desktop
applications come first on PATH (`tools.py`). Before the agent, the task's setup steps run in
order: `init.sh`-style scripts and commands run in the home; steps that only act on the desktop (open a
file, launch an application, a browser) do nothing, unless the sample has a desktop (`screen.py`). After the agent, every process it left is stopped
and the sandbox starts again in the checks' environment, which comes from outside what the agent could
write (`checks.py`); the non-GUI postconfig commands run, then each check script
(`vm_script_output`) runs in the home, read by bash from the task (not from a file in the home), and its
standard output is kept in `submission.evidence["script_outputs"]` for the scorers.

Figures, as the paper reports them: success rate (a sample succeeds when it scores 1) overall, by
application, by category, by interface (cli / gui / cli+gui) and by instruction (abstract / verbose).
"""

from __future__ import annotations

import base64
import shlex
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.table import Table

from daharness.core.backend import OverlayBlocked, SandboxBackend
from daharness.core.family import FamilyBase, FormatOption, SampleEnvironment, SandboxAdditions
from daharness.core.record import SampleRecord, Suspicion
from daharness.core.registry import family
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Note, Submission
from daharness.core.suite import Suite
from daharness.core.task import SetupStep, Task
from daharness.families.workflow import screen
from daharness.families.workflow.apps import (
    APP_STEP_TIMEOUT_S,
    HOME_FILES,
    app_additions,
    app_of,
    conda_sh,
    webui,
)
from daharness.families.workflow.apps import services as app_services
from daharness.families.workflow.checks import (
    agent_files_at_check_paths,
    check_overlay,
    clear_check_made_files,
    keep_setup_state,
    setup_state,
)
from daharness.families.workflow.modes import WORKFLOW_MODES
from daharness.families.workflow.scorers.inputs import PAGE_CHECKS, SCREEN_STATES, SCRIPT_OUTPUTS
from daharness.families.workflow.tools import tools_dir
from daharness.families.workflow.validate import WorkflowValidation, print_workflow_validation, validate_suite
from daharness.report.bars import svg_bars
from daharness.report.html import card
from daharness.report.html import pct as pct_html
from daharness.report.terminal import pct

CONDA_SH = "anaconda3/etc/profile.d/conda.sh"
INTERFACES = ("cli", "gui", "cli+gui")
INSTRUCTIONS = ("abstract", "verbose")
_BREAKDOWNS = (
    ("application", "by_app"),
    ("category", "by_category"),
    ("interface", "by_interface"),
    ("instruction", "by_instruction"),
    ("difficulty", "by_level"),
)


@family("workflow", order=30)
class WorkflowFamily(FamilyBase):
    """Spider2-V: success rate overall, by application, category, interface and instruction kind."""

    title = "workflow (Spider2-V)"
    modes = WORKFLOW_MODES
    mode_help = "Workflow (Spider2-V) scoring (workbook reading, browser URL checks): 'corrected' or 'compat' (the official rules)."
    format_options = (
        FormatOption(
            "instruction",
            "spider2v: 'verbose' gives each task its step-by-step tutorial (default: as written).",
            kind="choice",
            choices=("abstract", "verbose"),
            variant=True,
        ),
        FormatOption(
            "rag",
            "spider2v: add each task's retrieved documentation to its instruction.",
            kind="flag",
            variant=True,
        ),
    )
    suite_dir = Path(__file__).parent / "suite"
    validation = "states"

    def validate_states(
        self, suite: Suite, tasks: list[Task], scoring: ScoringSettings, concurrency: int
    ) -> list[WorkflowValidation]:
        return validate_suite(suite, tasks, scoring, concurrency)

    def print_validation(self, console: Any, suite: str, results: list[Any]) -> None:
        print_workflow_validation(console, suite, results)

    def sandbox_additions(self, task: Task) -> SandboxAdditions:
        base = SandboxAdditions(path_dirs=(tools_dir(),), home_is_workdir=True)
        app = app_of(task)
        return app_additions(app, base, task.workdir) if app else base

    def prepare(self, task: Task, env: SampleEnvironment) -> None:
        app = app_of(task)
        if app:  # the VM's conda, database server and network are there before any script
            for name, text in {CONDA_SH: conda_sh(), **HOME_FILES[app]}.items():
                env.sandbox.write_file(name, text)
            app_services.start_system_services(env.sandbox, app)
        for step in task.setup:
            if "service" in step.args:  # an application's health check, and on a desktop its page
                run_step(env.sandbox, step, timeout=step_timeout(task))
                if screen.has_desktop(env.sandbox):
                    webui.run_init_step(env.sandbox, step.args)
            elif screen.is_gui_step(step) and screen.has_desktop(env.sandbox):
                screen.run_gui_step(env.sandbox, step, env.sandbox.workdir)
            else:
                run_step(env.sandbox, step, timeout=step_timeout(task))
        if app:
            app_services.note_running(env.sandbox, env.scratch)
        keep_setup_state(task, env.sandbox, env.scratch)

    def finish(self, task: Task, env: SampleEnvironment, submission: Submission) -> None:
        box = env.sandbox
        postconfig = [SetupStep.model_validate(raw) for raw in task.gold.data.get("postconfig", [])]
        if screen.has_desktop(box):  # what the agent left unsaved on the screen is saved, as officially
            gui_steps, began = list(filter(screen.is_gui_step, postconfig)), time.time()
            for step in gui_steps:
                submission.trajectory.append(gui_postconfig(task, box, step))
            if gui_steps:
                screen.settle(box, began)
        else:
            submission.trajectory.extend(
                Note(text=f"postconfig {step.args['dest']} not run: it asks the screen's applications "
                     "on localhost, and this sample has no desktop")
                for step in postconfig if screen.is_live_script(step)
            )  # fmt: skip
        sources = [
            source
            for spec in task.scorers
            for source in (spec.options.get("result", {}), spec.options.get("expected", {}))
            if isinstance(source, dict)
        ]
        getters = {str(source["path"]) for source in sources if source.get("kind") == "screen"}
        if any(source.get("kind") == "validate_correct_url" for source in sources):
            getters.add(screen.TAB_URL)
        if getters and screen.has_desktop(box):
            submission.evidence[SCREEN_STATES] = screen.collect_screen(box, getters)
        page_checks = {
            str(source["path"]): source for source in sources if source.get("kind") == "html_check"
        }
        if page_checks and screen.has_desktop(box):  # in the browser the agent leaves (getters.py: why)
            submission.evidence[PAGE_CHECKS] = found = {}
            for dest, source in page_checks.items():
                found[dest] = live_page_check(task, box, dest, source.get("value") or {})
                submission.trajectory.append(
                    Note(
                        text=f"html_check on the screen: {dest} gave {found[dest]['url']!r}", data=found[dest]
                    )
                )
        if app_of(task):  # servers of the application the agent started, started again for the checks
            for server in app_services.note_agent_servers(box, env.scratch):
                submission.trajectory.append(Note(text="a server the agent started is started again for the "
                                                  "checks", data=server))  # fmt: skip
        box.interrupt()  # nothing the agent left running may touch its files or the checks from here on
        state = setup_state(env.scratch)
        submission.suspicions += agent_files_at_check_paths(box, state)
        outputs: dict[str, str] = {}
        submission.evidence[SCRIPT_OUTPUTS] = outputs
        try:
            box.restart_with_overlay(check_overlay(state, box.workdir, app_conda=app_of(task) is not None))
        except OverlayBlocked as exc:  # no check runs: what reads their output scores 0
            submission.suspicions.append(Suspicion(kind="check_environment", detail=f"~/{exc}"))
            submission.trajectory.append(Note(text=f"the checks did not run: ~/{exc}"))
            return
        if app_of(task):  # the setup's services again (every process was stopped), for the checks
            ok, output = app_services.restart_for_checks(box, env.scratch)
            submission.trajectory.append(Note(text="services started again for the checks", data={
                "ok": ok, "output": output[-2000:]}))  # fmt: skip
        made_by_checks = [
            str(source["path"]) for source in sources
            if source.get("kind") == "file" and (source.get("value") or {}).get("made_by_checks")
        ]  # fmt: skip
        submission.suspicions += clear_check_made_files(box, made_by_checks)
        for step in postconfig:
            run_step(box, step, in_place=False, timeout=step_timeout(task))
        for script in task.gold.data.get("scripts", []):
            observation = run_script(
                box, Path(script["source"]), script["dest"], in_place=False, timeout=step_timeout(task)
            )
            outputs[script["dest"]] = observation.stdout
            submission.trajectory.append(
                Note(text=f"check script {script['dest']}", data={
                    "exit_status": observation.exit_status, "stdout": observation.stdout[-2000:],
                    "stderr": observation.stderr[-2000:],
                }),
            )  # fmt: skip

    def figures(self, records: list[SampleRecord]) -> dict[str, Any] | None:
        return workflow_figures(records)

    def print_figures(self, console: Any, figures: dict[str, Any], title: str) -> None:
        table = Table(title=title, title_justify="left")
        for column in ("breakdown", "group", "samples", "success"):
            table.add_column(column, justify="right" if column in ("samples", "success") else "left")
        table.add_row("all", "", str(figures["samples"]), pct(figures["success_rate"]))
        for label, key in _BREAKDOWNS:
            for group, row in figures[key].items():
                table.add_row(label, group, str(row["samples"]), pct(row["success_rate"]))
        console.print(table)

    def html(self, figures: dict[str, Any]) -> str:
        def rates(key: str) -> dict[str, float]:
            return {group: row["success_rate"] for group, row in figures[key].items()}

        return (
            f'<div class="cards">{card("success rate", pct_html(figures["success_rate"]))}'
            f'{card("mean score", pct_html(figures["mean_score"]))}</div><div class="charts">'
            f"<figure>{svg_bars(rates('by_app'), 'Success rate by application', False, 'success')}</figure>"
            f"<figure>{svg_bars(rates('by_category'), 'Success rate by category', False, 'success')}</figure>"
            f"<figure>{svg_bars(rates('by_interface'), 'Success rate by interface', False, 'success')}</figure>"
            f"<figure>{svg_bars(rates('by_instruction'), 'Success rate by instruction', False, 'success')}</figure>"
            "</div>"
        )


def gui_postconfig(task: Task, box: SandboxBackend, step: SetupStep) -> Note:
    """One GUI postconfig step on the live sandbox, noted for the trajectory. A script among them asks
    the screen's applications (`wait.sh`: is JupyterLab's kernel idle?): it runs in the home, as the
    task gives it, and its output is only noted, never scored."""
    if not screen.is_live_script(step):
        return Note(text=f"postconfig on the screen: {screen.run_gui_step(box, step, box.workdir)}")
    dest = step.args["dest"]
    observation = run_script(box, Path(step.args["script"]), dest, in_place=False, timeout=step_timeout(task))
    return Note(
        text=f"postconfig on the screen: ran {dest} (exit status {observation.exit_status})",
        data={"exit_status": observation.exit_status, "stdout": observation.stdout[-2000:]},
    )


def live_page_check(task: Task, box: SandboxBackend, dest: str, config: dict[str, Any]) -> dict[str, Any]:
    """The official `html_check` before the agent's processes stop: its script (given to bash as the task
    gives it) prints a URL, which is opened in the browser the agent leaves, logged into the application as
    officially (a browser started for the checks would not be). The script runs beside what the agent
    left running, so it runs again in the checks' environment, where the corrected mode wants the same
    URL (`getters.html_check`)."""
    script = next(s for s in task.gold.data.get("scripts", []) if s["dest"] == dest)
    observation = run_script(box, Path(script["source"]), dest, in_place=False, timeout=step_timeout(task))
    return screen.check_page(
        box,
        observation.stdout,
        [str(p) for p in config.get("css_paths", [])],
        float(config.get("timeout", 5000)),
    )


def step_timeout(task: Task) -> float | None:
    """An application's scripts start servers and CLIs that load its code: more than a step's default."""
    return APP_STEP_TIMEOUT_S if app_of(task) else None


def run_step(
    box: SandboxBackend, step: SetupStep, *, in_place: bool = True, timeout: float | None = None
) -> None:
    """One setup or postconfig step: a script or a command runs in the home, a file is copied there,
    a service's health is waited for (an application's `*_webui_init`); other desktop steps do nothing."""
    if step.kind == "copy":
        data = base64.b64encode(Path(step.args["source"]).read_bytes()).decode()
        dest = shlex.quote(step.args["dest"])
        box.bash(f'cd ~ && mkdir -p "$(dirname {dest})" && echo {data} | base64 -d > {dest}')
        return
    if step.kind == "open" and "service" in step.args:
        app_services.wait_healthy(box, step.args["service"])
        return
    if step.kind != "command":
        return
    if "script" in step.args:
        run_script(box, Path(step.args["script"]), step.args["dest"], in_place=in_place, timeout=timeout)
    else:
        argv = step.args.get("argv", "")
        box.bash(f"cd ~ && {shlex.join(map(str, argv)) if isinstance(argv, list) else argv}", timeout=timeout)


def run_script(
    box: SandboxBackend, source: Path, dest: str, *, in_place: bool = True, timeout: float | None = None
) -> Any:
    """Run a script of the task with bash in the home: copied there at `dest` first (a setup script, as
    the official VM leaves it), or, `in_place=False` for the checks, given to bash as its text, so that
    nothing in the home can replace it or change it while it runs."""
    text = source.read_text(encoding="utf-8")
    if not in_place:
        return box.bash(f"cd ~ && /bin/bash -c {shlex.quote(text)} {shlex.quote(dest)}", timeout=timeout)
    written = box.write_file(dest, text)
    if not written.ok:
        return written
    return box.bash(f"cd ~ && /bin/bash {shlex.quote(dest)}", timeout=timeout)


def workflow_figures(records: list[SampleRecord]) -> dict[str, Any] | None:
    scored = [r for r in records if r.status == "scored" and r.score is not None and not r.score.excluded]
    if not scored:
        return None
    values = [(r, r.score.value) for r in scored]  # type: ignore[union-attr]

    def groups(key_of: Any) -> dict[str, dict[str, Any]]:
        return _rates((key, value) for record, value in values for key in key_of(record))

    return {
        "samples": len(values),
        "success_rate": round(sum(v >= 1.0 for _, v in values) / len(values), 4),
        "mean_score": round(sum(v for _, v in values) / len(values), 4),
        "by_app": groups(
            lambda r: [t.removeprefix("app:") for t in r.tags if t.startswith("app:")] or ["unknown"]
        ),
        "by_category": groups(lambda r: [r.category or "unknown"]),
        "by_interface": groups(lambda r: [t for t in r.tags if t in INTERFACES] or ["unknown"]),
        "by_instruction": groups(lambda r: [t for t in r.tags if t in INSTRUCTIONS] or ["unknown"]),
        "by_level": groups(lambda r: [r.level or "unknown"]),
    }


def _rates(pairs: Iterable[tuple[str, float]]) -> dict[str, dict[str, Any]]:
    found: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        found[key].append(value)
    return {
        key: {"samples": len(vals), "success_rate": round(sum(v >= 1.0 for v in vals) / len(vals), 4)}
        for key, vals in sorted(found.items())
    }
