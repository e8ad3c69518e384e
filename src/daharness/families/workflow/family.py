"""The workflow family (Spider2-V): its tasks' sandboxes, setup and check scripts, and report figures.

Sandboxes: the workspace is the task's home (HOME too), and stand-ins for `conda` and the desktop
applications come first on PATH (`tools.py`). Before the agent, the task's setup steps run in
order: `init.sh`-style scripts and commands run in the home; steps that only act on the desktop (open a
file, launch an application, a browser) do nothing, unless the sample has a desktop (`screen.py`).

After the agent: on a desktop, the GUI postconfig saves what the agent left unsaved; then every process
of the agent is stopped (the desktop's run on) and the browser's shown tab is read. Then every process
is killed and, when anything is to run there, the sandbox starts again in the checks' environment, which
comes from outside what the agent could write (`checks.py`), with a new desktop; an application's services start again there; the
non-GUI postconfig commands run, then each check script (`vm_script_output`) runs in the home, read by
bash from the task (not from a file in the home), and its standard output is kept in
`submission.evidence["script_outputs"]` for the scorers; last, the page checks (`html_check`) open their
pages in that environment's browser. Whatever fails while reading the screen, the browser or a service
after the agent is the sample's 0 with the reason (`read_after_agent`).

Figures: `figures.py`.
"""

from __future__ import annotations

import base64
import shlex
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from daharness.core.backend import OverlayBlocked, SandboxBackend
from daharness.core.desktop import Desktop
from daharness.core.errors import AgentFailure, InfrastructureError
from daharness.core.family import FamilyBase, FormatOption, SampleEnvironment, SandboxAdditions
from daharness.core.family_commands import DoctorSection
from daharness.core.figures import FamilyFigures
from daharness.core.record import SampleRecord, Suspicion
from daharness.core.registry import family, scorers
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
from daharness.families.workflow.cloud import session as cloud
from daharness.families.workflow.commands import applications_section, cloud_section
from daharness.families.workflow.figures import figure_tables, workflow_figures
from daharness.families.workflow.getters import SUPERSET_PAGE
from daharness.families.workflow.modes import WORKFLOW_MODES
from daharness.families.workflow.scorers.inputs import (
    CLOUD_RESULTS,
    PAGE_CHECKS,
    SCREEN_STATES,
    SCRIPT_OUTPUTS,
    EvaluatorOptions,
    LiveNeeds,
    PageCheckNeed,
)
from daharness.families.workflow.tools import tools_dir
from daharness.families.workflow.validate import WorkflowValidation, print_workflow_validation, validate_suite
from daharness.sandbox import SandboxError

CONDA_SH = "anaconda3/etc/profile.d/conda.sh"


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
            formats=("spider2v",),
        ),
        FormatOption(
            "rag",
            "spider2v: add each task's retrieved documentation to its instruction.",
            kind="flag",
            variant=True,
            formats=("spider2v",),
        ),
        FormatOption(
            "cloud_settings",
            "spider2v: the BigQuery and Snowflake accounts, a folder in the layout of Spider2-V's "
            "evaluation_examples/settings/ (read on the host only), or 'local' for the local emulators.",
            kind="text",
            formats=("spider2v",),
        ),
    )
    suite_dir = Path(__file__).parent / "suite"
    validation = "states"

    def validate_states(
        self, suite: Suite, tasks: list[Task], scoring: ScoringSettings, concurrency: int
    ) -> list[WorkflowValidation]:
        return validate_suite(suite, tasks, scoring, concurrency)

    def doctor(self) -> list[DoctorSection]:
        return [applications_section(), cloud_section()]

    def print_validation(self, console: Any, suite: str, results: list[Any]) -> None:
        print_workflow_validation(console, suite, results)

    def sandbox_additions(self, task: Task) -> SandboxAdditions:
        base = SandboxAdditions(path_dirs=(tools_dir(),), home_is_workdir=True)
        app = app_of(task)
        return cloud.sandbox_additions(task, app_additions(app, base, task.workdir) if app else base)

    def prepare(self, task: Task, env: SampleEnvironment) -> None:
        app = app_of(task)
        if app:  # the VM's conda, database server and network are there before any script
            for name, text in {CONDA_SH: conda_sh(), **HOME_FILES[app]}.items():
                env.sandbox.write_file(name, text)
            app_services.start_system_services(env.sandbox, app)
        cloud.prepare(task, env.sandbox)  # a BigQuery or Snowflake task's accounts set up, and its way out
        for step in task.setup:
            if "service" in step.args:  # an application's health check, and on a desktop its page
                run_step(env.sandbox, step, timeout=step_timeout(task))
                if env.sandbox.desktop is not None:
                    webui.run_init_step(env.sandbox.desktop, step.args)
            elif screen.is_gui_step(step) and env.sandbox.desktop is not None:
                screen.run_gui_step(env.sandbox, step, env.sandbox.workdir)
            else:
                run_step(env.sandbox, step, timeout=step_timeout(task))
        if app:
            app_services.note_running(env.sandbox, env.scratch)
        keep_setup_state(task, env.sandbox, env.scratch)

    def finish(self, task: Task, env: SampleEnvironment, submission: Submission) -> None:
        box = env.sandbox
        desktop = box.desktop
        postconfig = [SetupStep.model_validate(raw) for raw in task.gold.data.get("postconfig", [])]
        if desktop is not None:  # what the agent left unsaved on the screen is saved, as officially
            with read_after_agent("the postconfig on the screen", submission):
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
        needs = live_needs(task)
        if app_of(task):  # servers of the application the agent started, started again for the checks
            for server in app_services.note_agent_servers(box, env.scratch):
                submission.trajectory.append(Note(text="a server the agent started is started again for the "
                                                  "checks", data=server))  # fmt: skip
        superset_tabs: list[dict[str, str]] = []
        if desktop is not None:  # the screen as the agent left it, read with nothing of the agent's running
            if (needs.screen or needs.superset_page) and (note := screen.settle_pages(desktop)):
                submission.trajectory.append(Note(text=note))
            screen.stop_agent(desktop)
            with read_after_agent("reading the browser", submission):
                if needs.screen:
                    submission.evidence[SCREEN_STATES] = screen.collect_screen(desktop, needs.screen)
                if needs.superset_page:
                    superset_tabs = screen.superset_tabs(desktop)
                submission.suspicions += screen.debugging_connections(desktop)
        box.interrupt()  # nothing the agent left running may touch its files or the checks from here on
        if (found := cloud.collect(task, box)) is not None:  # what the accounts hold after the agent
            submission.evidence[CLOUD_RESULTS] = found
        state = setup_state(env.scratch)
        submission.suspicions += agent_files_at_check_paths(box, state)
        outputs: dict[str, str] = {}
        submission.evidence[SCRIPT_OUTPUTS] = outputs
        checked_live = bool((needs.page_checks or needs.superset_page) and desktop is not None)
        if not (
            app_of(task) or needs.made_by_checks or checked_live or task.gold.data.get("scripts")
        ) and not any(map(runs_in_checks, postconfig)):
            return  # nothing runs in the checks' environment: the sandbox is not started again for nothing
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
        submission.suspicions += clear_check_made_files(box, list(needs.made_by_checks))
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
        if checked_live and desktop is not None:
            with read_after_agent("the page checks", submission):
                reopen_pages(task, box, desktop, submission)
                if needs.page_checks:
                    check_pages(box, needs.page_checks, submission)
                if needs.superset_page:
                    url, title = needs.superset_page
                    states = submission.evidence.setdefault(SCREEN_STATES, {})
                    states[SUPERSET_PAGE] = screen.superset_checks(box, superset_tabs, url, title)
                submission.suspicions += screen.debugging_connections(desktop)

    def figures(self, records: list[SampleRecord]) -> FamilyFigures | None:
        figures = workflow_figures(records)
        return None if figures is None else figure_tables(figures)


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


