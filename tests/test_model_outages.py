"""Whole runs through the command line against a model server that misbehaves: each sample ends in
time, a broken server is recorded as an infrastructure error with its reason, never as a wrong answer,
and a run that ends with more such errors than `--max-errors` allows exits 3 (issue 22), as does one
stopped because nothing answers at the endpoint; a missing key is said before the first sample (2)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fake_openai import Fail, FakeOpenAI, Raw, Reply, Trickle
from helpers import cli, records_of

SUITE = f"dabench:{Path(__file__).parent / 'fixtures' / 'runnable' / 'questions.jsonl'}"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def _run(
    server: FakeOpenAI | str, tmp_path: Path, settings: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base_url = server if isinstance(server, str) else server.base_url
    models = tmp_path / "models.toml"
    models.write_text(f'[models.flaky]\nmodel = "flaky"\nbase_url = "{base_url}"\n{settings}\n')
    return subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "react", "--model", "flaky", "--models-file", str(models),
            "--cache", "off", "--out", str(tmp_path / "run"), *extra),
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    """The error line that ends the run: one line, in the user's words."""
    assert "Traceback" not in done.stderr
    return done.stderr.splitlines()[-1]


def _dead_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_server_that_trickles_its_reply_cannot_hold_the_run(server: FakeOpenAI, tmp_path: Path) -> None:
    # headers at once, then a byte every 0.3 s: no single read times out, the whole reply takes minutes
    server.script([Trickle(interval_s=0.3)] * 4)
    done = _run(
        server, tmp_path, "timeout_s = 1\nmax_retries = 1", "--ids", "1,2", "--max-sample-seconds", "10"
    )
    assert done.returncode == 3, done.stderr
    records = records_of(tmp_path / "run")
    assert [r["status"] for r in records] == ["error", "error"]
    assert "no complete reply within 1 s, still after 1 retries" in records[0]["error"]
    assert len(server.requests) == 4


def test_an_endless_500_spends_the_runs_retry_budget_once(server: FakeOpenAI, tmp_path: Path) -> None:
    server.script([Fail(500)] * 50)
    done = _run(server, tmp_path, "max_retries = 5\nmax_run_retries = 3", "--ids", "1,2,3")
    assert done.returncode == 3, done.stderr
    assert _last_line(done) == (
        "error: 3 of 3 samples ended in infrastructure errors, more than --max-errors 20% allows (reasons in "
        "report.html; the same command retries them)"
    )
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
    assert done.returncode == 3, done.stderr
    assert "2 of 2 samples ended in infrastructure errors" in _last_line(done)
    records = records_of(tmp_path / "run")
    assert [r["status"] for r in records] == ["error", "error"]
    assert reason in records[0]["error"] and "still after 1 retries" in records[0]["error"]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["counts"]["errors"] == 2 and report["counts"]["wrong"] == 0


def test_the_error_threshold_is_settable_as_a_count_or_a_share(server: FakeOpenAI, tmp_path: Path) -> None:
    right = "Thought: done\nFinal Answer: @mean_x[2.00]"
    server.script([Fail(500), Fail(500), Reply(right), Reply(right), Reply(right)])  # sample 1: two attempts
    done = _run(server, tmp_path, "max_retries = 1", "--ids", "1,2,3,4,5", "--max-errors", "1")
    assert done.returncode == 0, done.stderr  # 1 error of 5 is allowed
    assert [r["status"] for r in records_of(tmp_path / "run")].count("error") == 1
    (tmp_path / "run" / "samples.jsonl").unlink()
    server.script([Fail(500)] * 4 + [Reply(right)] * 3)
    done = _run(server, tmp_path, "max_retries = 1", "--ids", "1,2,3,4,5", "--max-errors", "20%")
    assert done.returncode == 3, done.stderr  # 2 of 5 is more than 20%
    assert "2 of 5 samples ended in infrastructure errors, more than --max-errors 20% allows" in _last_line(
        done
    )
    everything = _run(server, tmp_path, "max_retries = 0", "--ids", "9", "--max-errors", "100%")
    assert everything.returncode == 2 and "--ids: no task with id 9" in _last_line(everything)
    bad = _run(server, tmp_path, "", "--max-errors", "lots")
    assert bad.returncode == 2 and _last_line(bad) == (
        "error: --max-errors: give a number of samples (3), a percentage (20%) or a fraction (0.2), not 'lots'"
    )


