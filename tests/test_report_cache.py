"""Figures a reader of report.json, report.html and the run's summary must not misread: how many model
replies came from the response cache (a cached run costs $0 and takes no time), and one count of agent
failures. Both runs are real runs of `daharness run` against the fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from sample_runs import WRONG_EVERY, responder

SAMPLES = 2
REPLIES = 2 * SAMPLES  # react: plot, then answer


def _run(server: FakeOpenAI, out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", "closed-form", "--agent", "react",
         "--model", "fake-model", "--base-url", server.base_url, "--out", str(out), "--limit", str(SAMPLES),
         "--cache", "on", "--cache-path", str(cache), "--concurrency", "1"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The same two samples run twice with one response cache: the second run asks the server nothing."""
    folder = tmp_path_factory.mktemp("cache")
    with FakeOpenAI() as server:
        server.responder = responder
        first = _run(server, folder / "first", folder / "responses.sqlite")
        asked_first = len(server.requests)
        second = _run(server, folder / "second", folder / "responses.sqlite")
        asked_second = len(server.requests) - asked_first
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    yield {"first": (folder / "first", first), "second": (folder / "second", second),
           "asked": (asked_first, asked_second)}  # fmt: skip


def _report(run: Path) -> dict[str, Any]:
    return json.loads((run / "report.json").read_text())


def test_a_cached_rerun_says_its_replies_came_from_the_cache(runs: dict[str, Any]) -> None:
    assert runs["asked"] == (REPLIES, 0)
    first, first_done = runs["first"]
    second, second_done = runs["second"]
    usage = _report(first)["agent"]["usage"]
    assert usage["calls"] == REPLIES and usage["cached_calls"] == 0
    cached = _report(second)["agent"]["usage"]
    assert cached["calls"] == REPLIES and cached["cached_calls"] == REPLIES and cached["cost_usd"] == 0
    assert cached["prompt_tokens"] == usage["prompt_tokens"] > 0  # a hit keeps its token counts
    # the summary printed at the end of the run
    summary = " ".join(second_done.stdout.split())
    assert f"$0.0000 ({REPLIES}/{REPLIES} replies cached)" in summary, second_done.stdout
    assert "replies cached" not in " ".join(first_done.stdout.split())
    html = (second / "report.html").read_text()
    assert f"$0.0000 ({REPLIES}/{REPLIES} replies cached)" in html
    assert f'<div class="v">{REPLIES} / {REPLIES}</div><div class="k">model replies from the cache' in html


def test_the_report_has_one_count_of_agent_failures(runs: dict[str, Any]) -> None:
    first, _done = runs["first"]
    report = _report(first)
    found: list[tuple[str, Any]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "agent_failures":
                    found.append((path + key, inner))
                walk(inner, f"{path}{key}.")
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                walk(inner, f"{path}{index}.")

    walk(report, "")
    wrong = sum(index % WRONG_EVERY == 0 for index in range(SAMPLES))
    # one wrong answer is not an agent failure (its code did not break): the count stays 0, the wrong 1
    assert found == [("counts.agent_failures", 0)]
    assert report["counts"]["wrong"] == wrong == 1
    assert (
        '<div class="v">0</div><div class="k">agent failures (scored 0)'
        in (first / "report.html").read_text()
    )
