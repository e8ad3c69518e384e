"""Airflow's connections to Docker's host address, made to reach the sample's own servers.

The official Astro containers reach the VM's PostgreSQL at 172.17.0.1, Docker's bridge address for the
host, and tasks name it in their connections. Here Airflow runs on the sandbox's loopback, which has no
such address. This secrets backend, first in Airflow's lookup (AIRFLOW__SECRETS__BACKEND, set by
appservices.airflow_env), hands out a connection stored with that host as the same connection on
127.0.0.1; anything else falls through to Airflow's own lookup. The stored connection is unchanged (the
UI and `airflow connections list` show what was saved). Imported by Airflow's processes from this folder.
"""

from __future__ import annotations

from airflow.models.connection import Connection
from airflow.secrets.metastore import MetastoreBackend

DOCKER_HOST = "172.17.0.1"
SANDBOX_HOST = "127.0.0.1"


class DockerHostConnections(MetastoreBackend):
    def get_connection(self, conn_id: str, session=None) -> Connection | None:  # type: ignore[override]
        stored = (
            super().get_connection(conn_id) if session is None else super().get_connection(conn_id, session)
        )
        if stored is None or stored.host != DOCKER_HOST:
            return None  # Airflow's next backends (variables, the metastore) answer as usual
        return Connection(
            conn_id=stored.conn_id, conn_type=stored.conn_type, description=stored.description, host=SANDBOX_HOST,
            login=stored.login, password=stored.password, schema=stored.schema, port=stored.port, extra=stored.extra,
        )  # fmt: skip

    def get_variable(self, key: str) -> str | None:
        return None  # variables: Airflow's own lookup

    def get_config(self, key: str) -> str | None:
        return None
