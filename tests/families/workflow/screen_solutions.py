"""Solutions of one official task per application written as an agent's GUI actions on the application's
web UI in the sample's browser (after the setup's `*_webui_init` opened it, logged in, closed pop-ups),
each following the task's own step-by-step tutorial. Names are the accessibility tree's (what the
agent's observation shows); the few controls it shows no name for are clicked beside their label."""

from __future__ import annotations

from pathlib import Path

from families.workflow.screen_agent import Act, Click, ClickCell, Shell, Step, WaitFor


def typing(text: str) -> Act:
    return Act({"action_type": "TYPING", "text": text})


def press(key: str) -> Act:
    return Act({"action_type": "PRESS", "key": key})


def _fill(entry: str, text: str) -> list[Step]:
    return [Click("entry", entry), typing(text)]


# airflow/28467077: a Postgres connection made in Admin > Connections > Add
AIRFLOW_CONNECTION: list[Step] = [
    Click("link", "Admin"),
    Click("link", "Connections"),
    Click("link", "Add +"),
    *_fill("Connection Id *", "postgres_conn"),
    # the connection type is a select2 drop-down: its search field opens under the box
    Click("combo-box", "× Airbyte"),
    Click("combo-box", "× Airbyte", below=34),
    typing("Postgres"),
    press("enter"),
    WaitFor("entry", "Database"),  # the Postgres form names its schema field so
    *_fill("Host", "172.17.0.1"),
    *_fill("Database", "jaffle_shop"),
    *_fill("Login", "user"),
    *_fill("Password", "password"),
    *_fill("Port", "5432"),
    Act({"action_type": "MOVE_TO", "x": 150, "y": 600}),  # scrolled over the labels, not the Extra editor
    Act({"action_type": "SCROLL", "clicks": -15}),
    Click("static", "Save"),  # the button's own name ends in its icon's glyph
    WaitFor("static", "Added Row"),
]


# airflow/425e038b: the DAG dependencies view, from the Browse menu
AIRFLOW_DEPENDENCIES: list[Step] = [
    Click("link", "Browse"),
    Click("link", "DAG Dependencies"),
    WaitFor("document-web", "DAG Dependencies - Airflow"),
]


def dagster_sensor(files_script: Path) -> list[Step]:
    """dagster/28b33444: the sensor's code written (its tutorial's editor steps, as files), then the
    definitions reloaded and the sensor started on the Dagster UI."""
    return [
        Shell(files_script.read_text()),
        Click("push-button", "refresh Reload all"),
        WaitFor("link", "sensors 1"),  # the reloaded location lists the new sensor
        Click("link", "sensors 1"),
        Click("link", "directory_sensor directory_sensor"),
        Click("static", "Running", right=93),  # the switch right of its label
        # the switch's state is not in the accessibility tree: until Dagster says the sensor runs, ask it
        # (waiting for the first tick on the page took a minute)
        Shell(
            "for _ in $(seq 120); do curl -s localhost:3000/graphql -H 'Content-Type: application/json'"
            f" -d '{_SENSOR_STATUS}' | grep -q RUNNING && exit 0; sleep 0.5; done;"
            " echo 'Dagster does not say the sensor runs 60 s after the click' >&2; exit 1"
        ),
    ]


_SENSOR_STATUS = (
    '{"query": "{ sensorOrError(sensorSelector: {repositoryName: \\"__repository__\\", '
    'repositoryLocationName: \\"file_watch_sensor\\", sensorName: \\"directory_sensor\\"}) '
    '{ ... on Sensor { sensorState { status } } } }"}'
)


# superset/9771b80c: the table `annotation` of PublicData registered, start_dttm its default datetime
SUPERSET_DATASET: list[Step] = [
    Click("push-button", "Datasets"),
    Click("push-button", "+ DATASET"),
    Click("combo-box", "Select database or type to search databases"),
    typing("PublicData"),
    WaitFor("static", "PublicData"),
    press("enter"),
    Click("combo-box", "Select schema or type to search schemas"),
    typing("public"),
    WaitFor("static", "public"),
    press("enter"),
    Click("combo-box", "Select table or type to search tables"),
    typing("annotation"),
    WaitFor("static", "annotation_layer"),  # the options listed
    press("enter"),
    Click("push-button", "CREATE DATASET AND CREATE CHART"),
    WaitFor("heading", "Create a new chart"),
    Click("push-button", "Datasets"),
    Click("push-button", "edit-alt"),
    Click("static", "COLUMNS"),
    ClickCell(row=("static", "start_dttm"), column=("static", "Default datetime"), right=9),
    Click("push-button", "SAVE"),
    Click("push-button", "OK"),
    WaitFor("static", "The dataset has been saved"),
]
