"""Run sets (issue 43, item 5): `run --suite a,b --model x,y` runs every suite with every model in one
command, one run folder each under the set's folder (set.json), one summary at the end and compare across
it; the same command resumes every unfinished run; options that apply to some of the runs go to those, and
one that applies to none is refused. Real runs of the `react` agent against the scripted model server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

from fake_openai import FakeOpenAI
from helpers import cli, records_of, wait_until

FIXTURE = f"dabench:{Path(__file__).parent / 'fixtures' / 'runnable' / 'questions.jsonl'}"
SUITES = f"{FIXTURE},closed-form"
RIGHT = {"Mean of x": "@mean_x[2.00]", "Max of y": "@max_y[7]"}


def _answer(request: dict) -> str:
    """Model "good" answers the fixture's questions right, "poor" wrong; the built-in suite's questions
    get a wrong answer from both."""
    text = "\n".join(str(m["content"]) for m in request["messages"])
    question = next((q for q in RIGHT if q in text), None)
    right = question is not None and request["model"] == "good"
    return f"Thought: done\nFinal Answer: {RIGHT[question] if right else '@x[0]'}"  # type: ignore[index]


def _command(server: FakeOpenAI, *extra: str) -> list[str]:
    return cli(
        "run", "--suite", SUITES, "--agent", "react", "--model", "good,poor", "--base-url", server.base_url,
        "--limit", "2", *extra,
    )  # fmt: skip


def test_two_suites_by_two_models_are_one_set_with_one_summary_and_compare(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.responder = _answer  # type: ignore[assignment]
        done = subprocess.run(
            _command(server, "--out", str(tmp_path / "set")), capture_output=True, text=True, timeout=600
        )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "set" / "set.json").read_text())
    runs = [(r["suite"], r["agent"], r["model"]) for r in manifest["runs"]]
    assert runs == [
        (FIXTURE, "react", "good"), (FIXTURE, "react", "poor"),
        ("closed-form", "react", "good"), ("closed-form", "react", "poor"),
    ]  # fmt: skip
    for run in manifest["runs"]:  # each run in its own folder, of its suite and model
        spec = json.loads((tmp_path / "set" / run["dir"] / "run.json").read_text())
        assert (spec["suite_spec"]["spec"], spec["agent"]["model"]) == (run["suite"], run["model"])
        assert len(records_of(tmp_path / "set" / run["dir"])) == 2
    asked = {
        (r["model"], next((q for q in RIGHT if q in json.dumps(r)), "built-in")) for r in server.requests
    }
    assert asked == {(m, q) for m in ("good", "poor") for q in (*RIGHT, "built-in")}

    summary = json.loads((tmp_path / "set" / "summary.json").read_text())
    figures = {
        (r["suite"], r["model"]): (r["samples"], r["accuracy"]["value"], r["exit"]) for r in summary["runs"]
    }
    assert figures == {
        (FIXTURE, "good"): (2, 1.0, 0), (FIXTURE, "poor"): (2, 0.0, 0),
        ("closed-form", "good"): (2, 0.0, 0), ("closed-form", "poor"): (2, 0.0, 0),
    }  # fmt: skip
    assert done.stdout.count("run set ") == 2  # said once at the start, and the one summary table's title
    assert "n: samples; accuracy [95% CI]" in done.stdout  # the table's caption
    # compare across the set: the two models on each suite, paired by sample
    compared = {c["runs"][0]["suite"]: c["comparisons"][0] for c in summary["comparisons"]}
    assert compared["dabench:questions"]["paired"] == 2 and len(compared["dabench:questions"]["flipped"]) == 2
    assert compared["closed-form"]["paired"] == 2 and compared["closed-form"]["flipped"] == []
    assert "B vs A: Δ accuracy -100.0 pt" in done.stdout
    assert (tmp_path / "set" / "compare.html").is_file()

    again = subprocess.run(
        cli("compare", str(tmp_path / "set"), "--json", str(tmp_path / "c.json")),
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    by_suite = json.loads((tmp_path / "c.json").read_text())["suites"]
    assert [[run["model"] for run in figures["runs"]] for figures in by_suite] == [["good", "poor"]] * 2
    viewed = subprocess.run(
        cli("view", str(tmp_path / "set"), "--export", str(tmp_path / "site")), capture_output=True, text=True
    )
    assert viewed.returncode == 0, viewed.stderr
    assert sorted(p.name for p in (tmp_path / "site" / "runs").iterdir()) == ["0", "1", "2", "3"]


STEP = ("--step-timeout", "10")  # a bound on the step the interrupt meets
SLEEP = "import time\ntime.sleep(600)"


def test_an_interrupted_set_is_resumed_by_the_same_command(tmp_path: Path) -> None:
    """Ctrl-C in the set's second run stops the set (exit 130, the later runs never start); the same
    command, without --out, finds the set under runs/ and finishes it, asking nothing again of the runs
    already done."""
    working = threading.Event()
    with FakeOpenAI() as server:

        def answer(request: dict) -> str:
            if request["model"] == "poor" and not working.is_set():  # the second run's first sample works on
                working.set()  # (once: the step ends at --step-timeout however the interrupt meets it)
                return f"Thought: wait\nAction: python_code_sandbox\nAction Input:\n```python\n{SLEEP}\n```"
            return _answer(request)

        server.responder = answer  # type: ignore[assignment]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            _command(server, *STEP),
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(
            lambda: any(r["model"] == "poor" for r in server.requests), 300, "the second run's request"
        )
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        (folder,) = (tmp_path / "runs").iterdir()
        assert folder.name.endswith("-set")
        assert len(records_of(folder / "questions.jsonl-react-good")) == 2
        assert not (folder / "closed-form-react-good").exists()  # the later runs did not start
        asked_before = len(server.requests)

        resumed = subprocess.run(
            _command(server, *STEP), cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
    assert resumed.returncode == 0, resumed.stderr
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [folder.name]  # the same set, not a new one
    assert "2 of 2 samples already done" in resumed.stderr  # the first run
    later = server.requests[asked_before:]
    assert not any(r["model"] == "good" and "Mean of x" in json.dumps(r) for r in later)
    summary = json.loads((folder / "summary.json").read_text())
    assert [(r["samples"], r["exit"]) for r in summary["runs"]] == [(2, 0)] * 4


def test_options_go_to_the_runs_they_apply_to_and_one_that_applies_to_none_is_refused(tmp_path: Path) -> None:
    """A format option to the suites whose format reads it, an agent's option to the agents that have it,
    --ids to the suites that hold the ids; refused (exit 2, before any sample) when nothing takes it."""
    labels = Path(FIXTURE.removeprefix("dabench:")).with_name("labels.jsonl")
    cases = {
        ("--suite", "workspace,closed-form", "--agent", "reference", "--rag"): (
            "--rag: only spider2v:PATH suites read it (built-in: workflow), not suite 'workspace' or 'closed-form'"
        ),
        ("--suite", "closed-form", "--agent", "reference,replay", "--dabench-compat"): (
            "--dabench-compat: not an option of any of the agents reference, replay"
        ),
        ("--suite", f"{FIXTURE},workspace", "--agent", "reference", "--ids", "1,nowhere"): (
            "--ids: suite 'workspace' has none of the tasks 1, nowhere"
        ),
    }
    for args, message in cases.items():
        refused = subprocess.run(
            cli("run", *args, "--out", str(tmp_path / "no")), capture_output=True, text=True
        )
        assert refused.returncode == 2 and message in refused.stderr, (args, refused.stderr)
        assert not (tmp_path / "no").exists()
    # --labels goes to the dabench suite only; the workspace suite loads without it
    done = subprocess.run(
        cli("run", "--suite", f"{FIXTURE},workspace", "--agent", "reference", "--labels", str(labels),
            "--limit", "1", "--out", str(tmp_path / "set")),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    specs = [json.loads(p.read_text())["suite_spec"] for p in sorted((tmp_path / "set").glob("*/run.json"))]
    assert [spec["options"] for spec in specs] == [{"labels": str(labels)}, {}]


def test_the_set_exits_with_the_worst_code_of_its_runs(tmp_path: Path) -> None:
    """The fixture's task 5 crashes its reference solution: with --max-errors 0 its run exits 3, the other
    run 0, and so the set 3; every run still ran and the summary says each one's code."""
    done = subprocess.run(
        cli("run", "--suite", f"{FIXTURE},closed-form", "--agent", "reference", "--limit", "4-5",
            "--max-errors", "0", "--out", str(tmp_path / "set")),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    summary = json.loads((tmp_path / "set" / "summary.json").read_text())
    assert [(r["suite"], r["samples"], r["errors"], r["exit"]) for r in summary["runs"]] == [
        (FIXTURE, 2, 1, 3), ("closed-form", 2, 0, 0),
    ]  # fmt: skip
    assert "1 of 2 samples ended in infrastructure errors, more than --max-errors 0 allows" in done.stderr
