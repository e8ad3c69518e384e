"""What a run asks its model (issue 43, items 1 and 2): each epoch of a task asks afresh, even with the
response cache on (the cache is per epoch, as Inspect's), and the headline interval counts a task's epochs
as one cluster; the cache is off unless asked for, and when it is on the run says at its start what it
holds and why. Real runs of `daharness run` against the fake OpenAI server on 127.0.0.1, whose every
reply is different."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI
from helpers import cli

from daharness.report.stats import mean_interval

SUITE = f"dabench:{Path(__file__).parent / 'fixtures' / 'runnable' / 'questions.jsonl'}"
RIGHT, WRONG = "@mean_x[2.00]", "@max_y[0]"  # task 1 is answered right every time, task 2 wrong


def _distinct_replies() -> Any:
    """A reply numbered by the server (no two alike), right for task 1 and wrong for task 2."""
    numbers = itertools.count(1)

    def answer(request: dict) -> str:
        text = "\n".join(str(m["content"]) for m in request["messages"])
        return f"Thought: reply {next(numbers)}\nFinal Answer: {RIGHT if 'Mean of x' in text else WRONG}"

    return answer


def _run(server: FakeOpenAI, out: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "react", "--model", "fake-model", "--base-url", server.base_url,
            "--temperature", "0.8", "--out", str(out), *extra),
        capture_output=True, text=True, timeout=300, env={**os.environ, "XDG_CACHE_HOME": str(home)},
    )  # fmt: skip


def _replies(run: Path) -> dict[str, str]:
    """Each sample's first model reply, by its trajectory file."""
    return {
        path.stem: json.loads(path.read_text())["steps"][0]["reply"]
        for path in sorted((run / "trajectories").iterdir())
    }


def _report(run: Path) -> dict[str, Any]:
    return json.loads((run / "report.json").read_text())


def test_each_epoch_asks_the_model_afresh_even_with_the_cache_on(tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite"
    with FakeOpenAI() as server:
        server.responder = _distinct_replies()
        first = _run(server, tmp_path / "a", tmp_path, "--ids", "1,2", "--epochs", "3", "--cache", "on",
                     "--cache-path", str(cache))  # fmt: skip
        asked = len(server.requests)
        again = _run(server, tmp_path / "b", tmp_path, "--ids", "1,2", "--epochs", "3", "--cache", "on",
                     "--cache-path", str(cache))  # fmt: skip
        asked_again = len(server.requests) - asked
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    # 2 tasks x 3 epochs, one reply each: every epoch asked the model, and got its own reply
    assert (asked, asked_again) == (6, 0)
    replies = _replies(tmp_path / "a")
    assert sorted(replies) == ["1", "1_2", "1_3", "2", "2_2", "2_3"]
    assert len(set(replies.values())) == 6
    assert _report(tmp_path / "a")["agent"]["usage"]["cached_calls"] == 0
    # the same run again: the cache answers each epoch with that epoch's reply
    assert _replies(tmp_path / "b") == replies
    assert _report(tmp_path / "b")["agent"]["usage"]["cached_calls"] == 6
    # said at the start, before any sample: what the cache holds for this model, and why it answers
    assert f"response cache ({cache}, --cache on): no reply of this run's model kept yet" in first.stderr
    notice = (
        f"response cache ({cache}, --cache on): it holds earlier replies (6 of model 'fake-model' at "
        f"{server.base_url}); a request identical to one of them (the same messages, sampling and epoch) gets "
        "that reply, not a new one from the model (--cache off asks afresh)"
    )
    assert notice in " ".join(again.stderr.split())
    assert again.stderr.index("response cache") < again.stderr.index(
        "dabench:questions · react"
    )  # before the bar


def test_the_headline_interval_counts_a_tasks_epochs_as_one(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.responder = _distinct_replies()
        done = _run(server, tmp_path / "a", tmp_path, "--ids", "1,2", "--epochs", "3")
    assert done.returncode == 0, done.stderr
    accuracy = _report(tmp_path / "a")["intervals"]["accuracy"]
    # task 1 right 3 times, task 2 wrong 3 times: 2 independent tasks, not 6 independent samples
    over_tasks, over_samples = mean_interval([1.0, 0.0]), mean_interval([1.0] * 3 + [0.0] * 3)
    assert (accuracy["value"], accuracy["low"], accuracy["high"]) == (
        0.5,
        over_tasks["low"],
        over_tasks["high"],
    )
    assert accuracy["low"] < over_samples["low"] and accuracy["high"] > over_samples["high"]
    assert (accuracy["n"], accuracy["clusters"]) == (6, 2)
    assert accuracy["method"] == "Wilson score over 2 task means (a task's epochs as one)"
    assert "over 6 samples of 2 tasks (a task's epochs count as one)" in " ".join(done.stdout.split())
    # compare gives each run the same figure as its report
    compared = subprocess.run(
        cli("compare", str(tmp_path / "a"), str(tmp_path / "a"), "--json", str(tmp_path / "c.json")),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    runs = json.loads((tmp_path / "c.json").read_text())["runs"]
    assert [run["figures"]["accuracy"] for run in runs] == [accuracy, accuracy]


def test_the_cache_is_off_unless_asked_for_and_resuming_needs_none(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.responder = _distinct_replies()
        first = _run(server, tmp_path / "a", tmp_path, "--ids", "1")
        second = _run(server, tmp_path / "b", tmp_path, "--ids", "1")
        assert len(server.requests) == 2  # the second run asked the (maybe changed) server again
        # the same command with one more task resumes the run: only the new task asks the model
        resumed = _run(server, tmp_path / "a", tmp_path, "--ids", "1,2")
        assert len(server.requests) == 3 and "1 of 2 samples already done" in resumed.stderr
    for done in (first, second, resumed):
        assert done.returncode == 0, done.stderr
        assert "response cache" not in done.stderr
    assert _replies(tmp_path / "a")["1"] != _replies(tmp_path / "b")["1"]
    assert not (tmp_path / "daharness" / "responses.sqlite").exists()  # the default file is not even made
