"""`daharness generate interactive` against the scripted model server, on two real tables of the built-in
suites (iris, wine). Two dialogues of three turns (normal, insight mining, clarification); the data
scientist's second reply in the wine dialogue is not JSON, and its third names a column the table lacks:
both turns are dropped. The suite must pass
`validate` and score 100% with the reference agent."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daharness.suites import builtin_suites

TABLES = builtin_suites()["closed-form"] / "tables"

PERSONAS = {
    1: {"user": "botanist", "description": "A botanist compares the flowers of three iris species."},
    2: {"user": "wine merchant", "description": "A wine merchant looks for strong wines."},
}
REQUESTS = {
    (1, 1): {"query": "Load iris.csv as `iris` and give me the mean petal length of each species."},
    (1, 2): {"query": "Which species has the longest petals on average?"},
    (1, 3): {"query": "Show me the big flowers.", "clarification": "Flowers with petals longer than 6 cm: species and petal length."},
    (2, 1): {"query": "Load wine.csv as `wine` and count the wines of each cultivar."},
    (2, 2): {"query": "Which cultivar is the most common?"},
    (2, 3): {"query": "Give me the strong wines.", "clarification": "Alcohol above 14: their cultivar and alcohol, and how many."},
}  # fmt: skip
ANSWERS = {
    (1, 1): {"code": "import pandas as pd\niris = pd.read_csv('iris.csv')\n"
             "petal_means = iris.groupby('species')['petal length (cm)'].mean()\nprint(petal_means)\n",
             "results": [{"type": "series", "name": "petal_means"}]},
    (1, 2): {"choices": ["setosa", "versicolor", "virginica", "None of the above"],
             "code": "best = petal_means.idxmax()\n"
             "print('Answer:', 'ABC'[['setosa', 'versicolor', 'virginica'].index(best)])\n"},
    (1, 3): {"code": "big = iris.loc[iris['petal length (cm)'] > 6, ['species', 'petal length (cm)']]\nprint(big)\n",
             "results": [{"type": "dataframe", "name": "big"}]},
    (2, 1): {"code": "import pandas as pd\nwine = pd.read_csv('wine.csv')\n"
             "counts = wine['cultivar'].value_counts().sort_index()\nprint(counts)\n",
             "results": [{"type": "series", "name": "counts"}]},
    (2, 2): "The most common one is class_1, I am quite sure.",
    (2, 3): {"code": "strong = wine.loc[wine['alcool'] > 14, ['cultivar', 'alcohol']]\nn_strong = len(strong)\n",
             "results": [{"type": "dataframe", "name": "strong"}, {"type": "scalar", "name": "n_strong"}]},
}  # fmt: skip


def responder(request: dict[str, Any]) -> str:
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if "invent the client" in system:
        return json.dumps(PERSONAS[int(re.search(r"\(dialogue (\d+)\)", user)[1])])  # type: ignore[index]
    key = tuple(int(n) for n in re.search(r"dialogue (\d+), turn (\d+)", user).groups())  # type: ignore[union-attr]
    reply = ANSWERS[key] if system.startswith("You are a data scientist") else REQUESTS[key]
    return reply if isinstance(reply, str) else "```json\n" + json.dumps(reply) + "\n```"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from fake_openai import FakeOpenAI

    root = tmp_path_factory.mktemp("generate-interactive")
    tables = root / "tables"
    tables.mkdir()
    for name in ("iris.csv", "wine.csv"):
        shutil.copyfile(TABLES / name, tables / name)
    out = root / "dialogues-suite"
    with FakeOpenAI() as server:
        server.responder = responder
        done = subprocess.run(
            [sys.executable, "-m", "daharness", "generate", "interactive", "--tables", str(tables),
             "--model", "fake-model", "--base-url", server.base_url, "--out", str(out),
             "--dialogues", "2", "--turns", "3"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    return {"out": out, "done": done}


def test_two_dialogues_with_their_turn_types_and_a_dropped_turn(generated: dict[str, Any]) -> None:
    done, out = generated["done"], generated["out"]
    assert done.returncode == 0, done.stderr
    assert "2 of 2 dialogues, 4 of 6 turns kept" in done.stdout
    first = json.loads((out / "dialogues" / "d1.json").read_text())
    assert (first["user"], first["tables"]) == ("botanist", ["iris.csv"])
    kinds = [(t.get("answer_type", "code"), t.get("action")) for t in first["turns"]]
    assert kinds == [("code", None), ("choice", "insight_mining"), ("code", "clarification")]
    assert first["turns"][1]["answer"] == "C"  # virginica, computed by running the code
    assert first["turns"][2]["clarification"].startswith("Flowers with petals longer than 6 cm")
    second = json.loads((out / "dialogues" / "d2.json").read_text())
    assert [t["query"] for t in second["turns"]] == [REQUESTS[(2, 1)]["query"]]
    journal = [json.loads(line) for line in (out / "review.jsonl").read_text().splitlines()]
    dropped = [(e["number"], a["turn"], a["reason"]) for e in journal for a in e["tried"] if not a["kept"]]
    assert dropped == [
        (2, 2, "malformed: the data scientist's reply holds no JSON object"),
        (2, 3, "the code fails: KeyError: 'alcool'"),
    ]


def test_the_generated_dialogues_validate_and_their_references_score_everything(
    generated: dict[str, Any], tmp_path: Path
) -> None:
    suite = f"interactive:{generated['out']}"
    checked = subprocess.run([sys.executable, "-m", "daharness", "validate", "--suite", suite],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "daharness", "run", "--suite", suite, "--agent", "reference",
                           "--out", str(run), "-j", "2"], capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["score"]["value"]) for r in records) == [
        ("d1-01", 1.0), ("d1-02", 1.0), ("d1-03", 1.0), ("d2-01", 1.0)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "answer", "why"),
    [
        ("normal", {"code": "x = 1", "results": []}, "malformed: a code turn needs 'results'"),
        ("normal", {"code": "x = 1", "results": [{"type": "tensor", "name": "x"}]},
         "malformed: result {'type': 'tensor', 'name': 'x'} is not {type, name} of a known type"),
        ("plot", {"code": "x = 1", "results": [{"type": "plot"}]},
         "malformed: result {'type': 'plot'} is not {type, file} of a known type"),
        ("best_guess", {"code": "print('Answer: A')", "choices": ["only one"]},
         "malformed: 'choices' must list 2 to 10 option texts"),
        ("clarification", {"code": "x = 1", "results": [{"type": "scalar", "name": "x"}]},
         "malformed: a clarification turn needs the client's 'clarification'"),
        ("plot_qa", {"choices": ["a", "b"]}, "malformed: the data scientist gave no code"),
    ],
)  # fmt: skip
def test_a_malformed_answer_is_dropped_with_the_reason(kind: str, answer: dict[str, Any], why: str) -> None:
    from daharness.families.interactive.generate import _turn_of

    assert _turn_of(kind, {"query": "q"}, answer) == (None, why)


def test_a_well_formed_choice_turn_gets_its_action() -> None:
    from daharness.families.interactive.generate import _turn_of

    turn, why = _turn_of("best_guess", {"query": "q"}, {"code": "print('Answer: B')", "choices": ["a", "b"]})
    assert why == "" and turn == {
        "query": "q", "code": "print('Answer: B')", "answer_type": "choice", "action": "best_guess", "choices": ["a", "b"]
    }  # fmt: skip
