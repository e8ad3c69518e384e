"""The release's `bigquery_init` and `snowflake_init` setup steps, done by the harness on the host with the
providers' client libraries, as `desktop_env/configs/bigquery.py` and `snowflake.py` do them (read there;
written here): empty the project, create a dataset's table from the task's CSV, run the task's SQL script
(its `PUT file://` paths are the task's files on the host), drop databases, users, warehouses, and copy
the account's key or settings file to the desktop, the one way credentials reach the sandbox.

Where the release logs an error and goes on, a step here fails the sample as an infrastructure error: a
half-made setup would give scores that mean nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daharness.core.backend import SandboxBackend
from daharness.core.errors import InfrastructureError
from daharness.families.workflow.cloud import clients
from daharness.families.workflow.cloud.settings import CloudSettings

PRESERVED_DATABASES = ("SNOWFLAKE", "SNOWFLAKE_SAMPLE_DATA")
PRESERVED_WAREHOUSES = ("COMPUTE_WH",)
DEFAULT_KEYFILE_DEST = "keyfile.json"  # /home/user/keyfile.json, the release's default


def run_cloud_step(
    box: SandboxBackend, settings: CloudSettings, kind: str, parameters: dict[str, Any]
) -> None:
    """One `bigquery_init` or `snowflake_init` step (its actions in order)."""
    try:
        if kind == "bigquery_init":
            _bigquery_init(box, settings, parameters)
        else:
            _snowflake_init(box, settings, parameters)
    except InfrastructureError:
        raise
    except Exception as exc:
        raise InfrastructureError(f"{kind} failed: {type(exc).__name__}: {str(exc)[:800]}") from exc


def _bigquery_init(box: SandboxBackend, settings: CloudSettings, parameters: dict[str, Any]) -> None:
    project = clients.project_of(settings, parameters)
    with clients.bigquery(settings, project) as client:
        for action in parameters.get("actions", []):
            kind = action.get("type", "empty")
            if kind == "empty":
                _empty_project(client, settings, project)
            elif kind == "create_table":
                _create_table(client, project.project_id, action)
            elif kind == "copy_keyfile":
                _copy(box, settings.keyfile(project), str(action.get("dest", DEFAULT_KEYFILE_DEST)))


def _empty_project(client: Any, settings: CloudSettings, project: Any) -> None:
    """Every dataset with its tables, routines and models; on a real project also the jobs' metadata and
    the external connections, as the release does (an emulator keeps neither)."""
    if not project.api_endpoint:
        for job in client.list_jobs():
            client.cancel_job(job)
            client.delete_job_metadata(job)
    for dataset in client.list_datasets():
        for routine in client.list_routines(dataset):
            client.delete_routine(routine, not_found_ok=True)
        for model in client.list_models(dataset):
            client.delete_model(model, not_found_ok=True)
        client.delete_dataset(dataset, delete_contents=True, not_found_ok=True)
    if not project.api_endpoint:
        from google.cloud import bigquery_connection_v1 as connections

        for connection in clients.bigquery_connections(settings, project):
            connections.ConnectionServiceClient().delete_connection(name=connection.name)


def _create_table(client: Any, project_id: str, action: dict[str, Any]) -> None:
    from google.cloud import bigquery

    dataset_id, table_id = str(action["dataset_id"]), str(action["table_id"])
    client.create_dataset(bigquery.Dataset(f"{project_id}.{dataset_id}"), exists_ok=True)
    schema = None
    if "schema_from_json" in action:
        schema = [
            bigquery.SchemaField(
                field["name"], field.get("type", "STRING"), mode=field.get("mode", "NULLABLE")
            )
            for field in action["schema_from_json"]
        ]
    table = f"{project_id}.{dataset_id}.{table_id}"
    if schema is None and "data_from_csv" in action:
        # the release creates the table without columns, then loads it: the load creates it here (the same
        # table; bqemulator gives a table created without columns a placeholder column the load then meets)
        from google.api_core.exceptions import NotFound

        try:
            client.get_table(table)
            raise InfrastructureError(f"table {table} exists already (the setup empties the project first)")
        except NotFound:
            pass
    else:
        client.create_table(bigquery.Table(table, schema=schema), exists_ok=False)
    if "data_from_csv" in action:
        # as the release: without a schema the header is skipped and the types detected; with one, no row
        # is skipped
        options: dict[str, Any] = (
            {"skip_leading_rows": 1, "autodetect": True}
            if schema is None
            else {"skip_leading_rows": 0, "schema": schema}
        )
        config = bigquery.LoadJobConfig(source_format=bigquery.SourceFormat.CSV, **options)
        with Path(action["data_from_csv"]).open("rb") as source:
            client.load_table_from_file(source, table, job_config=config).result()


def _snowflake_init(box: SandboxBackend, settings: CloudSettings, parameters: dict[str, Any]) -> None:
    actions: dict[str, Callable[[Any, dict[str, Any]], None]] = {
        "execute_script": _execute_script,
        "delete_user": _delete_users,
        "delete_database": _delete_databases,
        "delete_warehouse": _delete_warehouses,
        "create_database": _create_database,
        "create_table": _create_snowflake_table,
    }
    with clients.snowflake(settings) as connection:
        for action in parameters.get("actions", []):
            kind = str(action.get("type"))
            if kind == "copy_keyfile":  # the release copies the settings file itself
                _copy(
                    box,
                    settings.folder / "snowflake" / "settings.json",
                    str(action.get("dest", DEFAULT_KEYFILE_DEST)),
                )
            else:
                actions[kind](connection, action)


def script_statements(text: str) -> list[str]:
    """A SQL script's statements as the release splits them: comments removed, split on `;`."""
    text = re.sub(r"--.*?$", "", text, flags=re.MULTILINE)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return [statement.strip() for statement in text.split(";") if statement.strip()]


