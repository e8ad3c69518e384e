"""Dagster, Airflow and Superset tasks (issue 25): which tasks the loader supports, what a sandbox with
services holds, and official tasks of each application run through the real services: untouched it
scores 0 (Superset), and the agent's actions score 1: REST calls, files and the application's CLI, or
GUI actions on the application's web UI in the sample's browser (screen_solutions.py).
The live tests need scripts/setup-apps.sh's environments and the shared tasks; they skip without."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from desktop_helpers import DESKTOP_LIMITS, needs_desktop
from helpers import shared_folder

from daharness.agents import make_agent
from daharness.agents.reference import ReferenceAgent
from daharness.core.agent import Agent
from daharness.core.errors import InfrastructureError
from daharness.core.runlog import ScoringSettings
from daharness.core.task import ReferenceSolution, Task
from daharness.families.workflow import apps, limits
from daharness.families.workflow.apps import webui
from daharness.families.workflow.validate import IdleAgent
from daharness.report.build import build_report
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.runs.rundir import RunDir
from daharness.runs.runner import run_suite
from daharness.sandbox.service_mounts import passwd
from daharness.scoring import score_submission
from daharness.suites import load_suite
from families.workflow import screen_solutions
from families.workflow.screen_agent import ScreenScriptAgent, Step

DESKTOP_TASKS = shared_folder() / "spider2v-desktop"
SOLUTIONS = Path(__file__).parent / "app_solutions"


def test_code_calling_a_web_api_makes_a_task_unsupported(tmp_path: Path) -> None:
    (tmp_path / "assets.py").write_text('requests.get("https://api.nasa.gov/planetary/apod")\n')
    assert "api.nasa.gov" in (limits.web_api_need(tmp_path, "Load the pictures.") or "")
    (tmp_path / "assets.py").write_text("# see https://docs.dagster.io\nx = 1\n")
    assert limits.web_api_need(tmp_path, "Load the pictures.") is None
    assert "wttr.in" in (limits.web_api_need(tmp_path, "Use the http://wttr.in API.") or "")


def test_checks_may_ask_the_services_but_not_a_server_of_the_agent(tmp_path: Path) -> None:
    script = tmp_path / "eval.sh"
    script.write_text("docker exec -i web airflow dags list\ncurl -s http://localhost:8088/api/v1/dataset/\n")
    assert limits.script_need(script, services=apps.SERVICE_PORTS) is None
    assert limits.script_need(script) is not None  # no services: Docker and localhost are out of reach
    script.write_text("curl -s http://localhost:8004/locations\n")
    assert "localhost:8004" in (limits.script_need(script, services=apps.SERVICE_PORTS) or "")


class _ScreenWithoutThePage:
    """The desktop as the setup meets it when the application's page does not load."""

    def tabs(self) -> list:
        return []

    def open_url(self, url: str, timeout: float | None = None) -> dict:
        raise RuntimeError(f"TimeoutError: {url} did not finish loading in {timeout:g} s")


def test_a_page_the_setup_cannot_open_is_a_one_line_error_naming_the_step() -> None:
    step = {"official": "superset_webui_init", "service": "superset", "url": "http://localhost:8088"}
    with pytest.raises(InfrastructureError) as raised:
        webui.run_init_step(_ScreenWithoutThePage(), step)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "the setup's superset_webui_init: http://localhost:8088 did not open in the browser "
        "(TimeoutError: http://localhost:8088 did not finish loading in 60 s)"
    )


def test_the_sandbox_user_is_named_as_on_the_vm() -> None:
    lines = passwd("user", 123456, "/home/user").decode().splitlines()
    assert lines[-1] == "user:x:123456:123456:user:/home/user:/bin/bash"
    assert sum(line.split(":")[2] == "123456" for line in lines) == 1


LIVE = [  # one official task per application: its setup starts the service, its check asks it
    ("superset", "77df6495-2dd5-4318-a358-eb9b5ffb6671", "superset_77df6495.py"),
    ("superset", "86d91add-e9c8-416f-b385-38c9934afa7a", "superset_86d91add.sh"),
    # its asset and the checks' gold run read Hacker News: the sandbox's stand-in (web_standins.py)
    ("dagster", "9f8eab3f-3c9f-4def-9061-43a65fd83974", "dagster_9f8eab3f.sh"),
    # airflow/73ef8c87 (app_solutions/airflow_73ef8c87.sh, its DAG calling the wttr.in stand-in) scores 1 alone
    # but not always: the check's `astro run` sometimes finds the metadata's `log` id sequence behind its
    # rows after the restart (duplicate key); left out until the cause is found
    ("airflow", "b06d6db5-d252-490e-9b0e-b25f3bb5faa5", "airflow_b06d6db5.sh"),
    # its asset reads api.nasa.gov: the stand-in's recorded days are what the gold files hold
    ("dagster", "5c54687b-164d-457b-a253-affbe9a4f5b5", "dagster_5c54687b.sh"),
    # the check asks a server the agent started: the harness starts it again (services.note_agent_servers)
    ("dagster", "0dff0011-afff-4ab8-ae07-83f5ab95d215", "dagster_0dff0011.sh"),
]
# solved on the screen: GUI actions on the application's web UI (screen_solutions.py), on a desktop
ON_SCREEN = [
    # the setup's astro_webui_init logged the browser in; the check reads the connection with the CLI
    # (scored 0 now and then until the restart for the checks removed gunicorn's and the scheduler's stale
    # pid files, whose numbers belong to other processes of the restarted sandbox)
    ("airflow", "28467077-983e-4848-9ba3-75848872ee1e", screen_solutions.AIRFLOW_CONNECTION),
    # the check reads the URL of the tab shown after the agent (validate_correct_url)
    ("airflow", "425e038b-6965-442d-b9a3-e72f05c1911f", screen_solutions.AIRFLOW_DEPENDENCIES),
    ("dagster", "28b33444-3b68-4147-94a1-5bf6cb276305",
     screen_solutions.dagster_sensor(SOLUTIONS / "dagster_28b33444_files.sh")),
    ("superset", "9771b80c-81e3-4d5e-873a-0c66d1a12d0b", screen_solutions.SUPERSET_DATASET),
]  # fmt: skip


