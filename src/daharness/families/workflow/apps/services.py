"""The applications' services around the agent, run by the workflow family for Dagster, Airflow and
Superset tasks.

Before the setup, the sample's database server starts (the VM runs it as a system service); the
setup's own commands (`astro dev start`, `docker compose up`, `dagster dev`) start the applications
through the stand-ins, and each official `*_webui_init` step waits for its service's health. At the
end of the setup the harness notes which services run (`appservices.py running`) in its scratch
folder, out of the agent's reach.

After the agent, every process of the sandbox is stopped (the workflow family's rule: nothing the
agent left running may touch the checks), then exactly the services the setup started are started
again from their data, from the harness's list, for the checks to ask: a server the agent started
itself is not (a task whose check needs one is unsupported), `airflow_settings.yaml` is not loaded
again (only an `astro dev restart` of the agent's loads it), Superset's configuration is the
harness's. What the agent did through the services (their metadata databases) stays: that is the
state the checks read. See docs/apps.md for what an agent could still forge there.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from daharness.core.backend import SandboxBackend
from daharness.core.errors import InfrastructureError
from daharness.families.workflow.apps import APP_STEP_TIMEOUT_S, DATABASES

_RUNNING = "app-services.json"
_SERVICES = 'python3 "$(command -v appservices.py)"'


def _run(box: SandboxBackend, arguments: str) -> tuple[bool, str]:
    observation = box.bash(f"cd ~ && {_SERVICES} {arguments}", timeout=APP_STEP_TIMEOUT_S)
    ok = observation.exit_status == 0 and not observation.timed_out and observation.error is None
    return ok, (observation.stdout if ok else (observation.stderr or observation.stdout)).strip()


def start_system_services(box: SandboxBackend, app: str) -> None:
    """What the VM has running before any script: its database server (PostgreSQL, or MariaDB for
    Dagster's tasks), and here the proxy to the web API stand-ins that replaces its internet."""
    for service in (DATABASES[app], "webapis"):
        ok, output = _run(box, f"start {service}")
        if not ok:
            raise InfrastructureError(f"{service} of the sample did not start: {output[-1500:]}")


def wait_healthy(box: SandboxBackend, service: str) -> None:
    """An official `*_webui_init` step: the service must answer its health check in time."""
    ok, output = _run(box, f"wait {service}")
    if not ok:
        raise InfrastructureError(f"the setup's {service} is not up: {output[-1500:]}")


def note_running(box: SandboxBackend, scratch: Path) -> list[dict]:
    """After the setup: which services run, kept where the agent cannot write."""
    ok, output = _run(box, "running")
    listed = json.loads(output) if ok else []
    (scratch / _RUNNING).write_text(json.dumps(listed))
    return listed


def note_agent_servers(box: SandboxBackend, scratch: Path) -> list[dict]:
    """After the agent, before its processes are stopped: the application servers it started on ports
    the setup's services do not use (a task may ask for `dagster dev -p 8004`). They are started again
    for the checks like the setup's: the same folder and arguments, the harness's copy of the
    application, so that whatever answered there for the agent, the checks ask the real server."""
    path = scratch / _RUNNING
    listed = json.loads(path.read_text()) if path.is_file() else []
    ok, output = _run(box, f"started-besides {shlex.quote(json.dumps(listed))}")
    added = json.loads(output) if ok else []
    if added:
        path.write_text(json.dumps(listed + added))
    return added


def restart_for_checks(box: SandboxBackend, scratch: Path) -> tuple[bool, str]:
    """After every process was stopped: the setup's services again, for the checks. A failure is the
    agent's doing (it can write their data) as much as the harness's: the checks then see no service."""
    path = scratch / _RUNNING
    listed = json.loads(path.read_text()) if path.is_file() else []
    if not listed:
        return True, ""
    return _run(box, f"restart {shlex.quote(json.dumps(listed))}")