def _execute_script(connection: Any, action: dict[str, Any]) -> None:
    if action.get("sql_script"):
        statements = script_statements(Path(action["sql_script"]).read_text(encoding="utf-8"))
        for official, host in (action.get("put_files") or {}).items():  # PUT file://<release path>
            statements = [
                statement.replace(f"file://{official}", f"file://{host}") for statement in statements
            ]
    else:
        command = action["sql_command"]
        statements = [command] if isinstance(command, str) else list(command)
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _targets(cursor: Any, given: Any, listing: str, column: int, keep: tuple[str, ...]) -> list[str]:
    """The names an action gives (a name or a list), or when it gives none every one `listing` shows (in
    its `column`) but those in `keep`."""
    if given is not None:
        return _names(given)
    return [row[column] for row in cursor.execute(listing).fetchall() if row[column] not in keep]


def _delete_users(connection: Any, action: dict[str, Any]) -> None:
    given = action.get("username")
    with connection.cursor() as cursor:
        keep: tuple[str, ...] = ()
        if given is None:
            keep = ("SNOWFLAKE", cursor.execute("SELECT CURRENT_USER()").fetchone()[0])
        for name in _targets(cursor, given, "SHOW USERS", 0, keep):
            cursor.execute(f"DROP USER IF EXISTS {name}")


def _delete_databases(connection: Any, action: dict[str, Any]) -> None:
    with connection.cursor() as cursor:
        listed = _targets(cursor, action.get("database"), "SHOW DATABASES", 1, PRESERVED_DATABASES)
        for name in listed:
            cursor.execute(f"DROP DATABASE IF EXISTS {name} CASCADE")


def _delete_warehouses(connection: Any, action: dict[str, Any]) -> None:
    with connection.cursor() as cursor:
        listed = _targets(cursor, action.get("warehouse"), "SHOW WAREHOUSES", 0, PRESERVED_WAREHOUSES)
        for name in listed:
            cursor.execute(f"DROP WAREHOUSE IF EXISTS {name}")


def _create_database(connection: Any, action: dict[str, Any]) -> None:
    if action.get("delete_first", True):
        _delete_databases(connection, {"database": action["database"]})
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE IF NOT EXISTS {action['database']}")
        if action.get("schema"):
            cursor.execute(f"USE DATABASE {action['database']}")
            cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {action['schema']}")


def _create_snowflake_table(connection: Any, action: dict[str, Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"USE DATABASE {action['database']}")
        cursor.execute(f"USE SCHEMA {action.get('schema', 'PUBLIC')}")
        cursor.execute(f"CREATE OR REPLACE TABLE {action['table']} AS {action['sql']}")


def _copy(box: SandboxBackend, source: Path, dest: str) -> None:
    """A credentials file put where the task's setup puts it (its own step: officially the desktop)."""
    from daharness.families.workflow.loader import in_home

    text = source.read_text(encoding="utf-8")
    json.loads(text)  # a key or settings file is JSON: say so here rather than in the agent's code
    written = box.write_file(in_home(dest) if dest.startswith(("/", "~")) else dest, text)
    if not written.ok:
        raise InfrastructureError(f"could not write {dest} in the sandbox: {written.stderr[-300:]}")