def test_a_dead_endpoint_is_found_before_the_first_sample_and_the_run_resumes(tmp_path: Path) -> None:
    """One look at the endpoint before the first sample (issue 43, item 9): before it, each of three samples
    spent its retries on it (31 s) before the run stopped."""
    dead = _dead_url()
    done = _run(dead, tmp_path, "max_retries = 1")
    assert done.returncode == 3, done.stderr
    assert _last_line(done) == (
        f"error: the run stopped: model 'flaky': nothing answers at {dead} ([Errno 111] Connection refused); "
        "no sample was started: start the server or correct the URL, then run the same command"
    )
    samples = tmp_path / "run" / "samples.jsonl"
    assert not samples.exists() or samples.read_text() == ""  # not one sample was tried
    with FakeOpenAI(port=int(dead.rsplit(":", 1)[1].split("/")[0])) as back:  # the endpoint is back
        back.responder = lambda request: "Thought: done\nFinal Answer: @mean_x[2.00]"
        resumed = _run(back, tmp_path, "max_retries = 1")
    assert resumed.returncode == 0, resumed.stderr
    assert {r["id"]: r["status"] for r in records_of(tmp_path / "run")} == {
        str(i): "scored" for i in range(1, 6)
    }


@contextmanager
def _endpoint_that_dies_after_one_answer() -> Iterator[str]:
    """A URL that answers one request (the run's look at it) and then refuses every connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(300)

    def answer_once() -> None:
        with listener, contextlib.suppress(OSError):
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(30)
                received = b""
                while b"\r\n\r\n" not in received:
                    chunk = connection.recv(65536)
                    if not chunk:  # the client gave up
                        return
                    received += chunk
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")

    thread = threading.Thread(target=answer_once, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    listener.close()
    thread.join(30)


def test_an_endpoint_that_dies_mid_run_stops_it_after_three_samples_and_it_resumes(tmp_path: Path) -> None:
    with _endpoint_that_dies_after_one_answer() as url:
        done = _run(url, tmp_path, "max_retries = 1")
    assert done.returncode == 3, done.stderr
    line = _last_line(done)
    assert line.startswith(
        "error: the run stopped: 3 samples in a row could not connect to the model endpoint"
    )
    assert "connection failed" in line
    assert line.endswith("the samples finished are saved: run the same command to resume")
    records = records_of(tmp_path / "run")
    assert [r["status"] for r in records] == ["error"] * 3  # samples 4 and 5 never started
    assert all(r["extra"]["endpoint_unreachable"] for r in records)
    with FakeOpenAI(port=int(url.rsplit(":", 1)[1].split("/")[0])) as back:  # the endpoint is back
        back.responder = lambda request: "Thought: done\nFinal Answer: @mean_x[2.00]"
        resumed = _run(back, tmp_path, "max_retries = 1")
    assert resumed.returncode == 0, resumed.stderr
    latest = {r["id"]: r["status"] for r in records_of(tmp_path / "run")}
    assert latest == {str(i): "scored" for i in range(1, 6)}


def test_a_server_that_answers_500_does_not_count_as_unreachable(server: FakeOpenAI, tmp_path: Path) -> None:
    server.script([Fail(500)] * 20)
    done = _run(server, tmp_path, "max_retries = 1")
    assert done.returncode == 3 and "5 of 5 samples ended in infrastructure errors" in _last_line(done)
    assert len(records_of(tmp_path / "run")) == 5


def test_a_missing_key_is_said_before_the_first_sample(server: FakeOpenAI, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PROXY_KEY")}
    done = subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "react", "--model", "gpt-4o-mini", "--out", str(tmp_path / "a")),
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr == (
        "error: model 'gpt-4o-mini': $OPENAI_API_KEY is not set, and the OpenAI API needs a key (set it, or "
        "give --base-url for a server that needs none)\n"
    )
    named = _run(server, tmp_path, "", "--api-key-env", "PROXY_KEY", env=env)
    assert named.returncode == 2 and named.stderr == (
        "error: model 'flaky': $PROXY_KEY is not set (named as the variable of the API key)\n"
    )
    assert server.requests == [] and not (tmp_path / "a").exists() and not (tmp_path / "run").exists()
    local = _run(server, tmp_path, "max_retries = 0", "--ids", "1", env=env)  # a local URL needs no key
    assert local.returncode == 0 and len(server.requests) >= 1, local.stderr


def test_a_model_the_models_file_does_not_name_is_refused_before_any_request(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    """It used to be sent as a model id to the OpenAI API (issue 43, item 3)."""
    models = tmp_path / "models.toml"
    models.write_text(f'[models.flaky]\nmodel = "flaky"\nbase_url = "{server.base_url}"\n')
    done = subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "react", "--model", "gpt-4o-mini", "--models-file", str(models),
            "--out", str(tmp_path / "run")),
        capture_output=True, text=True, timeout=300, env={**os.environ, "OPENAI_API_KEY": "sk-test"},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"error: {models}: no model named 'gpt-4o-mini' (it names flaky)\n"
    assert server.requests == [] and not (tmp_path / "run").exists()
