"""What the workflow family does around the agent for a BigQuery or Snowflake task (issue 44).

- The sandbox (`sandbox_additions`): the folder of the egress proxy's socket, mounted read-only; the
  forwarder's script on PATH; HTTPS_PROXY to the forwarder. An emulated provider (no secret: the
  emulator's own key) also gets its endpoint (BIGQUERY_EMULATOR_HOST) and, where the release signs the
  agent into the provider's console, the emulator's credentials where the client libraries look
  (GOOGLE_APPLICATION_CREDENTIALS, SNOWFLAKE_HOME's connections.toml). A real account's credentials never
  enter the sandbox, but a key file the task's own setup copies to the desktop.
- Before the agent (`prepare`): the forwarder starts; the task's `bigquery_init` / `snowflake_init` run
  on the host with the client libraries (`setup.py`), before the task's other setup steps.
- After the agent's processes are stopped (`collect`): the getters ask the accounts (`getters.py`); their
  results go into the submission's evidence for the scorers.

The setup empties a project or drops databases of the account, so two samples with the same accounts
never overlap: a lock of the accounts is held from the setup to the getters (a lock file for a settings
folder, which other daharness processes on the machine respect too).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import shlex
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

from daharness.core.backend import SandboxBackend
from daharness.core.errors import InfrastructureError
from daharness.core.family import SandboxAdditions
from daharness.core.task import Task
from daharness.families.workflow.cloud import applications, egress, emulators, getters, setup
from daharness.families.workflow.cloud.settings import CloudSettings, load_settings

STANDINS = Path(__file__).parent / "standins"
PROXY_PORT = 3129  # the forwarder's HTTP proxy on the sandbox's loopback (the web stand-ins' is 3128)
CONFIG_DIR = "/run/daharness-cloud"  # an emulated provider's credentials for the agent (read-only)
NO_PROXY = "localhost,127.0.0.1,::1"  # the emulators' ports are the forwarder's own, on the loopback
_LOCK_WAIT_S = 3600.0


def cloud_of(task: Task) -> dict[str, Any] | None:
    """What the loader found of the task's clouds (`tasks.CloudNeeds.as_data`), or None."""
    found = task.gold.data.get("cloud")
    return found if isinstance(found, dict) else None


def settings_of(data: dict[str, Any]) -> CloudSettings:
    if data["settings"] == emulators.LOCAL:
        return emulators.process_emulators().ensure(*data["providers"])
    return load_settings(Path(data["settings"]))


def _proxy(data: dict[str, Any], settings: CloudSettings) -> egress.EgressProxy:
    return egress.proxy_for(applications.policy(frozenset(data["applications"]), settings))


def sandbox_additions(task: Task, base: SandboxAdditions) -> SandboxAdditions:
    data = cloud_of(task)
    if data is None:
        return base
    settings = settings_of(data)
    proxy = _proxy(data, settings)
    env = {**base.env, **{name: f"http://127.0.0.1:{PROXY_PORT}" for name in
                           ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")}}  # fmt: skip
    env |= {"NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY}
    files: dict[str, str] = {}
    emulated, logins = set(data["emulated"]), set(data["logins"])
    if "bigquery" in emulated:
        project = settings.projects[0]
        env |= {
            "BIGQUERY_EMULATOR_HOST": str(project.api_endpoint),
            "GOOGLE_CLOUD_PROJECT": project.project_id,
        }
        if "bigquery" in logins:
            files[f"{CONFIG_DIR}/google/keyfile.json"] = settings.keyfile(project).read_text(encoding="utf-8")
            env["GOOGLE_APPLICATION_CREDENTIALS"] = f"{CONFIG_DIR}/google/keyfile.json"
    if "snowflake" in emulated and "snowflake" in logins and settings.snowflake is not None:
        files[f"{CONFIG_DIR}/snowflake/connections.toml"] = _connections_toml(
            settings.snowflake.connect_arguments()
        )
        env["SNOWFLAKE_HOME"] = f"{CONFIG_DIR}/snowflake"
    return dataclasses.replace(
        base,
        env=env,
        path_dirs=(STANDINS, *base.path_dirs),
        read_only_dirs=(*base.read_only_dirs, proxy.folder),
        files={**base.files, **files},
    )


def _connections_toml(arguments: dict[str, Any]) -> str:
    lines = ["[default]"] + [f"{key} = {json.dumps(value)}" for key, value in arguments.items()]
    return "\n".join(lines) + "\n"


class AccountLock:
    """One sample at a time per accounts: a lock of this process, and for a settings folder a lock file
    that other daharness processes take too."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._thread_lock = threading.Lock()
        self._file: Any = None

    def acquire(self) -> None:
        if not self._thread_lock.acquire(timeout=_LOCK_WAIT_S):
            raise InfrastructureError(f"the cloud accounts {self.spec} stayed busy for {_LOCK_WAIT_S:.0f} s")
        if self.spec != emulators.LOCAL:  # the local emulators are this process's own
            digest = hashlib.sha256(self.spec.encode()).hexdigest()[:16]
            self._file = (Path(tempfile.gettempdir()) / f"daharness-cloud-{digest}.lock").open("w")
            fcntl.flock(self._file, fcntl.LOCK_EX)

    def release(self) -> None:
        if not self._thread_lock.locked():
            return
        if self._file is not None:
            self._file.close()  # closing releases the flock
            self._file = None
        self._thread_lock.release()


_LOCKS: dict[str, AccountLock] = {}
_LOCKS_GUARD = threading.Lock()
_HELD: dict[int, AccountLock] = {}  # id(sandbox) -> the lock its sample holds


def _lock_of(spec: str) -> AccountLock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(spec, AccountLock(spec))


def prepare(task: Task, box: SandboxBackend) -> None:
    """The accounts' setup and the sandbox's way out, before the task's other setup steps."""
    data = cloud_of(task)
    if data is None:
        return
    settings = settings_of(data)
    lock = _lock_of(data["settings"])
    lock.acquire()
    _HELD[id(box)] = lock
    weakref.finalize(box, _release, id(box))  # a sample that ends before `collect` frees the accounts too
    try:
        proxy = _proxy(data, settings)
        tunnels = " ".join(f"{port}={target}" for port, target in sorted(proxy.policy.local_ports.items()))
        started = box.bash(
            f'python3 "$(command -v egress_forwarder.py)" {shlex.quote(str(proxy.socket_path))} {PROXY_PORT} {tunnels}'
        )
        if started.exit_status != 0:
            raise InfrastructureError(
                f"the sandbox's egress forwarder did not start: {started.stderr[-500:]}"
            )
        for step in data["steps"]:
            setup.run_cloud_step(box, settings, step["cloud"], step["parameters"])
    except BaseException:
        _release(id(box))
        raise


def collect(task: Task, box: SandboxBackend) -> dict[str, Any] | None:
    """After the agent's processes are stopped: the getters' results (None for a task without clouds)."""
    data = cloud_of(task)
    if data is None:
        return None
    try:
        return getters.collect(settings_of(data), data["getters"])
    finally:
        _release(id(box))


def _release(box_id: int) -> None:
    lock = _HELD.pop(box_id, None)
    if lock is not None:
        lock.release()
