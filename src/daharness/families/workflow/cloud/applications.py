"""The hosts each cloud application of Spider2-V needs, which the egress proxy allows a task's sandbox to
reach and nothing else (`egress.py`). A task needs the applications its setup and checks name:
`bigquery` (the REST API, its token service and its sibling APIs), `bigquery-console` (the web console in
the desktop's browser, with Google's sign-in), `snowflake` (the account's API and its stages), and
`snowflake-console` (Snowsight). With emulated accounts, an application is its emulator's address only.
"""

from __future__ import annotations

import json
from typing import Any

from daharness.families.workflow.cloud.egress import EgressPolicy, Route
from daharness.families.workflow.cloud.settings import CloudSettings, endpoint_address

HTTPS = 443
# each application's hosts on the internet (port 443); `*.` names every subdomain
HOSTS: dict[str, tuple[str, ...]] = {
    "bigquery": (
        "bigquery.googleapis.com", "bigquerystorage.googleapis.com", "bigqueryconnection.googleapis.com",
        "oauth2.googleapis.com", "www.googleapis.com",
    ),
    "bigquery-console": (
        "console.cloud.google.com", "accounts.google.com", "*.google.com", "*.gstatic.com", "*.googleapis.com",
        "*.googleusercontent.com", "*.cloud.google.com",
    ),
    "snowflake": ("*.snowflakecomputing.com", "*.s3.amazonaws.com", "*.s3.*.amazonaws.com"),
    "snowflake-console": ("app.snowflake.com", "*.snowflake.com", "*.snowflakecomputing.com"),
}  # fmt: skip
PROVIDER = {"bigquery": "bigquery", "bigquery-console": "bigquery", "snowflake": "snowflake",
            "snowflake-console": "snowflake"}  # fmt: skip


def policy(applications: frozenset[str], settings: CloudSettings) -> EgressPolicy:
    """The routes of the applications, with the settings' emulators in place of their providers'
    hosts (an emulated provider has no console: its console application has no route)."""
    routes: list[Route] = []
    for application in sorted(applications):
        local = _emulator_routes(application, settings)
        if local is not None:
            routes += local
        else:
            routes += [Route(application, host, HTTPS) for host in HOSTS[application]]
    return EgressPolicy(tuple(dict.fromkeys(routes)))


def _emulator_routes(application: str, settings: CloudSettings) -> list[Route] | None:
    if PROVIDER[application] == "bigquery" and settings.bigquery_emulated:
        if application.endswith("-console"):
            return []
        routes = []
        for project in settings.projects:
            for url in (project.api_endpoint, _token_uri(settings, project)):
                if url:
                    host, port = endpoint_address(url)
                    routes.append(Route("bigquery (emulator)", host, port, (host, port)))
        return routes
    if PROVIDER[application] == "snowflake" and settings.snowflake_emulated:
        account = settings.snowflake
        assert account is not None and account.host is not None
        if application.endswith("-console"):
            return []
        port = account.port or (443 if account.protocol != "http" else 80)
        return [Route("snowflake (emulator)", account.host, port, (account.host, port))]
    return None


def _token_uri(settings: CloudSettings, project: Any) -> str | None:
    """An emulated project's token service, where its key file sends the client for a token."""
    try:
        uri = json.loads(settings.keyfile(project).read_text(encoding="utf-8")).get("token_uri")
    except (OSError, ValueError):
        return None
    return uri if isinstance(uri, str) and uri.startswith("http://") else None


def describe_egress(settings: CloudSettings | None = None) -> dict[str, list[str]]:
    """`daharness doctor`'s section: each application and the host:port list its tasks may reach (with
    `settings`, the emulators in place of the providers they emulate)."""
    if settings is None:
        return {application: [f"{host}:{HTTPS}" for host in hosts] for application, hosts in HOSTS.items()}
    shown: dict[str, list[str]] = {}
    for route in policy(frozenset(HOSTS), settings).routes:
        target = f" -> {route.target[0]}:{route.target[1]}" if route.target else ""
        shown.setdefault(route.application, []).append(f"{route.host}:{route.port}{target}")
    return shown


def describe_cloud() -> dict[str, object]:
    """`daharness doctor`'s cloud section: the hosts each application may reach, and whether the local
    emulators (`--cloud-settings local`) can run here, with the reason when not."""
    from daharness.families.workflow.cloud import emulators

    return {
        "applications": describe_egress(),
        "emulators": {
            provider: {
                "available": emulators.missing(provider) is None,
                "problem": emulators.missing(provider),
            }
            for provider in ("bigquery", "snowflake")
        },
    }
