"""Prototype (phase 1 of issue 25): the data applications of Spider2-V as services of one sample.

Standalone (standard library only, any Python 3.11), so that it runs inside the sandbox, where
daharness itself is not importable. The `astro` and `docker` stand-ins call it; `build-templates` is
run once by scripts/setup-apps.sh. Everything a sample's services write lives under its state folder
($DAHARNESS_APP_STATE); the applications' environments ($DAHARNESS_APPS) are read-only.

  python3 appservices.py build-templates OUTPUT     # once, after the environments are installed
  python3 appservices.py start postgres|mariadb|superset    # inside a sample
  python3 appservices.py start airflow PROJECT_DIR
  python3 appservices.py stop airflow PROJECT_DIR | stop superset | stop all

One PostgreSQL cluster per sample on 127.0.0.1:5432 stands in for both of the official snapshot's
servers: the VM's own (superuser `postgres`; tasks add roles with `sudo -u postgres createuser`) and
Superset's compose service `db` (role and database `superset`, password `superset`). It starts from a
template data folder made at install time that already holds Superset's migrated metadata and the
Airflow metadata schema, so a sample never pays for migrations.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

TEMPLATE_VERSION = 1  # raise when build_templates() changes: scripts/setup-apps.sh then rebuilds them
PG_BIN = Path(os.environ.get("DAHARNESS_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_PORT = 5432
AIRFLOW_PORT = 8080
SUPERSET_PORT = 8088
ADMIN = ("admin", "admin")
TIMEOUTS = {"postgres": 30.0, "airflow": 180.0, "superset": 180.0}  # a loaded 2-core machine
# what Superset's docker-init.sh prints; the official init.sh waits for "Init Step 4/4"
SUPERSET_INIT_LOG = [
    "superset_init  | Init Step 1/4 [Starting] -- Applying DB migrations",
    "superset_init  | Init Step 1/4 [Complete] -- Applying DB migrations",
    "superset_init  | Init Step 2/4 [Starting] -- Setting up admin user ( admin / admin )",
    "superset_init  | Init Step 2/4 [Complete] -- Setting up admin user",
    "superset_init  | Init Step 3/4 [Starting] -- Setting up roles and perms",
    "superset_init  | Init Step 3/4 [Complete] -- Setting up roles and perms",
    "superset_init  | Init Step 4/4 [Starting] -- Loading examples",
    "superset_init  | Init Step 4/4 [Complete] -- Loading examples",
]


class ServiceError(RuntimeError):
    """A service did not come up; the message names it, the time waited and its log's last lines."""


def apps_dir() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "daharness/apps"
    return Path(os.environ.get("DAHARNESS_APPS", default))


