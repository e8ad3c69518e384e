"""Spider2-V's BigQuery and Snowflake tasks (issue 44), against the local emulators served as if they were
the providers (bqemulator's REST API and fakesnow's server, the real client libraries pointed at them),
started once for this module: the release's 84 task files are each supported or refused with a reason,
every supported one scores 0 untouched; the built-in warehouse tasks score 1 with their references and
fail when damaged; and the agent's code reaches the emulators through the harness's egress proxy and no
other address, in the real bwrap sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.workflow.cloud import applications, egress, emulators
from daharness.families.workflow.cloud.settings import CloudSettings, load_settings
from daharness.families.workflow.validate import IdleAgent
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.sandbox.bwrap import check_bwrap
from daharness.scoring import score_submission
from daharness.suites import load_suite

FIXTURES = Path(__file__).parents[2] / "fixtures" / "spider2v-cloud"
WAREHOUSE = ("bq-cars-origin-summary", "bq-stocks-load-csv", "bq-iris-species-view",
             "sf-cars-heaviest-by-origin", "sf-stocks-load-csv", "sf-iris-species-view")  # fmt: skip
# the release's tasks that run on the emulators (the loader's reasons refuse the other 66)
ON_EMULATORS = {
    "bigquery": {"39eec0cf", "45b77bfb", "6763a8c9", "858225a1", "950f4d46", "ac312309", "b4728a38", "ba3a37bb",
                 "d953c3e1", "df2ed595"},
    "snowflake": {"1bdd1b3e", "334c5af8", "4aa4cebb", "6f202e46", "7d40baa0", "bb3ffdcf", "dc38c2d4", "f29c271c"},
}  # fmt: skip


def _missing() -> str | None:
    try:
        check_bwrap()
    except UserError as exc:
        return str(exc)
    return emulators.missing("bigquery") or emulators.missing("snowflake")


pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"cloud emulators or bwrap: {_missing()}")


@pytest.fixture(scope="module")
def accounts() -> Iterator[CloudSettings]:
    with emulators.local_emulators("bigquery", "snowflake") as settings:
        yield settings


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("release")
    with tarfile.open(FIXTURES / "release.tar.xz") as archive:
        archive.extractall(folder, filter="data")
    return folder


def _sample(task: Task, agent: object) -> tuple[float, Submission]:
    submission, snapshot = solve_and_collect(task, agent, SandboxSettings(limits=Limits()))  # type: ignore[arg-type]
    try:
        return score_submission(task, submission, snapshot, ScoringSettings()).value, submission
    finally:
        import shutil

        shutil.rmtree(snapshot.root.parent, ignore_errors=True)


def test_release_tasks_without_accounts_are_refused_with_the_reason(release: Path) -> None:
    # the others: Google Drive, and setup files the release does not ship
    for app, count, others in (("bigquery", 40, 4), ("snowflake", 44, 2)):
        suite = load_suite(f"spider2v:{release / 'examples' / app}")
        assert suite.tasks == [] and len(suite.unsupported) == count
        account = {"bigquery": "BigQuery", "snowflake": "Snowflake"}[app]
        rest = [why for why in suite.unsupported.values() if f"needs a {account} account" not in why]
        assert len(rest) == others, rest
        assert all("Google Drive account" in why or "is not in the suite folder" in why for why in rest), rest


def test_release_tasks_on_the_emulators_supported_or_refused(release: Path, accounts: CloudSettings) -> None:
    for app, expected in ON_EMULATORS.items():
        suite = load_suite(f"spider2v:{release / 'examples' / app}", cloud_settings=str(accounts.folder))
        assert {task.id[:8] for task in suite.tasks} == expected
        assert len(suite.tasks) + len(suite.unsupported) == (40 if app == "bigquery" else 44)
        assert all(why.strip() for why in suite.unsupported.values())
    reasons = load_suite(f"spider2v:{release / 'examples' / 'snowflake'}", cloud_settings="local").unsupported
    assert any("Snowsight" in why for why in reasons.values())
    assert any("Amazon S3" in why for why in reasons.values()) and any(
        "Marketplace" in why for why in reasons.values()
    )


def test_supported_release_tasks_score_0_untouched(release: Path, accounts: CloudSettings) -> None:
    tasks = [
        task
        for app in ON_EMULATORS
        for task in load_suite(
            f"spider2v:{release / 'examples' / app}", cloud_settings=str(accounts.folder)
        ).tasks
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:  # the accounts' lock lets one set up at a time
        scored = dict(
            zip([t.id[:8] for t in tasks], pool.map(lambda t: _sample(t, IdleAgent()), tasks), strict=True)
        )
    assert {key: value for key, (value, _) in scored.items()} == dict.fromkeys(scored, 0.0)
    # each was set up and asked: a table getter read the loaded table (not an error that scores 0)
    _value, submission = scored["45b77bfb"]
    assert submission.evidence["cloud_results"]["0:bigquery_table_to_csv"].startswith(
        "2012,zip/85140,Arizona,"
    )
    _, submission = scored["39eec0cf"]
    assert submission.evidence["cloud_results"]["0:bigquery_datasets"] == ["customer_orders"]


def _warehouse(accounts: CloudSettings) -> dict[str, Task]:
    suite = load_suite("workflow", cloud_settings=str(accounts.folder))
    return {task.id: task for task in suite.tasks if task.id in WAREHOUSE}


def test_builtin_warehouse_tasks_score_1_with_their_references(accounts: CloudSettings) -> None:
    from daharness.agents.reference import ReferenceAgent

    tasks = _warehouse(accounts)
    assert set(tasks) == set(WAREHOUSE)
    scores = {name: _sample(task, ReferenceAgent())[0] for name, task in tasks.items()}
    assert scores == dict.fromkeys(WAREHOUSE, 1.0)


class _Damaged:
    """The reference solution with one change a wrong agent would make."""

    name = "damaged"

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def describe(self) -> dict[str, str]:
        return {"name": self.name}

    def solve(self, task: Task, sandbox: object) -> Submission:
        assert task.reference is not None and self.old in task.reference.code
        code = task.reference.code.replace(self.old, self.new)
        submission = Submission()
        submission.act("python", {"code": code}, sandbox.python(code))  # type: ignore[attr-defined]
        return submission


@pytest.mark.parametrize(
    ("task_id", "old", "new"),
    [
        ("bq-iris-species-view", "CREATE VIEW", "CREATE TABLE"),  # a table made once does not follow the data
        ("sf-iris-species-view", "CREATE VIEW", "CREATE TABLE"),
        ("bq-cars-origin-summary", "ROUND(AVG(Miles_per_Gallon), 2)", "ROUND(AVG(Miles_per_Gallon), 1)"),
        ("sf-cars-heaviest-by-origin", "WEIGHT_IN_LBS DESC, NAME", "WEIGHT_IN_LBS DESC, NAME DESC"),
        (
            "sf-stocks-load-csv",
            "list(frame.itertuples(index=False, name=None))",
            "list(frame.itertuples(index=False, name=None))[1:]",
        ),
    ],
)
def test_damaged_references_fail(accounts: CloudSettings, task_id: str, old: str, new: str) -> None:
    assert _sample(_warehouse(accounts)[task_id], _Damaged(old, new))[0] < 1.0


def test_run_command_takes_cloud_settings(accounts: CloudSettings, tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [sys.executable, "-m", "daharness", "run", "--suite", "workflow", "--agent", "reference",
               "--ids", "sf-iris-species-view", "--cloud-settings", str(accounts.folder), "--out", str(out)]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (record,) = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert record["score"]["value"] == 1.0


class _Other(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"host service")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def other_server() -> Iterator[int]:
    """A server on the host's loopback that no task's applications name."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Other)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()


