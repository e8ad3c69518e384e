"""Whole runs through the command line against a model server that misbehaves: each sample ends in
time, and a broken server is recorded as an infrastructure error with its reason, never as a wrong
answer."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai import Fail, FakeOpenAI, Raw, Reply, Trickle
from helpers import cli, records_of

SUITE = f"dabench:{Path(__file__).parent / 'fixtures' / 'runnable' / 'questions.jsonl'}"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def _run(server: FakeOpenAI, tmp_path: Path, settings: str, *extra: str) -> subprocess.CompletedProcess[str]:
    models = tmp_path / "models.toml"
    models.write_text(f'[models.flaky]\nmodel = "flaky"\nbase_url = "{server.base_url}"\n{settings}\n')
    return subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "react", "--model", "flaky", "--models-file", str(models),
            "--cache", "off", "--out", str(tmp_path / "run"), *extra),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_server_that_trickles_its_reply_cannot_hold_the_run(server: FakeOpenAI, tmp_path: Path) -> None:
    # headers at once, then a byte every 0.3 s: no single read times out, the whole reply takes minutes
    server.script([Trickle(interval_s=0.3)] * 4)
    done = _run(
        server, tmp_path, "timeout_s = 1\nmax_retries = 1", "--ids", "1,2", "--max-sample-seconds", "10"
    )
    assert done.returncode == 0, done.stderr
    records = records_of(tmp_path / "run")
    assert [r["status"] for r in records] == ["error", "error"]
    assert "no complete reply within 1 s, still after 1 retries" in records[0]["error"]
    assert len(server.requests) == 4


def test_an_endless_500_spends_the_runs_retry_budget_once(server: FakeOpenAI, tmp_path: Path) -> None:
    server.script([Fail(500)] * 50)
    done = _run(server, tmp_path, "max_retries = 5\nmax_run_retries = 3", "--ids", "1,2,3")
    assert done.returncode == 0, done.stderr
    errors = [r["error"] for r in records_of(tmp_path / "run")]
    assert (
        "500 Internal Server Error; the run's budget of 3 retries is used up, still after 3 retries"
        in errors[0]
    )
    assert all("still after 0 retries" in error for error in errors[1:]) and len(errors) == 3
    assert len(server.requests) == 4 + 1 + 1  # the first call's attempts, then one attempt per sample
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["model_requests"] == {"timeout_s": 120.0, "max_retries_per_call": 5, "max_retries_per_run": 3}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (
            Raw("<!doctype html><title>Proxy error</title>"),
            "malformed reply: the reply is not JSON (text/html",
        ),
        (
            Raw('{"choices": []}', content_type="application/json"),
            "malformed reply: the reply has no choices",
        ),
        (Reply(None), "malformed reply: the reply's message has no text (content is null)"),
    ],
    ids=["html", "no-choices", "null-content"],
)
def test_malformed_replies_are_infrastructure_errors_not_wrong_answers(
    server: FakeOpenAI, tmp_path: Path, reply: object, reason: str
) -> None:
    server.script([reply] * 4)
    done = _run(server, tmp_path, "max_retries = 1", "--ids", "1,2")
    assert done.returncode == 0, done.stderr
    records = records_of(tmp_path / "run")
    assert [r["status"] for r in records] == ["error", "error"]
    assert reason in records[0]["error"] and "still after 1 retries" in records[0]["error"]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["counts"]["errors"] == 2 and report["counts"]["wrong"] == 0
