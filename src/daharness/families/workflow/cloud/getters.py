"""The release's cloud getters (`desktop_env/evaluators/getters/bigquery.py`, `snowflake.py`: read there,
written here), run by the harness on the host after the agent's processes are stopped, with the
providers' client libraries. Each returns what the release's getter gives its metric: a CSV file's text
(the metric reads the file), a list, a dict or a string, or None where the release's getter returns None
(a missing table: the metric then scores 0). The results are kept in the submission's evidence
(`CLOUD_RESULTS`), which the scorers read.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daharness.families.workflow.cloud import clients
from daharness.families.workflow.cloud.settings import CloudSettings

logger = logging.getLogger(__name__)
Getter = Callable[[CloudSettings, dict[str, Any]], Any]


def _rows_csv(rows: list[Any], headers: list[str]) -> str:
    """As the release's `write_data_into_csv`: csv.writer, the header first when there is one."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    if headers:
        writer.writerow(headers)
    writer.writerows(rows)
    return out.getvalue()


def bigquery_table_to_csv(settings: CloudSettings, config: dict[str, Any]) -> str | None:
    """`SELECT <schema> FROM project.dataset.table` as pandas writes it (no index, no header)."""
    project = clients.project_of(settings, config)
    table = f"{project.project_id}.{config['dataset_id']}.{config['table_id']}"
    with clients.bigquery(settings, project) as client:
        try:
            client.get_table(table)
        except Exception:  # the release's getter gives None: the table is not there
            return None
        # quoted: the same table on BigQuery, where the release's unquoted path works (a project id with
        # dashes, a table named 2012), and one the emulator's parser takes too
        query = f"SELECT {', '.join(config['schema'])} FROM `{table}`"
        return str(
            client.query(query).to_dataframe(create_bqstorage_client=False).to_csv(index=False, header=False)
        )


def bigquery_sql_result_to_csv(settings: CloudSettings, config: dict[str, Any]) -> str | None:
    """The task's SQL file (its `{}` the project id) run, as pandas writes the result."""
    project = clients.project_of(settings, config)
    sql = Path(config["sql"]).read_text(encoding="utf-8").format(project.project_id)
    with clients.bigquery(settings, project) as client:
        try:
            return str(
                client.query(sql)
                .to_dataframe(create_bqstorage_client=False)
                .to_csv(index=False, header=False)
            )
        except Exception as exc:  # the release logs and returns None: a view or column the agent did not make
            logger.info("bigquery_sql_result_to_csv: %s", exc)
            return None


def bigquery_datasets(settings: CloudSettings, config: dict[str, Any]) -> list[str]:
    project = clients.project_of(settings, config)
    with clients.bigquery(settings, project) as client:
        return [dataset.dataset_id for dataset in client.list_datasets(project=project.project_id)]


def bigquery_connections(settings: CloudSettings, config: dict[str, Any]) -> list[str]:
    project = clients.project_of(settings, config)
    return [connection.name.split("/")[-1] for connection in clients.bigquery_connections(settings, project)]


def snowflake_table_to_csv(settings: CloudSettings, config: dict[str, Any]) -> str | None:
    table = str(config["table"])
    with clients.snowflake(
        settings, database=config["database"], schema=config.get("schema", "PUBLIC")
    ) as connection:
        cursor = connection.cursor()
        try:
            cursor.execute(f'SELECT * FROM "{table}"' if "-" in table else f"SELECT * FROM {table}")
        except Exception as exc:  # no such table: None, as the release
            logger.info("snowflake_table_to_csv: %s", exc)
            return None
        headers = [column.name for column in cursor.description] if config.get("include_header", True) else []
        return _rows_csv(cursor.fetchall(), headers)


def snowflake_execution_result(settings: CloudSettings, config: dict[str, Any]) -> str | None:
    """A command's (or one-statement script's) result: CSV text with `dest`, else the rows joined by `,`
    and newlines (`return_string`)."""
    sql = (
        Path(config["sql_script"]).read_text(encoding="utf-8")
        if config.get("sql_script")
        else config["sql_command"]
    )
    include_header = config.get("include_header", True)
    with clients.snowflake(settings) as connection:
        cursor = connection.cursor()
        try:
            cursor.execute(sql)
        except Exception as exc:
            logger.info("snowflake_execution_result: %s", exc)
            return None
        headers = [column.name for column in cursor.description] if include_header else []
        rows = cursor.fetchall()
    if config.get("dest") is not None:
        return _rows_csv(rows, headers)
    result: list[Any] = ([headers] if include_header else []) + list(rows)
    if config.get("return_string", True):
        return "\n".join(",".join(str(cell) for cell in row) for row in result)
    return str(result)