@pytest.fixture(scope="module")
def desktop_tasks() -> dict[str, Task]:
    """A module fixture: the live tests share one xdist worker and run one at a time (two at once, each
    with its services and a browser, slow each other down on 2 cores)."""
    if not (DESKTOP_TASKS / "examples").is_dir():
        pytest.skip(f"the shared Spider2-V desktop tasks ({DESKTOP_TASKS}) are not here")
    from daharness.families.workflow.loader import spider2v_suite

    return {task.id: task for task in spider2v_suite(DESKTOP_TASKS, {}).tasks}


def _task(tasks: dict[str, Task], app: str, task_id: str) -> Task:
    if reason := apps.missing(app):
        pytest.skip(reason)
    return tasks[task_id]


def _score(task: Task, agent: Agent, settings: SandboxSettings | None = None) -> float:
    submission, snapshot = solve_and_collect(task, agent, settings or SandboxSettings())
    try:
        return score_submission(task, submission, snapshot, ScoringSettings()).value
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)


def test_untouched_superset_task_scores_0_with_its_service_up(desktop_tasks: dict[str, Task]) -> None:
    assert _score(_task(desktop_tasks, *LIVE[0][:2]), IdleAgent()) == 0.0


@pytest.mark.parametrize(
    ("app", "task_id", "solution"), LIVE, ids=[f"{app}-{task[:8]}" for app, task, _ in LIVE]
)
def test_the_agents_actions_score_1_through_the_real_service(
    desktop_tasks: dict[str, Task], app: str, task_id: str, solution: str
) -> None:
    code = (SOLUTIONS / solution).read_text()
    language = "python" if solution.endswith(".py") else "bash"
    task = _task(desktop_tasks, app, task_id)
    solved = task.model_copy(update={"reference": ReferenceSolution(language=language, code=code)})
    assert _score(solved, ReferenceAgent()) == 1.0


def test_a_fake_server_on_the_asked_port_is_not_started_again(desktop_tasks: dict[str, Task]) -> None:
    task = _task(desktop_tasks, "dagster", "0dff0011-afff-4ab8-ae07-83f5ab95d215")
    code = (SOLUTIONS / "dagster_0dff0011_fake.sh").read_text()
    cheat = task.model_copy(update={"reference": ReferenceSolution(language="bash", code=code)})
    assert _score(cheat, ReferenceAgent()) == 0.0


@needs_desktop
@pytest.mark.parametrize(
    ("solution", "expected"), [("airflow_93b05252.sh", 1.0), ("airflow_93b05252_fake.sh", 0.0)]
)
def test_the_page_check_reads_the_airflow_started_again_for_the_checks(
    desktop_tasks: dict[str, Task], solution: str, expected: float
) -> None:
    """Airflow 93b05252 (`html_check`: the run's grid page must show the plugin's two links) solved (1),
    and an agent that put a server of its own in place of Airflow's web server, with both links on every
    page (0; before issue 40 the page check, run before the agent's processes stopped, read it: 1.0). The
    page opens in the checks' environment's browser, logged in by the harness as the setup did."""
    task = _task(desktop_tasks, "airflow", "93b05252-b8cd-4f23-8850-168dc8107d83")
    code = (SOLUTIONS / solution).read_text()
    solved = task.model_copy(update={"reference": ReferenceSolution(language="bash", code=code)})
    assert _score(solved, ReferenceAgent(), SandboxSettings(limits=DESKTOP_LIMITS, desktop=True)) == expected


@needs_desktop
@pytest.mark.parametrize(
    ("app", "task_id", "steps"), ON_SCREEN, ids=[f"{app}-{task[:8]}" for app, task, _ in ON_SCREEN]
)
def test_gui_actions_on_the_web_ui_score_1(
    desktop_tasks: dict[str, Task], app: str, task_id: str, steps: list[Step]
) -> None:
    task = _task(desktop_tasks, app, task_id).model_copy(update={"desktop": True})
    settings = SandboxSettings(limits=DESKTOP_LIMITS, desktop=True)
    assert _score(task, ScreenScriptAgent(steps), settings) == 1.0


# the built-in suite's application tasks over real data (scripts/make_workflow_suite.py, app_specs)
BUILTIN = ["dagster-barley-site-yields", "airflow-seattle-monthly-rain", "superset-cars-horsepower-metric"]


def test_the_builtin_application_tasks_score_1_with_their_references(tmp_path: Path) -> None:
    for app in apps.APPS:
        if reason := apps.missing(app):
            pytest.skip(reason)
    outcome = run_suite(
        load_suite("workflow"), make_agent("reference"), tmp_path / "run", ids=BUILTIN, concurrency=2
    )
    assert outcome.errors == 0
    report = build_report(RunDir.open_for_reading(tmp_path / "run"))
    assert {sample["id"]: sample["value"] for sample in report["samples"]} == dict.fromkeys(BUILTIN, 1.0)
    assert set(report["families"]["workflow"]["by_app"]) >= {"dagster", "airflow", "superset"}
