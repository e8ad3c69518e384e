"""The interactive LLM agents complete the built-in suite against a real OpenAI-compatible server on
127.0.0.1 with scripted replies (tests/families/interactive/replies.py): exact Acc and AccR per sample and in the
report, for right and wrong answers of every result type, action type and mode; clarification through
the LLM user simulator, and without it; the trajectories hold every simulator turn."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from daharness.agents import AgentSettings, make_agent
from daharness.core.task import Task
from daharness.models import ModelSettings
from daharness.report.build import write_report
from daharness.runs.rundir import RunDir
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

from .replies import RIGHT_WITHOUT_LIBRARY, WRONG, Script, expected

SUITE = load_suite("interactive")
BY_ID = {task.id: task for task in SUITE.tasks}
# agent -> whether it may ask the (LLM-simulated) user; `base` runs without clarification
AGENTS = {"base": False, "cot": True, "react-mc": True, "air": True}
# each agent runs a part of the suite with every mode, action type, result type and kind of wrong answer in
# it; `cot` also every task whose explanation a test reads (whole-suite runs made this module a fifth of the
# test suite's time; the reference agent's run covers every task)
COVER = ["affairs-05", "affairs-06", "affairs-07", "cars-02", "cars-05", "cars-06", "cars-07", "cars-08",
         "macro-01", "macro-07", "weather-04", "weather-05", "wine-01", "wine-03", "wine-07", "stocks-06",
         "stocks-10"]  # fmt: skip
COT = {*COVER, *WRONG, *RIGHT_WITHOUT_LIBRARY}


def _tasks(name: str) -> list[Task]:
    """The tasks agent `name` runs, in the suite's order."""
    ids = COT if name == "cot" else set(COVER)
    return [task for task in SUITE.tasks if task.id in ids]


def _agent_run(name: str, clarify: bool, out: Path) -> tuple[Path, Script]:
    script = Script(SUITE.tasks)
    with FakeOpenAI() as server:  # one server (and script) per agent: the four runs go at once
        server.responder = script.respond
        model = ModelSettings(model="fake-model", base_url=server.base_url, api_key_env="NO_KEY")
        settings = AgentSettings(model=model, base_url=server.base_url, cache_mode="off")
        options = {"simulator_model": "fake-simulator", "clarify": clarify}  # found at the same endpoint
        ids = [task.id for task in _tasks(name)]
        outcome = run_suite(SUITE, make_agent(name, settings, options), out, ids=ids, concurrency=2)
    assert outcome.errors == 0
    write_report(RunDir.open_for_reading(out))
    return out, script


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Script]]:
    folder = tmp_path_factory.mktemp("interactive-agents")
    with ThreadPoolExecutor(max_workers=len(AGENTS)) as pool:
        started = {n: pool.submit(_agent_run, n, c, folder / n) for n, c in AGENTS.items()}
        return {name: future.result() for name, future in started.items()}


def _records(out: Path) -> dict[str, dict]:
    lines = (out / "samples.jsonl").read_text().splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


