"""`run --epochs N` repeats each task, the report and compare give each task's mean, pass@k and pass^k,
and the run's `--tag`s and `--meta` notes are kept in run.json and shown in the report, compare and the
Inspect export (issue 22, item 11). Real runs of the `react` agent against the fake model server."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

from fake_openai import FakeOpenAI
from helpers import cli, records_of

SUITE = f"dabench:{Path(__file__).parent / 'fixtures' / 'runnable' / 'questions.jsonl'}"
RIGHT = {"Mean of x": "@mean_x[2.00]", "Max of y": "@max_y[7]"}


def _responder() -> object:
    """Task 'Mean of x' is answered right the first time and wrong the second; 'Max of y' always right."""
    seen: Counter[str] = Counter()

    def answer(request: dict) -> str:
        text = "\n".join(str(m["content"]) for m in request["messages"])
        question = next(q for q in RIGHT if q in text)
        seen[question] += 1
        wrong = question == "Mean of x" and seen[question] % 2 == 0
        return f"Thought: done\nFinal Answer: {'@mean_x[9]' if wrong else RIGHT[question]}"

    return answer


def _run(server: FakeOpenAI, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli("run", "--suite", SUITE, "--agent", "react", "--model", "fake-model", "--base-url", server.base_url,
            "--cache", "off", "--ids", "1,2", "--out", str(out), *extra),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_epochs_give_pass_at_k_and_pass_hat_k_and_labels_are_shown_everywhere(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.responder = _responder()  # type: ignore[assignment]
        done = _run(server, tmp_path / "a", "--epochs", "2", "--tag", "nightly", "--meta", "prompt=v2")
        baseline = _run(server, tmp_path / "b", "--tag", "baseline")
    assert done.returncode == 0 and baseline.returncode == 0, done.stderr + baseline.stderr
    records = records_of(tmp_path / "a")
    assert sorted((r["id"], r["epoch"], r["score"]["value"]) for r in records) == [
        ("1", 1, 1.0), ("1", 2, 0.0), ("2", 1, 1.0), ("2", 2, 1.0),
    ]  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "a" / "trajectories").iterdir()) == [
        "1.json", "1_2.json", "2.json", "2_2.json",
    ]  # fmt: skip
    run = json.loads((tmp_path / "a" / "run.json").read_text())
    assert (run["epochs"], run["tags"], run["metadata"]) == (2, ["nightly"], {"prompt": "v2"})
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    # task 1: 1 of 2 right, task 2: 2 of 2
    assert report["epochs"] == {
        "epochs": 2, "tasks": 2, "mean_score": 0.75,
        "pass@k": {"1": 0.75, "2": 1.0}, "pass^k": {"1": 0.75, "2": 0.5},
    }  # fmt: skip
    line = "epochs 2 over 2 tasks: mean score 0.750 · pass@1 0.750, pass@2 1.000 · pass^2 0.500"
    assert line in done.stdout and "tags: nightly · prompt=v2" in done.stdout
    html = (tmp_path / "a" / "report.html").read_text()
    assert line in html and "tags: nightly · prompt=v2" in html

    compared = subprocess.run(
        cli("compare", str(tmp_path / "b"), str(tmp_path / "a"), "--json", str(tmp_path / "c.json")),
        capture_output=True, text=True,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert "tags: baseline" in compared.stdout and line in compared.stdout
    runs = json.loads((tmp_path / "c.json").read_text())["runs"]
    assert [(r["tags"], r["metadata"]) for r in runs] == [(["baseline"], {}), (["nightly"], {"prompt": "v2"})]
    assert runs[0]["epochs"] is None and runs[1]["epochs"]["pass^k"] == {"1": 0.75, "2": 0.5}

    viewed = subprocess.run(
        cli("view", str(tmp_path / "a"), "--export", str(tmp_path / "site")), capture_output=True, text=True
    )
    assert viewed.returncode == 0, viewed.stderr
    index = (tmp_path / "site" / "index.html").read_text()
    assert line in index and "tags: nightly · prompt=v2" in index
    pages = sorted(p.name for p in (tmp_path / "site" / "runs" / "0" / "samples").iterdir())
    assert pages == ["1.html", "1_2.html", "2.html", "2_2.html"]  # each epoch its own page


def test_the_inspect_export_carries_epochs_tags_and_metadata(tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    with FakeOpenAI() as server:
        server.responder = _responder()  # type: ignore[assignment]
        done = _run(server, tmp_path / "a", "--epochs", "2", "--tag", "nightly", "--meta", "prompt=v2")
    assert done.returncode == 0, done.stderr
    exported = subprocess.run(
        cli("export", str(tmp_path / "a"), str(tmp_path / "log.eval")), capture_output=True, text=True
    )
    assert exported.returncode == 0, exported.stderr
    log = read_eval_log(str(tmp_path / "log.eval"))
    assert log.eval.tags == ["nightly"] and log.eval.metadata["prompt"] == "v2"
    assert log.eval.config.epochs == 2 and log.eval.dataset.sample_ids == ["1", "2"]
    assert log.samples is not None
    assert sorted((s.id, s.epoch) for s in log.samples) == [("1", 1), ("1", 2), ("2", 1), ("2", 2)]