PROBE = r"""
import json, os, socket, sys, urllib.request
found = {}
api = os.environ["BIGQUERY_EMULATOR_HOST"]
found["emulator"] = urllib.request.urlopen(api + "/healthz", timeout=20).status
def tunnel(target):  # CONNECT through the sandbox's HTTPS proxy
    s = socket.create_connection(("127.0.0.1", 3129), timeout=20)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    return s.recv(200).split(b"\r\n")[0].decode()
found["proxy_other"] = tunnel(f"127.0.0.1:{sys.argv[1]}")
found["proxy_public"] = tunnel("example.com:443")
found["proxy_api"] = tunnel(api.removeprefix("http://"))
def direct(host, port):
    try:
        socket.create_connection((host, port), timeout=5).close()
        return "connected"
    except OSError as exc:
        return type(exc).__name__
found["direct_other"] = direct("127.0.0.1", int(sys.argv[1]))
found["direct_host"] = direct(sys.argv[2], int(sys.argv[1]))
print(json.dumps(found))
"""


def _host_address() -> str:
    """An address of this machine that is not loopback (its services listen there too)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the route's source
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.2"


def test_agent_code_reaches_the_emulators_through_the_proxy_and_nothing_else(
    accounts: CloudSettings, other_server: int
) -> None:
    task = _warehouse(accounts)["bq-cars-origin-summary"]

    class Probe(IdleAgent):
        def solve(self, task: Task, sandbox: object) -> Submission:
            submission = Submission()
            written = sandbox.write_file("probe.py", PROBE)  # type: ignore[attr-defined]
            assert written.ok
            observation = sandbox.bash(f"python3 probe.py {other_server} {_host_address()}")  # type: ignore[attr-defined]
            submission.evidence["probe"] = observation.stdout + observation.stderr
            return submission

    _, submission = _sample(task, Probe())
    found = json.loads(submission.evidence["probe"].strip().splitlines()[-1])
    assert found["emulator"] == 200  # through the forwarder and the harness's proxy
    assert found["proxy_api"].startswith("HTTP/1.1 200")
    assert found["proxy_other"].startswith("HTTP/1.1 403") and found["proxy_public"].startswith(
        "HTTP/1.1 403"
    )
    assert found["direct_other"] == "ConnectionRefusedError"  # the sandbox's own loopback has nothing there
    assert found["direct_host"] in ("OSError", "ConnectionRefusedError")  # no route out of the sandbox
    proxy = egress.proxy_for(applications.policy(frozenset({"bigquery"}), accounts))
    refused = {(d.host, d.port) for d in proxy.decisions if not d.allowed}
    assert ("127.0.0.1", other_server) in refused and ("example.com", 443) in refused


def test_proxy_refuses_what_no_application_names(tmp_path: Path, other_server: int) -> None:
    policy = egress.EgressPolicy((egress.Route("bigquery", "bigquery.googleapis.com", 443),
                                  egress.Route("local", "127.0.0.1", 1, ("127.0.0.1", 1))))  # fmt: skip
    proxy = egress.EgressProxy(policy, tmp_path / "egress")
    try:

        def ask(request: bytes) -> bytes:
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(str(proxy.socket_path))
                client.sendall(request)
                return client.recv(300)

        assert ask(f"CONNECT 127.0.0.1:{other_server} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 403")
        assert ask(b"GET http://127.0.0.1/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 405")
        # an allowed name that resolves to this machine is refused (here: no DNS, so localhost stands in)
        rebinding = egress.EgressPolicy((egress.Route("x", "localhost", other_server),))
        with pytest.raises(PermissionError):
            egress._open(rebinding.routes[0], "localhost", other_server)
    finally:
        proxy.close()


def test_settings_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "snowflake").mkdir()
    (tmp_path / "snowflake" / "settings.json").write_text('{"account": "x", "user": "u"}')
    with pytest.raises(UserError, match=r"snowflake/settings.json: field 'password'"):
        load_settings(tmp_path)
    (tmp_path / "snowflake" / "settings.json").write_text(
        '{\n "account": "https://ab12345.snowflakecomputing.com", // the console URL\n "user": "U", "password": "p"}'
    )
    settings = load_settings(tmp_path)
    assert settings.snowflake is not None and settings.snowflake.account_name == "ab12345"
    assert not settings.snowflake_emulated and settings.projects == ()
    with pytest.raises(UserError, match="neither"):
        load_settings(tmp_path / "snowflake")


def test_real_accounts_run_the_tasks_whose_setup_gives_the_agent_a_key(release: Path, tmp_path: Path) -> None:
    """With real accounts (placeholders: loading asks no provider), a task runs without a desktop only when its
    setup copies a key to the desktop; the console's sign-in is not done, and says so."""
    (tmp_path / "google").mkdir()
    (tmp_path / "google" / "gcp_config.json").write_text(json.dumps([{
        "project_name": "bigquery-project", "project_id": "p-1", "keyfile_path": "evaluation_examples/settings/google/p-1.json"}]))  # fmt: skip
    (tmp_path / "google" / "p-1.json").write_text('{"type": "service_account"}')
    (tmp_path / "snowflake").mkdir()
    (tmp_path / "snowflake" / "settings.json").write_text(
        '{"account": "https://ab1.snowflakecomputing.com", "user": "U", "password": "P"}'
    )
    bigquery = load_suite(f"spider2v:{release / 'examples' / 'bigquery'}", cloud_settings=str(tmp_path))
    assert {task.id[:8] for task in bigquery.tasks} == {"16a9da77", "32a8ff07", "a21221c0", "c8659eaa"}
    snowflake = load_suite(f"spider2v:{release / 'examples' / 'snowflake'}", cloud_settings=str(tmp_path))
    assert snowflake.tasks == []
    assert (
        sum("only way to Snowflake is its web console" in why for why in snowflake.unsupported.values()) == 22
    )