def state_dir() -> Path:
    folder = Path(os.environ.get("DAHARNESS_APP_STATE", Path.home() / ".daharness-apps"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def env_bin(app: str, tool: str) -> str:
    path = apps_dir() / app / "bin" / tool
    if not path.exists():
        raise ServiceError(f"{tool} is not installed: run scripts/setup-apps.sh {app}")
    return str(path)


# --- waiting, with a clear error ------------------------------------------------------------------


def tail(log: Path, lines: int = 8) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def wait_until(ready: Callable[[], bool], what: str, timeout: float, log: Path, alive=None) -> float:
    """Seconds until `ready()`; a ServiceError when `timeout` passes or the process `alive` exits."""
    start = time.monotonic()
    while not ready():
        if alive is not None and alive.poll() is not None:
            raise ServiceError(
                f"{what} exited with status {alive.returncode}; last lines of {log}:\n{tail(log)}"
            )
        if time.monotonic() - start > timeout:
            raise ServiceError(
                f"{what} did not come up in {timeout:.0f} s; last lines of {log}:\n{tail(log)}"
            )
        time.sleep(0.2)
    return time.monotonic() - start


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


def http_json(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return json.loads(response.read())
    except (OSError, ValueError):
        return None


def http_text(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode()
    except OSError:
        return None


def spawn(command: list[str], log: Path, env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen:
    """A daemon in a session of its own (so a caller's Ctrl-C or exit leaves it running)."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
            start_new_session=True,
        )  # fmt: skip


def stop_pidfile(pidfile: Path, wait_s: float = 10.0) -> None:
    """SIGTERM the process group recorded in `pidfile`, SIGKILL what is left after `wait_s`."""
    try:
        pid = int(pidfile.read_text())
    except (OSError, ValueError):
        return
    for sig, pause in ((signal.SIGTERM, wait_s), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + pause
        while time.monotonic() < deadline and _group_alive(pid):
            time.sleep(0.1)
        if not _group_alive(pid):
            break
    pidfile.unlink(missing_ok=True)


def _pid_alive(pidfile: Path) -> bool:
    """Whether the process recorded in `pidfile` runs (a zombie does not)."""
    try:
        pid = int(pidfile.read_text())
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        return False
    return state != "Z"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


# --- PostgreSQL --------------------------------------------------------------------------------------


def pg_env() -> dict[str, str]:
    return {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(PG_PORT), "PGUSER": "postgres"}


def psql(sql: str, database: str = "postgres") -> str:
    done = subprocess.run(
        ["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", sql],
        env=pg_env(), capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise ServiceError(f"psql failed on {sql!r}: {done.stderr.strip()}")
    return done.stdout.strip()


def start_postgres(data: Path | None = None, template: Path | None = None) -> float:
    """The sample's cluster, from the install-time template when there is one; seconds it took."""
    start = time.monotonic()
    if port_open(PG_PORT):
        return 0.0
    folder = state_dir() / "postgres"
    data = data or folder / "data"
    template = template if template is not None else apps_dir() / "templates" / "pgdata"
    sockets = pg_socket_dir()
    if not (data / "PG_VERSION").exists():
        if template.is_dir():
            shutil.copytree(template, data, symlinks=True)
        else:
            subprocess.run(
                [str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                 "--locale=C.UTF-8"], check=True, capture_output=True,
            )  # fmt: skip
        data.chmod(0o700)
        (data / "postmaster.pid").unlink(missing_ok=True)  # a template copied from a stopped server has none
        # as the snapshot configures it: Docker's addresses (172.17.0.1, the Airflow tasks' host) log in
        # with a password; loopback and the socket trust, as the VM's sudo -u postgres does
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write("host all all 172.0.0.0/8 scram-sha-256\n")
    log = folder / "postgres.log"
    options = f"-k {sockets} -c listen_addresses='*' -c port={PG_PORT} -c fsync=off"
    done = subprocess.run(
        [str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t",
         str(int(TIMEOUTS["postgres"])), "start"], capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise ServiceError(
            f"PostgreSQL did not start: {done.stdout.strip()}; last lines of {log}:\n{tail(log)}"
        )
    return time.monotonic() - start


def pg_socket_dir() -> Path:
    """Where the server's socket goes: PostgreSQL's default folder when the sandbox gives a writable
    one (as on the VM, `sudo -u postgres psql` finds it there), else the state folder."""
    default = Path("/run/postgresql")
    if default.is_dir() and os.access(default, os.W_OK):
        return default
    folder = state_dir() / "postgres" / "socket"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def stop_postgres() -> None:
    data = state_dir() / "postgres" / "data"
    if (data / "postmaster.pid").exists():
        subprocess.run(
            [str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True
        )


# --- MariaDB (the snapshot's MySQL 8 server) ----------------------------------------------------


MYSQL_SOCKET = Path("/run/mysqld/mysqld.sock")  # Debian's default: the clients and mysqlclient use it
MYSQL_FILES = Path("/var/lib/mysql-files")  # MySQL's secure_file_priv, where INTO OUTFILE writes


def start_mariadb() -> float:
    """The sample's MariaDB on 127.0.0.1:3306 and the default socket (root without a password, as
    `sudo mysql` reaches it on the VM); the sandbox mounts writable folders at both paths above."""
    start = time.monotonic()
    if MYSQL_SOCKET.exists() and port_open(3306):
        return 0.0
    folder = state_dir() / "mariadb"
    Path(os.path.realpath(MYSQL_FILES)).mkdir(parents=True, exist_ok=True)  # may be a link to the state
    data = folder / "data"
    if not (data / "mysql").is_dir():
        run_checked(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--skip-test-db",
                     "--auth-root-authentication-method=normal"], dict(os.environ))  # fmt: skip
    log = folder / "error.log"
    server = spawn(
        ["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={data}", f"--socket={MYSQL_SOCKET}", "--port=3306",
         "--bind-address=127.0.0.1", f"--secure-file-priv={MYSQL_FILES}", f"--pid-file={folder / 'mysqld.pid'}",
         f"--log-error={log}"], folder / "stdout.log", dict(os.environ),
    )  # fmt: skip
    wait_until(
        lambda: MYSQL_SOCKET.exists() and port_open(3306),
        "MariaDB on :3306",
        TIMEOUTS["postgres"],
        log,
        server,
    )
    return time.monotonic() - start


# --- Airflow -------------------------------------------------------------------------------------


def project_key(project: Path) -> str:
    """The name Astro gives a project's containers: the folder name, lower case, then a short hash."""
    name = re.sub(r"[^a-z0-9]", "", project.name.lower()) or "project"
    return f"{name}_{hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:6]}"


def airflow_home(project: Path) -> Path:
    return state_dir() / "airflow" / project_key(project)


def airflow_env(project: Path) -> dict[str, str]:
    """Airflow as Astro's containers run it: the project's folders under AIRFLOW_HOME, LocalExecutor on
    PostgreSQL, no examples, admin/admin, and small pools of processes for a 2-core machine."""
    home = airflow_home(project)
    database = "airflow_" + project_key(project)
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(home / "plugins"),
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"postgresql+psycopg2://postgres@127.0.0.1:{PG_PORT}/{database}",
        "AIRFLOW__DATABASE__LOAD_DEFAULT_CONNECTIONS": "False",
        "AIRFLOW__SCHEDULER__PARSING_PROCESSES": "1",
        # Cosmos parses a dbt project with `dbt ls` at import: 30 s (the default) is too short on 2 cores
        "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT": "120",
        "AIRFLOW__CORE__DAG_FILE_PROCESSOR_TIMEOUT": "180",
        "AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL": "5",
        "AIRFLOW__SCHEDULER__DAG_DIR_LIST_INTERVAL": "5",
        "AIRFLOW__WEBSERVER__WORKERS": "1",
        "AIRFLOW__WEBSERVER__SECRET_KEY": "daharness-local-airflow",
        "AIRFLOW__WEBSERVER__EXPOSE_CONFIG": "True",
        "AIRFLOW__API__AUTH_BACKENDS": "airflow.api.auth.backend.basic_auth,airflow.api.auth.backend.session",
        "AIRFLOW__CORE__ENABLE_XCOM_PICKLING": "True",
        "PATH": f"{apps_dir() / 'airflow' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    return env


def link_project(project: Path, home: Path) -> None:
    """AIRFLOW_HOME as in Astro's image: the project's folders mounted where the container has them,
    and the dbt venv the snapshot's image built (dbt_venv)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "logs").mkdir(exist_ok=True)
    for name in ("dags", "include", "plugins", "tests"):
        (project / name).mkdir(exist_ok=True)
        link = home / name
        if not link.is_symlink():
            link.symlink_to(project / name)
    dbt = apps_dir() / "astro-dbt"
    if dbt.is_dir() and not (home / "dbt_venv").exists():
        (home / "dbt_venv").symlink_to(dbt)


def start_airflow(project: Path, *, settings: bool = True) -> dict[str, float]:
    """Scheduler and webserver over the project, on :8080; seconds of each stage. `settings=False`
    (the harness starting it again for the checks) does not load airflow_settings.yaml: what the agent
    wrote there after `astro dev start` is not in Airflow unless the agent restarted it."""
    project = project.resolve()
    times = {"postgres": start_postgres()}
    home = airflow_home(project)
    link_project(project, home)
    env = airflow_env(project)
    database = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].rsplit("/", 1)[1]
    t0 = time.monotonic()
    if not psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}'"):
        psql(f'CREATE DATABASE "{database}" TEMPLATE airflow_template')
    times["metadata"] = time.monotonic() - t0
    t0 = time.monotonic()
    if settings:
        apply_settings(project, env)
    times["settings"] = time.monotonic() - t0
    t0 = time.monotonic()
    remove_stale_pidfiles(home)
    scheduler = spawn([env_bin("airflow", "airflow"), "scheduler"], home / "scheduler.log", env, cwd=home)
    (home / "scheduler.pid").write_text(str(scheduler.pid))
    webserver = spawn(airflow_webserver_command(home, env), home / "webserver.log", env, cwd=home)
    (home / "webserver.pid").write_text(str(webserver.pid))

    def healthy() -> bool:
        health = http_json(f"http://127.0.0.1:{AIRFLOW_PORT}/health") or {}
        return all(health.get(part, {}).get("status") == "healthy" for part in ("metadatabase", "scheduler"))

    wait_until(
        healthy,
        "Airflow (webserver :8080 and scheduler)",
        TIMEOUTS["airflow"],
        home / "webserver.log",
        webserver,
    )
    times["webserver+scheduler"] = time.monotonic() - t0
    return times


def airflow_webserver_command(home: Path, env: dict[str, str]) -> list[str]:
    """Gunicorn as `airflow webserver -p 8080` starts it under `env` (airflow_env), without that command
    itself: it only imports Airflow again (1.4 CPU-seconds a start) to watch the workers, which Airflow's
    default refresh interval (100 minutes) never replaces within a sample."""
    workers = env["AIRFLOW__WEBSERVER__WORKERS"]
    return [
        env_bin("airflow", "python"), "-m", "gunicorn", "--workers", workers, "--worker-class", "sync",
        "--timeout", "120", "--bind", f"0.0.0.0:{AIRFLOW_PORT}", "--name", "airflow-webserver",
        "--pid", str(home / "airflow-webserver.pid"), "--config", "python:airflow.www.gunicorn_config",
        "--access-logfile", "-", "--error-logfile", "-", "airflow.www.app:cached_app()", "--preload",
    ]  # fmt: skip


def remove_stale_pidfiles(home: Path) -> None:
    """Airflow's and gunicorn's own pid files (airflow-webserver.pid...) left by processes that were
    killed: after the sandbox's restart their numbers belong to other processes, and the new scheduler
    and gunicorn would take them for themselves running already and exit."""
    for pidfile in home.glob("airflow-*.pid"):
        try:
            argv = Path(f"/proc/{int(pidfile.read_text().strip())}/cmdline").read_bytes()
        except (OSError, ValueError):
            argv = b""
        if b"airflow" not in argv and b"gunicorn" not in argv:
            pidfile.unlink(missing_ok=True)


def stop_airflow(project: Path) -> None:
    home = airflow_home(project.resolve())
    for name in ("webserver", "scheduler"):
        stop_pidfile(home / f"{name}.pid")


def drop_airflow_metadata(project: Path) -> None:
    """`astro dev kill`: the project's metadata database goes with its containers."""
    database = airflow_env(project.resolve())["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].rsplit("/", 1)[1]
    if port_open(PG_PORT):
        psql(f'DROP DATABASE IF EXISTS "{database}"')


def apply_settings(project: Path, env: dict[str, str]) -> None:
    """airflow_settings.yaml's connections, variables and pools, as `astro dev start` loads them
    (entries without an id, as in the file `astro dev init` writes, are skipped)."""
    settings = project / "airflow_settings.yaml"
    if not settings.exists():
        return
    script = r"""
import sys, yaml
from airflow.models import Connection, Pool, Variable
from airflow.utils.session import create_session
data = (yaml.safe_load(open(sys.argv[1])) or {}).get("airflow") or {}
with create_session() as session:
    for c in data.get("connections") or []:
        if not c or not c.get("conn_id"):
            continue
        session.query(Connection).filter(Connection.conn_id == c["conn_id"]).delete()
        session.add(Connection(conn_id=c["conn_id"], conn_type=c.get("conn_type"), host=c.get("conn_host"),
            schema=c.get("conn_schema"), login=c.get("conn_login"), password=c.get("conn_password"),
            port=c.get("conn_port"), extra=c.get("conn_extra")))
    for p in data.get("pools") or []:
        if p and p.get("pool_name"):
            Pool.create_or_update_pool(p["pool_name"], p.get("pool_slot") or 1, p.get("pool_description") or "",
                include_deferred=False, session=session)
    for v in data.get("variables") or []:
        if v and v.get("variable_name"):
            Variable.set(v["variable_name"], v.get("variable_value"), session=session)
"""
    text = settings.read_text()
    if not re.search(r"^\s*-\s*(conn_id|pool_name|variable_name):\s*\S", text, re.MULTILINE):
        return  # the template's empty entries: nothing to load, and no Python to start
    done = subprocess.run([env_bin("airflow", "python"), "-c", script, str(settings)], env=env,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise ServiceError(f"{settings}: could not be loaded: {done.stderr.strip().splitlines()[-1:]}")


# --- Superset ------------------------------------------------------------------------------------


SUPERSET_CONFIG = """\
# Superset as the official snapshot configures its compose service (docker/pythonpath_dev)
SQLALCHEMY_DATABASE_URI = "postgresql://superset:superset@127.0.0.1:5432/superset"
SECRET_KEY = "daharness-local-superset"
SESSION_COOKIE_SAMESITE = None
SESSION_COOKIE_SECURE = False
SESSION_COOKIE_HTTPONLY = False
WTF_CSRF_ENABLED = False
TALISMAN_ENABLED = False
CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache"}
DATA_CACHE_CONFIG = CACHE_CONFIG
FEATURE_FLAGS = {"ALERT_REPORTS": False}
PREVENT_UNSAFE_DB_CONNECTIONS = False
"""


def superset_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "SUPERSET_CONFIG_PATH": str(home / "superset_config.py"),
        "SUPERSET_HOME": str(home),
        "FLASK_APP": "superset.app:create_app()",
        "PATH": f"{apps_dir() / 'superset' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }


def start_superset() -> dict[str, float]:
    times = {"postgres": start_postgres()}
    home = state_dir() / "superset"
    home.mkdir(parents=True, exist_ok=True)
    (home / "superset_config.py").write_text(SUPERSET_CONFIG)
    log = home / "superset.log"
    t0 = time.monotonic()
    command = [
        env_bin("superset", "gunicorn"), "--bind", f"127.0.0.1:{SUPERSET_PORT}", "--workers", "1",
        "--worker-class", "gthread", "--threads", "8", "--timeout", "120", "superset.app:create_app()",
    ]  # fmt: skip
    server = spawn(command, log, superset_env(home), cwd=home)
    (home / "superset.pid").write_text(str(server.pid))
    wait_until(
        lambda: http_text(f"http://127.0.0.1:{SUPERSET_PORT}/health") == "OK", "Superset on :8088",
        TIMEOUTS["superset"], log, server,
    )  # fmt: skip
    times["superset"] = time.monotonic() - t0
    (home / "compose.log").write_text("\n".join(SUPERSET_INIT_LOG) + "\n")
    return times


def stop_superset() -> None:
    stop_pidfile(state_dir() / "superset" / "superset.pid")


# --- the proxy to the web API stand-ins (webapis.py) -------------------------------------------------


WEBAPIS_PORT = 3128
WEBAPIS_CERTIFICATE = Path("/run/daharness-webapis/server.pem")  # the harness mounts it


def start_webapis() -> float:
    """The proxy that answers the sandbox's HTTP(S) for the public web APIs the tasks call."""
    start = time.monotonic()
    if port_open(WEBAPIS_PORT):
        return 0.0
    folder = state_dir() / "webapis"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "webapis.log"
    script = Path(__file__).resolve().parent / "webapis.py"
    proxy = spawn([sys.executable, str(script), "serve", str(WEBAPIS_CERTIFICATE)], log, dict(os.environ))
    (folder / "webapis.pid").write_text(str(proxy.pid))
    wait_until(lambda: port_open(WEBAPIS_PORT), f"the web API stand-ins on :{WEBAPIS_PORT}", 30.0, log, proxy)
    return time.monotonic() - start


# --- what runs, and starting it again ---------------------------------------------------------------


DAGSTER_TIMEOUT = 120.0


def running() -> list[dict]:
    """The services that run now, in the order they must start again: the harness keeps this list at
    the end of a task's setup and starts them again for the checks (`restart`)."""
    found: list[dict] = []
    if _pid_alive(state_dir() / "webapis" / "webapis.pid"):
        found.append({"service": "webapis"})
    if port_open(PG_PORT):
        found.append({"service": "postgres"})
    if MYSQL_SOCKET.exists() and port_open(3306):
        found.append({"service": "mariadb"})
    airflow_root = state_dir() / "airflow"
    for home in sorted(airflow_root.iterdir()) if airflow_root.is_dir() else []:
        if _pid_alive(home / "webserver.pid") and (home / "dags").is_symlink():
            found.append({"service": "airflow", "project": str((home / "dags").resolve().parent)})
    if _pid_alive(state_dir() / "superset" / "superset.pid"):
        found.append({"service": "superset"})
    found += dagster_servers()
    return found


def dagster_servers() -> list[dict]:
    """`dagster dev` processes of this sandbox (its own PID namespace: only its processes are seen):
    folder, arguments and DAGSTER_HOME, to start them again as they were."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
            environ = (entry / "environ").read_bytes().decode(errors="replace").split("\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        names = [Path(arg).name for arg in argv[:2]]
        if "dagster" not in names or "dev" not in argv:
            continue
        args = argv[argv.index("dev") :]
        home = next((item.split("=", 1)[1] for item in environ if item.startswith("DAGSTER_HOME=")), "")
        found.append({"service": "dagster", "cwd": cwd, "args": args, "dagster_home": home})
    return found


def started_besides(listed: list[dict]) -> list[dict]:
    """Dagster servers running now on ports that none of `listed` (the setup's services) uses."""
    taken = {dagster_port(item["args"]) for item in listed if item.get("service") == "dagster"}
    found = []
    for item in dagster_servers():
        port = dagster_port(item["args"])
        if port not in taken:
            taken.add(port)
            found.append(item)
    return found


def dagster_port(args: list[str]) -> int:
    for index, arg in enumerate(args):
        if arg in ("-p", "--port") and index + 1 < len(args):
            return int(args[index + 1])
        if arg.startswith("--port="):
            return int(arg.split("=", 1)[1])
    return 3000


def dagster_ready(port: int) -> bool:
    """The webserver answers and its code locations are loaded (what the UI and the checks read)."""
    if http_json(f"http://127.0.0.1:{port}/server_info") is None:
        return False
    query = json.dumps({"query": "{ repositoriesOrError { __typename } }"}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql", data=query, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            answer = json.loads(response.read())
    except (OSError, ValueError):
        return False
    return (answer.get("data") or {}).get("repositoriesOrError", {}).get(
        "__typename"
    ) == "RepositoryConnection"


def start_dagster(cwd: str, args: list[str], dagster_home: str) -> float:
    start = time.monotonic()
    env = {
        **os.environ,
        "PATH": f"{apps_dir() / 'dagster' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    if dagster_home:
        env["DAGSTER_HOME"] = dagster_home
    log = Path(cwd) / "start_server.log"
    server = spawn([env_bin("dagster", "dagster"), *args], log, env, cwd=Path(cwd))
    port = dagster_port(args)
    wait_until(lambda: dagster_ready(port), f"Dagster on :{port}", DAGSTER_TIMEOUT, log, server)
    return time.monotonic() - start


def wait_for(service: str, port: int | None = None) -> float:
    """A health check of a service the setup started (the official *_webui_init steps log into it)."""
    if service == "dagster":
        port = port or 3000
        return wait_until(
            lambda: dagster_ready(port), f"Dagster on :{port}", DAGSTER_TIMEOUT, Path("start_server.log")
        )
    if service == "airflow":

        def healthy() -> bool:
            health = http_json(f"http://127.0.0.1:{AIRFLOW_PORT}/health") or {}
            return all(health.get(p, {}).get("status") == "healthy" for p in ("metadatabase", "scheduler"))

        return wait_until(
            healthy, f"Airflow on :{AIRFLOW_PORT}", TIMEOUTS["airflow"], state_dir() / "airflow"
        )
    if service == "superset":
        return wait_until(
            lambda: http_text(f"http://127.0.0.1:{SUPERSET_PORT}/health") == "OK", f"Superset on :{SUPERSET_PORT}",
            TIMEOUTS["superset"], state_dir() / "superset" / "superset.log",
        )  # fmt: skip
    raise ServiceError(f"unknown service {service!r}")


def restart(services: list[dict]) -> dict[str, float]:
    """Start again, in order, the services `running()` listed (after every process was stopped)."""
    times: dict[str, float] = {}
    for item in services:
        name = item.get("service")
        if name == "webapis":
            times["webapis"] = start_webapis()
        elif name == "postgres":
            (state_dir() / "postgres" / "data" / "postmaster.pid").unlink(missing_ok=True)
            times["postgres"] = start_postgres()
        elif name == "mariadb":
            MYSQL_SOCKET.unlink(missing_ok=True)
            times["mariadb"] = start_mariadb()
        elif name == "airflow":
            times["airflow"] = sum(start_airflow(Path(item["project"]), settings=False).values())
        elif name == "superset":
            times["superset"] = sum(start_superset().values())
        elif name == "dagster":
            times[f"dagster:{dagster_port(item['args'])}"] = start_dagster(
                item["cwd"], item["args"], item.get("dagster_home", "")
            )
        else:
            raise ServiceError(f"unknown service {name!r}")
    return times


# --- install-time templates -------------------------------------------------------------------------


def build_templates(target: Path) -> None:
    """The PostgreSQL data folder every sample starts from (`target`): Superset's metadata migrated and
    initialised (admin/admin), and `airflow_template`, Airflow's migrated metadata with admin/admin.
    PostgreSQL refuses to run as root: as root, run this as an unprivileged user."""
    work = target.parent / f"work-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    os.environ["DAHARNESS_APP_STATE"] = str(work)
    data = work / "pgdata"
    start_postgres(data=data, template=Path("/nonexistent"))
    try:
        psql("CREATE ROLE superset LOGIN PASSWORD 'superset'")
        psql("CREATE DATABASE superset OWNER superset")
        home = work / "superset"
        home.mkdir()
        (home / "superset_config.py").write_text(SUPERSET_CONFIG)
        env = superset_env(home)
        superset = env_bin("superset", "superset")
        for step in (["db", "upgrade"],
                     ["fab", "create-admin", "--username", ADMIN[0], "--password", ADMIN[1], "--firstname",
                      "Superset", "--lastname", "Admin", "--email", "admin@superset.com"],
                     ["init"]):  # fmt: skip
            run_checked([superset, *step], env)
        psql("CREATE DATABASE airflow_template")
        project = work / "template-project"
        project.mkdir()
        env = airflow_env(project)
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = (
            env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].rsplit("/", 1)[0] + "/airflow_template"
        )
        link_project(project, airflow_home(project))
        airflow = env_bin("airflow", "airflow")
        run_checked([airflow, "db", "migrate"], env)
        run_checked([airflow, "users", "create", "-u", ADMIN[0], "-p", ADMIN[1], "-r", "Admin", "-e",
                     "admin@example.com", "-f", "Admin", "-l", "User"], env)  # fmt: skip
    finally:
        subprocess.run(
            [str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True
        )
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(data, target, symlinks=True)
    for path in [target, *target.rglob("*")]:  # each sandbox's user copies it
        path.chmod(0o755 if path.is_dir() else 0o644)
    shutil.rmtree(work, ignore_errors=True)


def run_checked(command: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise ServiceError(f"{' '.join(command[:3])} failed:\n{(done.stdout + done.stderr)[-2000:]}")


def main(argv: list[str]) -> int:
    try:
        match argv:
            case ["build-templates", target]:
                build_templates(Path(target))
            case ["start", "postgres"]:
                print(json.dumps({"postgres": start_postgres()}))
            case ["start", "mariadb"]:
                print(json.dumps({"mariadb": start_mariadb()}))
            case ["start", "webapis"]:
                print(json.dumps({"webapis": start_webapis()}))
            case ["start", "superset"]:
                print(json.dumps(start_superset()))
            case ["start", "airflow", project]:
                print(json.dumps(start_airflow(Path(project))))
            case ["stop", "airflow", project]:
                stop_airflow(Path(project))
            case ["stop", "superset"]:
                stop_superset()
            case ["stop", "postgres"]:
                stop_postgres()
            case ["running"]:
                print(json.dumps(running()))
            case ["started-besides", listed]:
                print(json.dumps(started_besides(json.loads(listed))))
            case ["restart", listed]:
                print(json.dumps(restart(json.loads(listed))))
            case ["wait", service]:
                print(json.dumps({service: wait_for(service)}))
            case _:
                print(__doc__, file=sys.stderr)
                return 2
    except ServiceError as exc:
        print(f"appservices: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
