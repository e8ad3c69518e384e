"""The release's prompt settings on the official files (tapilot-base, -cot, -air) send exactly the prompts
built from each entry's `prompt_with_hist_json`, checked on what a real OpenAI-compatible server on
127.0.0.1 received; on a Plot_QA entry the chart the history drew reaches the model as a table."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_openai import FakeOpenAI

from daharness.agents import AgentSettings, make_agent
from daharness.families.interactive.prompts import AIR_CHOICE, AIR_CODE, AIR_TEACHER
from daharness.families.interactive.release_agents import CHOICE_COT, COT_CUE
from daharness.models import ModelSettings
from daharness.suites import load_suite
from daharness.view.site import ViewSite

from .tapilot_release import CREDIT, LOAD, RESOURCE, _write, choice, entry, eval_value, fenced, save

TWO_TURNS = [(LOAD, CREDIT), ("How many customers are there?", "n = len(credit_customers)\nprint(n)\n")]
GOOD = "good = (credit_customers['class'] == 'good').sum()\n" + save("good", "good")
OPENING = {"role": "assistant", "content": "[YOU (AI assistant)]:"}
CHART = (
    "import matplotlib.pyplot as plt\n"
    "counts = credit_customers['purpose'].value_counts().head(4)\n"
    "counts.plot(kind='bar', title='Loans by purpose')\n"
    "plt.savefig('purpose.png')\n"
    "plt.show()\n"
)
PSEUDOCODE = "// count the rows\nCOUNT ROWS OF credit_customers"


def _entries() -> dict[str, list[dict[str, Any]]]:
    with_opening = entry(2, "credit_card_risk", "value", "And the good ones?", GOOD, history=TWO_TURNS,
                         eval_metrics=eval_value("good"))  # fmt: skip
    with_opening["prompt_with_hist_json"] = [*with_opening["prompt_with_hist_json"], OPENING]
    plotqa = choice(1, "credit_card_risk", "In the chart, which purpose has the second tallest bar?",
                    ["radio/tv", "new car", "business"], "B", "")  # fmt: skip
    plotqa["ref_code_hist"] = CREDIT + CHART
    plotqa["prompt_with_hist_json"][-2]["content"] = fenced(CREDIT + CHART)
    return {
        "normal": [
            entry(1, "credit_card_risk", "value", "How many good customers?", GOOD, history=TWO_TURNS,
                  eval_metrics=eval_value("good")),
            with_opening,
            entry(3, "credit_card_risk", "value", "Load and count.", CREDIT + GOOD, eval_metrics=eval_value("good")),
        ],
        "action_analysis": [choice(1, "credit_card_risk", "Which purpose is the most common?",
                                   ["radio/tv", "new car"], "A", "")],
        "action_plotqa": [plotqa],
    }  # fmt: skip


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tapilot-agents")
    resource = folder / "data" / "resource"
    resource.mkdir(parents=True)
    shutil.copytree(RESOURCE, resource, dirs_exist_ok=True)  # links out of a release are refused
    for name, rows in _entries().items():
        _write(folder / "data" / "dialogue_data" / f"{name}.jsonl", [{k: v for k, v in r.items() if k != "response"}
                                                                     for r in rows])  # fmt: skip
    return folder


def _replies(request: dict[str, Any]) -> str:
    last = request["messages"][-1]["content"]
    if last == AIR_TEACHER:
        return f"<pseudocode>\n{PSEUDOCODE}\n</pseudocode>"
    return "<choice>B</choice>" if "<choice>" in last else fenced(GOOD)


def _solve(agent_name: str, release: Path, task_id: str) -> list[list[dict[str, str]]]:
    """The messages of each request the agent sent for one code entry (no sandbox: these never run code)."""
    task = next(t for t in load_suite(f"tapilot:{release}", files="normal").tasks if t.id == task_id)
    with FakeOpenAI() as server:
        server.responder = _replies
        model = ModelSettings(model="fake-model", base_url=server.base_url, api_key_env="NO_KEY")
        submission = make_agent(agent_name, AgentSettings(model=model, cache_mode="off")).solve(task, None)  # type: ignore[arg-type]
    assert submission.answer == fenced(GOOD)
    return [request["messages"] for request in server.requests]


def test_base_sends_the_entrys_conversation_exactly(release: Path) -> None:
    prompt = _entries()["normal"][0]["prompt_with_hist_json"]
    assert _solve("tapilot-base", release, "normal-1") == [prompt]
    opened = _entries()["normal"][1]["prompt_with_hist_json"]
    assert opened[-1] == OPENING and _solve("tapilot-base", release, "normal-2") == [opened]


def test_cot_fills_the_opening_or_ends_the_request_with_the_cue(release: Path) -> None:
    plain, opened = (e["prompt_with_hist_json"] for e in _entries()["normal"][:2])
    request = {**plain[-1], "content": plain[-1]["content"] + "\n\n" + COT_CUE}
    assert _solve("tapilot-cot", release, "normal-1") == [[*plain[:-1], request]]
    assert _solve("tapilot-cot", release, "normal-2") == [[*opened[:-1], {**OPENING, "content": COT_CUE}]]


def test_air_reflects_on_the_last_turn_then_writes_pseudocode_and_code(release: Path) -> None:
    prompt = _entries()["normal"][0]["prompt_with_hist_json"]
    system, load_q, load_a, count_q, count_a, current = prompt
    teacher, student = _solve("tapilot-air", release, "normal-1")
    # the history with the code's print lines left out, then the teacher's request
    assert teacher == [system, load_q, load_a, count_q,
                       {**count_a, "content": count_a["content"].replace("print(n)\n", "")},
                       {"role": "user", "content": AIR_TEACHER}]  # fmt: skip
    assert len(student) == 1 and student[0]["role"] == "user"
    text = student[0]["content"]
    assert text.startswith(system["content"]) and text.endswith(f"[USER]: {current['content']}\n\n{AIR_CODE}")
    example = text[text.index("Successful example start") : text.index("Successful example end")]
    assert (
        f"[USER]: {count_q['content']}" in example and f"<pseudocode>\n{PSEUDOCODE}\n</pseudocode>" in example
    )
    assert count_a["content"].strip() in example  # the example's code, whole
    assert f"[USER]: {load_q['content']}" in text.split("Successful example start")[0]
    # no earlier turn to learn from (the entry's first turn): CoT, one request
    first = _entries()["normal"][2]["prompt_with_hist_json"]
    assert _solve("tapilot-air", release, "normal-3") == [
        [*first[:-1], {**first[-1], "content": first[-1]["content"] + "\n\n" + COT_CUE}]
    ]


@pytest.fixture(scope="module")
def air_run(release: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """`daharness run --agent tapilot-air` on a code entry and two multiple-choice entries, and what the
    server received."""
    out = tmp_path_factory.mktemp("air-run") / "run"
    with FakeOpenAI() as server:
        server.responder = _replies
        done = subprocess.run(
            [sys.executable, "-m", "daharness", "run", "--suite", f"tapilot:{release}",
             "--ids", "action_analysis-1,action_plotqa-1,normal-1", "--agent", "tapilot-air", "--model", "m", "-j", "3",
             "--base-url", server.base_url, "--cache", "off", "--out", str(out)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out, server.requests


def _scores(out: Path) -> dict[str, float]:
    records = map(json.loads, (out / "samples.jsonl").read_text().splitlines())
    return {record["id"]: record["score"]["value"] for record in records}


def test_air_guides_a_choice_by_the_pseudocode_of_the_last_turn(
    air_run: tuple[Path, list[dict[str, Any]]],
) -> None:
    out, requests = air_run
    prompt = _entries()["action_analysis"][0]["prompt_with_hist_json"]
    asked = [r["messages"] for r in requests if r["messages"][:-1] == prompt[:-1]]  # this entry's
    guided = f"{AIR_CHOICE.format(pseudocode=PSEUDOCODE)}\n{prompt[-1]['content']}\n\n{CHOICE_COT}"
    assert asked == [
        [*prompt[:-1], {"role": "user", "content": AIR_TEACHER}],
        [*prompt[:-1], {**prompt[-1], "content": guided}],
    ]
    assert _scores(out)["action_analysis-1"] == 0.0  # the server says B; A is right


def test_plot_qa_gets_the_history_chart_as_a_table(air_run: tuple[Path, list[dict[str, Any]]]) -> None:
    out, requests = air_run
    counts = pd.read_csv(RESOURCE / "credit_customers.csv")["purpose"].value_counts().head(4)
    rows = "\n".join(f"{purpose} | {count}" for purpose, count in counts.items())
    questions = [
        r["messages"][-1]["content"] for r in requests if "Chart as a table" in r["messages"][-1]["content"]
    ]
    assert len(questions) == 1
    question = questions[0]
    assert "title 'Loans by purpose'" in question and f"category | value\n{rows}\n" in question
    assert question.startswith(AIR_CHOICE.format(pseudocode=PSEUDOCODE)) and question.endswith(CHOICE_COT)
    assert (
        counts.index[1] == "new car" and _scores(out)["action_plotqa-1"] == 1.0
    )  # B, the second tallest bar


def test_the_viewer_shows_the_conversation_the_code_and_the_eval_output(
    air_run: tuple[Path, list[dict[str, Any]]],
) -> None:
    out, _requests = air_run
    assert _scores(out)["normal-1"] == 1.0
    kind, page = ViewSite([out]).get("/runs/0/samples/normal-1.html")  # type: ignore[misc]
    text = page.decode()
    assert kind.startswith("text/html") and "Tapilot-Crossing entry normal:1" in text
    conversation = text[text.index('id="conversation"') : text.index("Code run for the reply")]
    for message in _entries()["normal"][0]["prompt_with_hist_json"]:
        assert f"<pre>{escape(message['content'])}</pre>" in conversation
    code = text[text.index('id="reply-code"') : text.index("eval_metrics output")]
    assert "credit_customers" in code and "pickle" in code and "good.pkl" in code
    assert '<pre id="eval-output">True\n</pre>' in text


def test_chart_to_table_reads_horizontal_bars_and_lines() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from daharness.families.interactive.chart_table import capture_table
    from daharness.sandbox.chart_capture import extract

    figure, (bars, lines) = plt.subplots(1, 2)
    bars.barh(["Hard", "Clay", "Grass"], [120, 80, 30])
    lines.plot([2012, 2013, 2014], [1.5, 2.25, 3.0], label="mean odds")
    lines.set_ylabel("odds")
    try:
        table = capture_table(extract(figure), name="surfaces.png")
    finally:
        plt.close(figure)
    assert table == (
        "--- surfaces.png, axes 1 (barh) ---\nbar\ncategory | value\nHard | 120\nClay | 80\nGrass | 30\n"
        "--- surfaces.png, axes 2 (line): y 'odds' ---\nline 'mean odds'\nx | y\n2012 | 1.5\n2013 | 2.25\n2014 | 3"
    )
