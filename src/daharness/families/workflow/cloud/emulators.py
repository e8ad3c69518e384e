"""Local emulators served as if they were the providers, for running the warehouse tasks without an account
(`--cloud-settings local`, and the built-in suite's default), and for the tests: BigQuery's REST API from
`bqemulator` (DuckDB-backed; an environment of its own made by scripts/setup-apps.sh, as its pins conflict
with fakesnow's) and Snowflake from fakesnow's server (`snowflake_server.py`, in this Python: the test
extra installs it), both on the host's loopback, and a token service that hands the BigQuery client a
token for the emulator's service account. The providers' own client libraries talk to them unchanged but
for the endpoint, which the settings folder written here names in the release's layout
(`settings.py`): a service-account key file whose `token_uri` is the token service, a project whose
`api_endpoint` is the emulator, a Snowflake account with its `host`, `port` and `protocol`.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from daharness.core.errors import InfrastructureError
from daharness.families.workflow.apps import apps_dir
from daharness.families.workflow.cloud.settings import GCP_CONFIG, SNOWFLAKE, CloudSettings, load_settings
from daharness.sandbox.once import computed_once
from daharness.sandbox.scratch import process_scratch
from daharness.sandbox.workspace import remove_tree

LOCAL = "local"  # --cloud-settings local: these emulators, started by the harness
PROJECT_NAME = "bigquery-project"  # the name the release's tasks give their project
PROJECT_ID = "daharness-local"
SNOWFLAKE_ACCOUNT = "https://daharnesslocal.snowflakecomputing.com"
_START_TIMEOUT_S = 120.0


def bqemulator_command() -> Path:
    return apps_dir() / "bqemulator" / "bin" / "bqemulator"


def missing(provider: str) -> str | None:
    """Why the provider's local emulator cannot run here, or None."""
    if provider == "bigquery":
        if not bqemulator_command().exists():
            return f"needs BigQuery's local emulator: run scripts/setup-apps.sh bqemulator ({bqemulator_command()} is missing)"
        if importlib.util.find_spec("google.cloud.bigquery") is None:
            return "needs google-cloud-bigquery: pip install 'daharness[cloud]'"
        return None
    if importlib.util.find_spec("snowflake.connector") is None:
        return "needs snowflake-connector-python: pip install 'daharness[cloud]'"
    if importlib.util.find_spec("fakesnow") is None:
        return "needs Snowflake's local emulator: pip install 'fakesnow[server]' (the test extra has it)"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _TokenHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(
            {"access_token": "daharness-local-emulator", "expires_in": 3600, "token_type": "Bearer"}
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


class LocalEmulators:
    """The emulators of the providers asked for, started on free ports, and a settings folder naming them."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or Path(tempfile.mkdtemp(prefix="daharness-cloud-", dir=process_scratch()))
        self._processes: list[subprocess.Popen[bytes]] = []
        self._token_server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()
        self.started: set[str] = set()

    def ensure(self, *providers: str) -> CloudSettings:
        """Start the providers' emulators not yet running; the settings for what runs."""
        with self._lock:
            for provider in providers:
                if provider not in self.started:
                    if problem := missing(provider):
                        raise InfrastructureError(problem)
                    (self._start_bigquery if provider == "bigquery" else self._start_snowflake)()
                    self.started.add(provider)
            return load_settings(self.folder)

    def _start_bigquery(self) -> None:
        rest, grpc = _free_port(), _free_port()
        home = self.folder / "bqemulator-home"
        _link_spatial_extension(home)
        log = (self.folder / "bqemulator.log").open("wb")
        process = subprocess.Popen(
            [str(bqemulator_command()), "start", "--rest-port", str(rest), "--grpc-port", str(grpc),
             "--project", PROJECT_ID, "--ephemeral", "--no-admin", "--log-level", "warning"],
            stdout=log, stderr=subprocess.STDOUT, env={**_plain_env(), "HOME": str(home)},
            start_new_session=True,
        )  # fmt: skip
        self._processes.append(process)
        _wait_for(
            lambda: _answers(f"http://127.0.0.1:{rest}/healthz"), process, self.folder / "bqemulator.log"
        )
        token = self._start_token_service()
        keyfile = self.folder / "google" / f"{PROJECT_ID}.json"
        keyfile.parent.mkdir(parents=True, exist_ok=True)
        keyfile.write_text(json.dumps(_service_account_key(f"http://127.0.0.1:{token}/token"), indent=2))
        config = [{
            "project_name": PROJECT_NAME, "project_id": PROJECT_ID, "keyfile_path": str(keyfile),
            "email": "daharness@localhost", "api_endpoint": f"http://127.0.0.1:{rest}",
        }]  # fmt: skip
        (self.folder / GCP_CONFIG).write_text(json.dumps(config, indent=2))

    def _start_token_service(self) -> int:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _TokenHandler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True, name="daharness-token").start()
        self._token_server = server
        return int(server.server_address[1])

    def _start_snowflake(self) -> None:
        port = _free_port()
        log = (self.folder / "snowflake.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "daharness.families.workflow.cloud.snowflake_server", str(port)],
            stdout=log, stderr=subprocess.STDOUT, env=_plain_env(), start_new_session=True,
        )  # fmt: skip
        self._processes.append(process)
        _wait_for(lambda: _listens(port), process, self.folder / "snowflake.log")
        account = {"account": SNOWFLAKE_ACCOUNT, "user": "DAHARNESS", "password": "local",
                   "host": "127.0.0.1", "port": port, "protocol": "http"}  # fmt: skip
        (self.folder / SNOWFLAKE).parent.mkdir(parents=True, exist_ok=True)
        (self.folder / SNOWFLAKE).write_text(json.dumps(account, indent=2))

    def stop(self) -> None:
        for process in self._processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 9)
            process.wait()
        self._processes.clear()
        if self._token_server is not None:
            self._token_server.shutdown()
            self._token_server.server_close()
        remove_tree(self.folder)

    def __enter__(self) -> LocalEmulators:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def local_emulators(*providers: str) -> Iterator[CloudSettings]:
    """The providers' emulators for the `with` block, and their settings."""
    with LocalEmulators() as emulators:
        yield emulators.ensure(*providers)