def snowflake_database_schema_to_csv(settings: CloudSettings, config: dict[str, Any]) -> str:
    with_type = bool(config.get("include_type", False))
    headers = ["database", "schema", "table", "column", *(["type"] if with_type else [])]
    databases = config["database"] if isinstance(config["database"], list) else [config["database"]]
    schema = config.get("schema", "PUBLIC")
    rows: list[Any] = []
    with clients.snowflake(settings) as connection:
        cursor = connection.cursor()
        for index, database in enumerate(databases):
            current = schema[index] if isinstance(schema, list) else schema
            cursor.execute(f"USE DATABASE {database}")
            rows += cursor.execute(
                f"SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME{', DATA_TYPE' if with_type else ''} "
                f"FROM {database}.INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = '{current}' "
                "ORDER BY TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME"
            ).fetchall()
    return _rows_csv(rows, headers)


def snowflake_function_result(settings: CloudSettings, config: dict[str, Any]) -> Any:
    database = config["database"]
    with clients.snowflake(settings, database=database, schema=config.get("schema", "PUBLIC")) as connection:
        cursor = connection.cursor()
        cursor.execute(f"ALTER ACCOUNT SET EVENT_TABLE = {database}.public.{config['table']}")
        cursor.execute("ALTER SESSION SET LOG_LEVEL = INFO")
        cursor.execute(f"SELECT {config['function']}()")
        return cursor.fetchone()[0]


def snowflake_log_message(settings: CloudSettings, config: dict[str, Any]) -> dict[str, str] | None:
    """The first log record of the logger (the release polls three times a minute apart: event tables
    fill late; here once, then after the other getters, see `collect`)."""
    database = config["database"]
    with clients.snowflake(settings, database=database, schema=config.get("schema", "PUBLIC")) as connection:
        row = (
            connection.cursor()
            .execute(
                f"SELECT RECORD['severity_text'], VALUE FROM {database}.public.{config['table']} "
                f"WHERE RECORD_TYPE = 'LOG' AND SCOPE['name'] = '{config['logger']}'"
            )
            .fetchone()
        )
    if row is None:
        return None
    return {"severity": str(row[0]).strip('"'), "message": str(row[1]).strip('"')}


def snowflake_user_info(settings: CloudSettings, config: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"ROLE": ["PUBLIC"]}
    with clients.snowflake(settings) as connection:
        cursor = connection.cursor()
        try:
            for row in cursor.execute(f"DESC USER {config['username']}").fetchall():
                if str(row[0]).upper() != "PASSWORD":
                    found[str(row[0]).upper()] = str(row[1])
            found["ROLE"] += [
                str(row[1]) for row in cursor.execute(f"SHOW GRANTS TO USER {config['username']}").fetchall()
            ]
        except Exception as exc:
            logger.info("snowflake_user_info: %s", exc)
    return found


GETTERS: dict[str, Getter] = {
    "bigquery_table_to_csv": bigquery_table_to_csv,
    "bigquery_sql_result_to_csv": bigquery_sql_result_to_csv,
    "bigquery_datasets": bigquery_datasets,
    "bigquery_connections": bigquery_connections,
    "snowflake_table_to_csv": snowflake_table_to_csv,
    "snowflake_execution_result": snowflake_execution_result,
    "snowflake_database_schema_to_csv": snowflake_database_schema_to_csv,
    "snowflake_function_result": snowflake_function_result,
    "snowflake_log_message": snowflake_log_message,
    "snowflake_user_info": snowflake_user_info,
}
PROVIDER_OF = {name: name.split("_", 1)[0] for name in GETTERS}


def collect(settings: CloudSettings, getters: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each getter's result by its key; an error inside one is its result's absence (None), as the
    release's getters log and return None."""
    results: dict[str, Any] = {}
    for key, config in getters.items():
        try:
            results[key] = GETTERS[str(config["type"])](settings, config)
        except Exception as exc:
            logger.info("%s failed: %s", config["type"], exc)
            results[key] = None
    return results
