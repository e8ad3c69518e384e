"""The Ray executor on a real local cluster: a head and a worker node on loopback addresses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import group_processes, wait_until
from ray_cluster import LocalRayCluster, ray_available

pytestmark = pytest.mark.skipif(
    not ray_available(), reason="ray is not installed (pip install 'daharness[ray]')"
)

RUNNABLE = Path(__file__).parent / "fixtures" / "runnable" / "questions.jsonl"
SUITE = f"dabench:{RUNNABLE}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalRayCluster]:
    with LocalRayCluster(worker_nodes=1, cpus_per_node=1) as started:
        yield started


def _run(cluster: LocalRayCluster, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "daharness",
        "run",
        "--agent",
        "reference",
        "--backend",
        "ray",
        "--ray-address",
        cluster.address,
        *args,
    ]


def _records(out: Path) -> list[dict]:
    path = out / "samples.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _comparable(record: dict) -> tuple:
    score = record["score"] or {}
    return (
        record["id"],
        record["status"],
        score.get("value"),
        score.get("details"),
        record["answer"],
        record["artifacts"],
    )


def _needs_sandbox_groups() -> None:
    from daharness.sandbox.cgroups import available

    if not available():
        pytest.skip("this machine gives sandboxes no control group (cgroup v1 pids, as root)")


def test_ray_runs_the_closed_form_suite_with_the_same_records_as_local(
    cluster: LocalRayCluster, closed_form_reference_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ray-run"
    done = subprocess.run(
        _run(cluster, "--suite", "closed-form", "--mode", "strict", "--out", str(out)),
        capture_output=True,
        text=True,
        env=cluster.env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    local = sorted(map(_comparable, _records(closed_form_reference_run)))
    remote = sorted(map(_comparable, _records(out)))
    assert len(remote) == 48
    assert remote == local
    spec = json.loads((out / "run.json").read_text())
    assert spec["executor"] == {"name": "ray", "address": cluster.address}
    assert spec["concurrency"] == 2  # one sample per CPU of the two nodes
    # both nodes ran samples: the files went with the tasks, results came back to the driver
    local_artifacts = sorted(
        p.relative_to(closed_form_reference_run) for p in closed_form_reference_run.glob("artifacts/**/*")
    )
    assert sorted(p.relative_to(out) for p in out.glob("artifacts/**/*")) == local_artifacts
    assert len(list((out / "trajectories").glob("*.json"))) == 48


def test_a_worker_killed_mid_sample_loses_nothing(cluster: LocalRayCluster, tmp_path: Path) -> None:
    _needs_sandbox_groups()
    out = tmp_path / "run"
    process = subprocess.Popen(
        _run(cluster, "--suite", SUITE, "--ids", "3", "--out", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cluster.env(),
    )
    try:  # sample 3 sleeps in its sandbox; kill the Ray worker process that runs it
        wait_until(lambda: group_processes(cluster.sandbox_groups()) != [], 120, "sample 3's sandbox")
        worker = int(cluster.sandbox_groups()[0].name.split("-", 1)[0])
        os.kill(worker, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 0, stderr[-3000:]
    records = _records(out)
    assert [(r["id"], r["attempt"], r["status"]) for r in records] == [("3", 1, "error"), ("3", 2, "scored")]
    assert "worker was lost" in records[0]["error"]
    assert records[1]["score"]["value"] == 1.0 and records[1]["answer"].startswith("@sum_y[13]")
    assert (out / "artifacts" / "3" / "note.txt").read_text() == "done"
    assert json.loads((out / "trajectories" / "3.json").read_text())["attempt"] == 2
    assert "1 right" in stdout and "0 errors" in stdout  # the lost attempt is superseded by its retry
    wait_until(
        lambda: group_processes(cluster.sandbox_groups()) == [], 30, "the killed worker's sandbox to go"
    )


def test_ctrl_c_leaves_no_sandbox_behind_and_the_same_command_resumes(
    cluster: LocalRayCluster, tmp_path: Path
) -> None:
    _needs_sandbox_groups()
    out = tmp_path / "run"
    command = _run(cluster, "--suite", SUITE, "--ids", "3,1", "--concurrency", "2", "--out", str(out))
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env()
    )
    try:
        wait_until(lambda: group_processes(cluster.sandbox_groups()) != [], 120, "a sandbox of the run")
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, stderr[-3000:]
    assert "interrupted" in stderr
    wait_until(lambda: group_processes(cluster.sandbox_groups()) == [], 30, "every sandbox of the run to go")
    assert "3" not in {r["id"] for r in _records(out)}  # the interrupted sample is not on record
    done = subprocess.run(command, capture_output=True, text=True, env=cluster.env())
    assert done.returncode == 0, done.stderr[-3000:]
    latest = {r["id"]: r for r in _records(out)}
    assert {rid: r["status"] for rid, r in latest.items()} == {"1": "scored", "3": "scored"}


def test_an_address_that_is_malformed_or_where_no_cluster_listens_is_a_one_line_error(tmp_path: Path) -> None:
    from ray_cluster import free_port

    address = f"127.0.0.1:{free_port()}"
    command = [
        sys.executable,
        "-m",
        "daharness",
        "run",
        "--suite",
        SUITE,
        "--agent",
        "reference",
        "--out",
        str(tmp_path / "run"),
    ]
    done = subprocess.run(
        [*command, "--backend", "ray", "--ray-address", address], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--ray-address {address}: no Ray cluster answers there (Connection refused)" in done.stderr
    assert not (tmp_path / "run").exists()
    done = subprocess.run(
        [*command, "--backend", "ray", "--ray-address", "nonsense"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--ray-address nonsense: Invalid address format: nonsense" in done.stderr


def test_a_cluster_that_requires_a_token_takes_it_from_the_token_file_alone_or_says_how_to_give_it(
    cluster: LocalRayCluster, tmp_path: Path
) -> None:
    """Ray 2.5x and later start clusters with token authentication: a driver that gives the token file
    (RAY_AUTH_TOKEN_PATH, without RAY_AUTH_MODE) runs; one without a token is told in one line how to
    give it, without Ray's warning a second."""
    without = {key: value for key, value in cluster.env().items() if not key.startswith("RAY_AUTH")}
    command = _run(cluster, "--suite", SUITE, "--ids", "1", "--out", str(tmp_path / "given"))
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        env={**without, "RAY_AUTH_TOKEN_PATH": str(cluster.token_file)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert [r["status"] for r in _records(tmp_path / "given")] == ["scored"]
    refused = _run(cluster, "--suite", SUITE, "--ids", "1", "--out", str(tmp_path / "refused"))
    done = subprocess.run(refused, capture_output=True, text=True, timeout=300, env=without)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "RAY_AUTH_TOKEN_PATH" in done.stderr and "InvalidAuthToken" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