@contextmanager
def read_after_agent(what: str, submission: Submission) -> Iterator[None]:
    """What fails while the harness works the screen or reads the browser or a service after the agent is
    the sample's 0 with the reason (an AgentFailure), not an infrastructure error: the agent's code and
    the pages it opened can make any of it fail (a page that never answers, a service it broke). Only the
    sandbox failing is left to the pipeline, which tells the host's fault from the agent's."""
    try:
        yield
    except SandboxError:
        raise
    except (RuntimeError, OSError, InfrastructureError) as exc:
        reason = f"{what} failed after the agent: {type(exc).__name__}: {exc}"
        raise AgentFailure(reason, list(submission.trajectory)) from exc


def live_needs(task: Task) -> LiveNeeds:
    """What the task's evaluators read of the live sandbox after the agent, as their typed options say."""
    needs = LiveNeeds()
    for spec in task.scorers:
        if spec.name in scorers:
            options = scorers.get(spec.name).parse_options(spec.options, f"task {task.id}")
            if isinstance(options, EvaluatorOptions):
                needs |= options.live_needs()
    return needs


def reopen_pages(task: Task, box: SandboxBackend, desktop: Desktop, submission: Submission) -> None:
    """Before the page checks, in the checks' environment: the browser (new there) logged into the
    application as the setup did, and the setup's `launch` servers started again, so that the pages come
    from servers no process of the agent's is left to answer for."""
    for step in task.setup:
        if "service" in step.args:
            done = webui.run_init_step(desktop, step.args)
        elif screen.is_launch(step):
            done = screen.run_gui_step(box, step, box.workdir)
        else:
            continue
        submission.trajectory.append(Note(text=f"for the page checks: {done}"))


def check_pages(
    box: SandboxBackend, page_checks: Mapping[str, PageCheckNeed], submission: Submission
) -> None:
    """The official `html_check`s, in the checks' environment (`reopen_pages` first): each script's output
    there is a URL, opened in a new tab of that environment's browser (`screen.check_page`)."""
    outputs = submission.evidence[SCRIPT_OUTPUTS]
    submission.evidence[PAGE_CHECKS] = found = {}
    for dest, need in page_checks.items():
        found[dest] = screen.check_page(box, outputs.get(dest), list(need.css_paths), need.timeout_ms)
        submission.trajectory.append(
            Note(text=f"html_check: {dest} gave {found[dest]['url']!r}", data=found[dest])
        )


def step_timeout(task: Task) -> float | None:
    """An application's scripts start servers and CLIs that load its code: more than a step's default."""
    return APP_STEP_TIMEOUT_S if app_of(task) else None


def runs_in_checks(step: SetupStep) -> bool:
    """Whether `run_step` does anything for a postconfig step in the checks' environment."""
    return step.kind in ("copy", "command") or (step.kind == "open" and "service" in step.args)


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