@pytest.mark.parametrize("name", list(AGENTS))
def test_each_agent_completes_the_suite_with_exact_scores(
    name: str, runs: dict[str, tuple[Path, Script]]
) -> None:
    out, _ = runs[name]
    records, tasks = _records(out), _tasks(name)
    assert set(records) == {task.id for task in tasks}
    clarified = AGENTS[name]
    for task_id, record in records.items():
        acc, accr = expected(BY_ID[task_id], clarified=clarified)
        assert (record["score"]["value"], record["score"]["details"]["accr"]) == (acc, accr), (
            task_id,
            record["score"]["explanation"],
        )
    report = json.loads((out / "report.json").read_text())
    figures = report["families"]["interactive"]
    scores = {t.id: expected(t, clarified=clarified) for t in tasks}
    for mode in ("normal", "action", "private", "private_action"):
        ids = [t.id for t in tasks if t.metadata.category == mode]
        assert ids, mode
        assert figures["table3"]["acc"][mode] == _mean([scores[i][0] for i in ids])
        assert figures["table3"]["accr"][mode] == _mean([scores[i][1] for i in ids])
    for answer in ("code", "choice"):
        ids = [t.id for t in tasks if t.answer_format.kind == answer]
        assert figures["table3"]["acc"][answer] == _mean([scores[i][0] for i in ids])
    assert figures["table3"]["acc"]["overall"] == _mean([s[0] for s in scores.values()])
    actions = {t.metadata.subcategory for t in tasks} - {None}
    assert set(figures["by_action"]) == actions == {t.metadata.subcategory for t in SUITE.tasks} - {None}
    for action in actions:
        ids = [t.id for t in tasks if t.metadata.subcategory == action]
        assert figures["by_action"][action]["acc"] == _mean([scores[i][0] for i in ids])
    assert figures["ambiguous_replies"] == 1  # cars-06: "Answer: X or Y"
    assert set(figures["by_result_type"]) == {
        "dataframe",
        "series",
        "scalar",
        "list",
        "dict",
        "tuple",
        "plot",
        "model",
    }
    assert figures["by_result_type"]["plot"]["acc"] < 1.0 and figures["by_result_type"]["model"]["acc"] < 1.0


def test_wrong_answers_fail_for_their_reason(runs: dict[str, tuple[Path, Script]]) -> None:
    records = _records(runs["cot"][0])
    explanation = {task_id: records[task_id]["score"]["explanation"] for task_id in WRONG}
    assert "scalar n_known: no variable 'n_known'" in explanation["cars-02"]
    assert "data differ" in explanation["cars-05"]  # the histogram of another column, by its chart data
    assert "SSIM" in explanation["cars-05"]
    assert "RuntimeError: scripted failure" in explanation["weather-04"]
    assert "ambiguous" in explanation["cars-06"]
    assert "picked" in explanation["cars-04"]
    for task_id in RIGHT_WITHOUT_LIBRARY:
        details = records[task_id]["score"]["details"]
        assert details["recall"] == 0.0 and details["agent_calls"] == [] and details["reference_calls"]
    right_private = records["wine-01"]["score"]["details"]
    assert right_private["agent_calls"] == right_private["reference_calls"] == ["count_missing", "load_table"]


def test_clarification_goes_through_the_llm_simulator(runs: dict[str, tuple[Path, Script]]) -> None:
    for name, clarify in AGENTS.items():
        code_turns = [t for t in _tasks(name) if t.answer_format.kind == "code"]
        clarifications = [t for t in _tasks(name) if t.metadata.subcategory == "clarification"]
        out, script = runs[name]
        figures = json.loads((out / "report.json").read_text())["families"]["interactive"]["clarification"]
        assert figures["turns"] == len(clarifications)
        asked = len(clarifications) if clarify else 0
        assert (figures["asked"], figures["answered"]) == (asked, asked)
        assert figures["questions_in_all_turns"] == (len(code_turns) if clarify else 0)
        assert script.calls.get("simulator", 0) == (len(code_turns) if clarify else 0)
    out, _ = runs["air"]
    saved = json.loads((out / "trajectories" / "cars-08.json").read_text())
    users = [step for step in saved["steps"] if step["type"] == "user"]
    assert users[0] == {
        "type": "user",
        "content": BY_ID["cars-08"].instructions[-1],
        "question": None,
        "source": "task",
    }
    assert users[1]["source"] == "simulator" and users[1]["question"] == "What exactly do you mean?"
    assert users[1]["content"] == BY_ID["cars-08"].gold.data["clarification"]
    simulator_calls = [
        s for s in saved["steps"] if s["type"] == "note" and s["data"].get("model") == "fake-simulator"
    ]
    assert len(simulator_calls) == 1


