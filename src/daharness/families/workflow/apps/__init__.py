"""Spider2-V's data applications (Dagster, Airflow, Superset) as services in a workflow task's sandbox.

A task whose snapshot is one of them gets, besides the workflow family's stand-ins: the application's
environments (made by scripts/setup-apps.sh, mounted read-only), `conda.sh` that activates them, the
`astro` and `docker` stand-ins that run Airflow and Superset locally (`standins/`), the official
containers' host names on its loopback, its user named `user`, a state folder for the services'
data that outlives the sandbox's restarts, and local stand-ins of the public web APIs the tasks call
(`web_standins.py`). The sample's database servers start before the setup;
the official `*_webui_init` setup steps become health checks (a clear error when a service does not
come up). See `services.py` for what happens around the agent.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from pathlib import Path

from daharness.core.family import SandboxAdditions
from daharness.core.task import Task
from daharness.families.workflow.apps import web_standins

APPS = ("dagster", "airflow", "superset")
STANDINS = Path(__file__).parent / "standins"
STATE_DIR = "/var/lib/daharness-apps"
# the official setup's browser steps that log into a service: here, that service's health check
HEALTH_STEPS = {
    "dagster_webui_init": "dagster",
    "astro_webui_init": "airflow",
    "astro_refresh_page": "airflow",
    "superset_webui_init": "superset",
}
# the ports of the services the harness runs (checks may ask them after the agent)
SERVICE_PORTS = frozenset({3000, 8080, 8088})
# applications whose servers the agent may start on other ports (`dagster dev -p 8004`): the harness starts
# them again for the checks, from its own copy of the application (services.note_agent_servers)
AGENT_SERVERS = frozenset({"dagster"})
HOSTS = "127.0.0.1 localhost db superset_db postgres\n::1 localhost\n"
# each application's environments (Dagster's snapshot carries MariaDB, the others PostgreSQL)
ENVIRONMENTS = {"dagster": ("dagster",), "airflow": ("airflow", "astro-dbt"), "superset": ("superset",)}
# the servers the VM runs as system services, started before the task's setup
DATABASES = {"dagster": "mariadb", "airflow": "postgres", "superset": "postgres"}
# what the official snapshot's home holds for each application (its compose project, DAGSTER_HOME)
HOME_FILES = {
    "dagster": {".dagster/dagster.yaml": ""},
    "airflow": {"projects/.keep": ""},
    "superset": {
        "projects/superset/docker-compose-image-tag.yml": (
            "# Superset's compose project: the local stand-in of `docker compose` runs superset_app and superset_db\n"
            "services:\n  superset:\n  db:\n"
        )
    },
}
APP_STEP_TIMEOUT_S = 600.0  # a setup or check script: servers start, CLIs load the project's code
# servers and their threads: Airflow's scheduler, executor and webserver, Dagster's code servers
EXTRA_PROCESSES = 512


def apps_dir() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "daharness/apps"
    return Path(os.environ.get("DAHARNESS_APPS", default))


def app_of(task: Task) -> str | None:
    """The application whose services the task needs, by its official snapshot."""
    snapshot = task.gold.data.get("official", {}).get("snapshot") or task.metadata.subcategory
    return snapshot if snapshot in APPS else None


def missing(app: str) -> str | None:
    """Why the application cannot run on this machine, or None."""
    if importlib.util.find_spec("cryptography") is None:  # the web API stand-ins' certificates
        return "needs the cryptography package: pip install 'daharness[workflow]'"
    for name in ENVIRONMENTS[app]:
        if not (apps_dir() / name / "bin" / "python").exists():
            return f"needs the {app} environment: run scripts/setup-apps.sh ({apps_dir() / name} is missing)"
    if DATABASES[app] == "postgres" and not (apps_dir() / "templates" / "pgdata" / "PG_VERSION").exists():
        return "needs the PostgreSQL template: run scripts/setup-apps.sh"
    return None


def installed(app: str, package: str) -> bool:
    """Whether a Python package is installed in one of the application's environments."""
    wanted = re.sub(r"[-_.]+", "_", package).lower()
    return wanted in _distributions(app)


@functools.cache
def _distributions(app: str) -> frozenset[str]:
    names = set()
    for env in ENVIRONMENTS[app]:
        for info in (apps_dir() / env).glob("lib/python*/site-packages/*.dist-info"):
            names.add(re.sub(r"[-_.]+", "_", info.name.removesuffix(".dist-info").rsplit("-", 1)[0]).lower())
    return frozenset(names)


@functools.cache
def conda_sh() -> str:
    return (STANDINS / "conda.sh").read_text(encoding="utf-8")


def app_additions(app: str, base: SandboxAdditions, workdir: str) -> SandboxAdditions:
    """The family's additions, with what the application's services need."""
    env = {
        **base.env, "DAHARNESS_APPS": str(apps_dir()), "DAHARNESS_APP_STATE": STATE_DIR,
        "USER": "user", "LOGNAME": "user", "LANG": "C.UTF-8", **web_standins.proxy_env(),
    }  # fmt: skip
    return SandboxAdditions(
        env=env,
        path_dirs=(STANDINS, *base.path_dirs),  # its sudo first
        home_is_workdir=base.home_is_workdir,
        read_only_dirs=(apps_dir().resolve(),),
        files={"/etc/hosts": HOSTS, **web_standins.certificates().files()},
        user_name="user",
        run_dirs=("/run/postgresql", "/run/mysqld"),
        state_dir=STATE_DIR,
        links={"/var/run": "/run", "/var/lib/mysql-files": f"{STATE_DIR}/mysql-files"},
        extra_processes=EXTRA_PROCESSES,
        step_timeout_s=APP_STEP_TIMEOUT_S,
    )


def describe_apps() -> dict[str, dict[str, object]]:
    """`daharness doctor`'s view: each application's environments, whether its tasks can run, and why not."""
    found: dict[str, dict[str, object]] = {}
    for app in APPS:
        problem = missing(app)
        found[app] = {
            "available": problem is None,
            "environments": {name: str(apps_dir() / name) for name in ENVIRONMENTS[app]},
            "database": DATABASES[app],
            "problem": problem,
        }
    return found
