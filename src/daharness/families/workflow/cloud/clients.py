"""The providers' own client libraries (the `cloud` extra), made from the settings: the harness's side of
the setup steps and the getters, on the host. An emulated provider is the same client with its endpoint.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from daharness.families.workflow.cloud.settings import CloudSettings, GoogleProject

SCOPES = (
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/drive",
    "https://www.googleapis.com/auth/bigquery",
)
# a statement that hangs (an emulator retrying what it does not know) must not hold a sample forever
SNOWFLAKE_TIMEOUTS = {"login_timeout": 60, "network_timeout": 300, "socket_timeout": 300}


def project_of(settings: CloudSettings, config: dict[str, Any]) -> GoogleProject:
    """The project a step or getter names (`project_name`, else `project_index`), as the release picks it."""
    if "project_name" in config:
        return settings.project(name=str(config["project_name"]))
    return settings.project(index=int(config.get("project_index", 0)))


@contextlib.contextmanager
def bigquery(settings: CloudSettings, project: GoogleProject) -> Iterator[Any]:
    from google.cloud import bigquery as bq
    from google.oauth2 import service_account

    credentials = service_account.Credentials.from_service_account_file(
        str(settings.keyfile(project)), scopes=list(SCOPES)
    )
    options = {"api_endpoint": project.api_endpoint} if project.api_endpoint else None
    client = bq.Client(project=project.project_id, credentials=credentials, client_options=options)
    try:
        yield client
    finally:
        client.close()


@contextlib.contextmanager
def snowflake(settings: CloudSettings, **session: Any) -> Iterator[Any]:
    """A Snowflake connection (`session`: database, schema), closed after the block."""
    from snowflake import connector

    account = settings.snowflake
    if account is None:
        raise KeyError(f"no Snowflake account in {settings.folder}")
    connection = connector.connect(**account.connect_arguments(), **SNOWFLAKE_TIMEOUTS, **session)
    try:
        yield connection
    finally:
        connection.close()


def bigquery_connections(settings: CloudSettings, project: GoogleProject) -> list[Any]:
    """The project's external connections (BigQuery Connection API; the release lists those in `us`)."""
    from google.cloud import bigquery_connection_v1 as connections
    from google.oauth2 import service_account

    credentials = service_account.Credentials.from_service_account_file(str(settings.keyfile(project)))
    client = connections.ConnectionServiceClient(credentials=credentials)
    parent = f"projects/{project.project_id}/locations/us"
    return list(
        client.list_connections(request=connections.ListConnectionsRequest(parent=parent, page_size=10))
    )