def test_each_agent_reasons_its_own_way(runs: dict[str, tuple[Path, Script]]) -> None:
    for name in AGENTS:  # private dialogues: functions first
        assert runs[name][1].calls["retrieve"] == sum(bool(t.libraries) for t in _tasks(name))
    assert "pseudocode" not in runs["cot"][1].calls
    assert runs["air"][1].calls["pseudocode"] > 0
    # react-mc runs code in its sandbox for multiple choice (after the history ran there)
    saved = json.loads((runs["react-mc"][0] / "trajectories" / "weather-05.json").read_text())
    actions = [step for step in saved["steps"] if step["type"] == "action"]
    assert len(actions) == 1 and actions[0]["observation"]["error"] is None
    assert "'temp_by_month'" in actions[0]["observation"]["stdout"]  # the history's variables exist
    report = json.loads((runs["base"][0] / "report.json").read_text())
    assert report["agent"]["code_actions"] == 0  # base writes code, it does not run it
    assert runs["base"][1].calls["choice"] == sum(t.answer_format.kind == "choice" for t in _tasks("base"))


def _task(task_id: str) -> Task:
    return BY_ID[task_id]


def test_the_scripted_simulator_answers_offline(tmp_path: Path) -> None:
    script = Script(SUITE.tasks)
    with FakeOpenAI() as server:
        server.responder = script.respond
        model = ModelSettings(model="fake-model", base_url=server.base_url, api_key_env="NO_KEY")
        agent = make_agent("base", AgentSettings(model=model, cache_mode="off"), {"clarify": True})
        run_suite(SUITE, agent, tmp_path / "run", ids=["macro-06", "cars-08"], concurrency=2)
    records = _records(tmp_path / "run")
    assert {i: r["score"]["value"] for i, r in records.items()} == {"macro-06": 1.0, "cars-08": 1.0}
    assert "simulator" not in script.calls  # no model plays the user
    saved = json.loads((tmp_path / "run" / "trajectories" / "macro-06.json").read_text())
    answer = next(s for s in saved["steps"] if s["type"] == "user" and s["source"] == "simulator")
    assert answer["content"] == _task("macro-06").gold.data["clarification"]


def test_a_run_is_rescored_by_replaying_it(runs: dict[str, tuple[Path, Script]], tmp_path: Path) -> None:
    source = runs["react-mc"][0]
    refused = subprocess.run(
        [sys.executable, "-m", "daharness", "rescore", str(source), "--out", str(tmp_path / "re")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and "--agent replay" in refused.stderr
    replayed = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", "interactive", "--agent", "replay",
         "--replay-from", str(source), "--ids", "cars-05,weather-05,wine-03", "--interactive-mode", "official",
         "--out", str(tmp_path / "replay"), "-j", "2"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    records = _records(tmp_path / "replay")
    # official mode: SSIM alone lets the histogram of another column pass; AccR from the syntax tree
    assert records["cars-05"]["score"]["value"] == 1.0
    assert (
        records["weather-05"]["score"]["value"] == 1.0
        and records["wine-03"]["score"]["details"]["accr"] == 0.0
    )
    assert (
        json.loads((tmp_path / "replay" / "run.json").read_text())["scoring"]["modes"]["interactive"]
        == "official"
    )


def test_the_command_line_sets_clarification_and_the_simulator(tmp_path: Path) -> None:
    script = Script(SUITE.tasks)
    with FakeOpenAI() as server:
        server.responder = script.respond
        done = subprocess.run(
            [sys.executable, "-m", "daharness", "run", "--suite", "interactive", "--agent", "cot", "--model", "m",
             "--base-url", server.base_url, "--clarify", "--simulator-model", "user-model", "--cache", "off",
             "--ids", "cars-08,cars-04", "--out", str(tmp_path / "run")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    spec = json.loads((tmp_path / "run" / "run.json").read_text())
    assert spec["agent"]["clarify"] is True and spec["agent"]["simulator"]["model"] == "user-model"
    assert spec["scoring"]["modes"]["interactive"] == "corrected"
    assert {i: r["score"]["value"] for i, r in _records(tmp_path / "run").items()} == {
        "cars-08": 1.0,
        "cars-04": 0.0,
    }
    assert script.calls["simulator"] == 1 and "Table 3" in done.stdout