@computed_once
def process_emulators() -> LocalEmulators:
    """This process's emulators for `--cloud-settings local` (stopped when it exits)."""
    emulators = LocalEmulators()
    atexit.register(emulators.stop)
    return emulators


def _plain_env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
    return {key: os.environ[key] for key in keep if key in os.environ}


def _link_spatial_extension(home: Path) -> None:
    """bqemulator loads DuckDB's `spatial` at start, which DuckDB would download: the copy from PyPI (in the
    emulator's environment) is put where DuckDB looks first, the extension folder under HOME."""
    python = bqemulator_command().parent / "python"
    found = subprocess.run(
        [str(python), "-c", "import duckdb, duckdb_extension_spatial as s, pathlib; "
         "p = pathlib.Path(s.__file__).parent / 'extensions' / f'v{duckdb.__version__}' / 'spatial.duckdb_extension'; "
         "print(duckdb.__version__, duckdb.execute('PRAGMA platform').fetchone()[0], p)"],
        capture_output=True, text=True, env=_plain_env(),
    )  # fmt: skip
    if found.returncode != 0:
        raise InfrastructureError(
            f"BigQuery's emulator has no DuckDB spatial extension: {found.stderr[-500:]}"
        )
    version, platform, path = found.stdout.split()
    target = home / ".duckdb" / "extensions" / f"v{version}" / platform
    target.mkdir(parents=True, exist_ok=True)
    link = target / "spatial.duckdb_extension"
    if not link.exists():
        link.symlink_to(path)


def _service_account_key(token_uri: str) -> dict[str, str]:
    """A service account's key file as Google issues them, for the emulator: a new RSA key (the client
    signs its token request with it), the token service here."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    email = f"daharness@{PROJECT_ID}.iam.gserviceaccount.com"
    return {
        "type": "service_account", "project_id": PROJECT_ID, "private_key_id": "local", "private_key": pem,
        "client_email": email, "client_id": "0", "token_uri": token_uri,
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
    }  # fmt: skip


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def _wait_for(ready: object, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if ready():  # type: ignore[operator]
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
    raise InfrastructureError(f"a local emulator did not start ({log.name}): {tail}")
