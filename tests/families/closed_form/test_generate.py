"""`daharness generate closed-form` against the scripted model server, on two real tables of the built-in
suite (iris and wine: scikit-learn's exports, CC BY 4.0 / BSD-3-Clause, see the family README).

One generation, made once for the module: killed while it waits on the model for its last item, then run
again to the end; the suite it leaves must pass `validate` and score 100% with the reference agent.
The scripted replies: item 0 agrees (one solution at a finer precision), item 1's solutions disagree
(Pearson against Spearman), item 2's question is not JSON, item 3 agrees.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_openai import FakeOpenAI
from helpers import wait_until

from daharness.suites import builtin_suites

TABLES = builtin_suites()["closed-form"] / "tables"
CONCEPTS = "Summary Statistics,Correlation Analysis"

QUESTIONS: dict[int, str] = {
    0: json.dumps({
        "question": "What are the mean and the sample standard deviation of 'sepal length (cm)'?",
        "constraints": "Use all rows; ddof=1. Round both to two decimal places.",
        "format": "@mean_sepal_length[mean], @std_sepal_length[std] where both are floats rounded to two decimal places.",
        "concepts": ["Summary Statistics"], "level": "easy",
    }),
    1: json.dumps({
        "question": "How strongly are 'petal length (cm)' and 'sepal width (cm)' correlated?",
        "constraints": "Round the coefficient to three decimal places.",
        "format": "@r[coefficient] where coefficient is a float rounded to three decimal places.",
        "concepts": ["Correlation Analysis"], "level": "easy",
    }),
    2: "Sure! Here is a great question: {question: mean alcohol",
    3: "```json\n" + json.dumps({
        "question": "What is the Pearson correlation between 'alcohol' and 'color_intensity'?",
        "constraints": "Use pandas' corr (Pearson). Round to two decimal places.",
        "format": "@r_alcohol_color[r] where r is a float rounded to two decimal places.",
        "concepts": ["Correlation Analysis"], "level": "medium",
    }) + "\n```",
}  # fmt: skip

_READ = "import pandas as pd\ndf = pd.read_csv({table!r})\n"
SOLUTIONS: dict[int, list[str]] = {
    0: [
        _READ.format(table="iris.csv") + "c = df['sepal length (cm)']\n"
        "print(f'@mean_sepal_length[{c.mean():.2f}]')\nprint(f'@std_sepal_length[{c.std():.2f}]')\n",
        _READ.format(table="iris.csv") + "print('@mean_sepal_length[%.2f], @std_sepal_length[%.2f]' % "
        "(df.iloc[:, 0].mean(), df.iloc[:, 0].std(ddof=1)))\n",
        _READ.format(table="iris.csv") + "c = df['sepal length (cm)']\n"
        "print(f'@mean_sepal_length[{c.mean():.4f}] @std_sepal_length[{c.std():.4f}]')\n",
    ],
    1: [
        _READ.format(table="iris.csv")
        + f"print(f\"@r[{{df['petal length (cm)'].corr(df['sepal width (cm)'], method={method!r}):.3f}}]\")\n"
        for method in ("pearson", "pearson", "spearman")
    ],
    3: [
        _READ.format(table="wine.csv") + "print(f\"@r_alcohol_color[{df['alcohol'].corr(df['color_intensity']):.2f}]\")\n",
        "import csv, statistics\nrows = list(csv.DictReader(open('wine.csv')))\n"
        "a = [float(r['alcohol']) for r in rows]; c = [float(r['color_intensity']) for r in rows]\n"
        "print(f'@r_alcohol_color[{statistics.correlation(a, c):.2f}]')\n",
        _READ.format(table="wine.csv") + "print('@r_alcohol_color[', round(df.alcohol.corr(df.color_intensity), 2), ']', sep='')\n",
    ],
}  # fmt: skip


class Scripted:
    """Replies by what is asked: the question of an item, or its n-th solution. The question of item 3
    waits until `release` is set, so that the generation can be killed while it waits."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked: list[tuple[str, int]] = []

    def __call__(self, request: dict[str, Any]) -> str:
        user = request["messages"][-1]["content"]
        solution = re.search(r"independent solution (\d+) of \d+ for item (\d+)", user)
        if solution:
            self.asked.append(("solution", int(solution[2])))
            return f"Here it is:\n```python\n{SOLUTIONS[int(solution[2])][int(solution[1]) - 1]}```"
        item = int(re.search(r"\(item (\d+)\)", user)[1])  # type: ignore[index]
        self.asked.append(("question", item))
        if item == 3:
            self.release.wait(timeout=60)
        return QUESTIONS[item]


def _generate(base_url: str, tables: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "daharness", "generate", "closed-form", "--tables", str(tables),
        "--model", "fake-model", "--base-url", base_url, "--out", str(out), "--per-table", "2",
        "--concepts", CONCEPTS,
    ]  # fmt: skip


def _journal(out: Path) -> list[dict[str, Any]]:
    path = out / "review.jsonl"
    lines = path.read_text().split("\n")[:-1] if path.is_file() else []  # whole lines: one may be in writing
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("generate")
    tables = root / "tables"
    tables.mkdir()
    for name in ("iris.csv", "wine.csv"):
        shutil.copyfile(TABLES / name, tables / name)
    out = root / "generated"
    scripted = Scripted()
    with FakeOpenAI() as server:
        server.responder = scripted
        first = subprocess.Popen(
            _generate(server.base_url, tables, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            wait_until(lambda: len(_journal(out)) >= 3 or first.poll() is not None, 120, "three items")
            wait_until(lambda: ("question", 3) in scripted.asked, 60, "the question of item 3")
            killed_at = [entry["id"] for entry in _journal(out)]
        finally:
            first.kill()
            first.communicate()
        scripted.release.set()
        asked_before = len(scripted.asked)
        second = subprocess.run(
            _generate(server.base_url, tables, out), capture_output=True, text=True, check=False
        )
    return {"out": out, "killed_at": killed_at, "first": first.returncode, "second": second,
            "asked_after": scripted.asked[asked_before:]}  # fmt: skip


def test_a_killed_generation_resumes_without_duplicates(generated: dict[str, Any]) -> None:
    assert generated["first"] != 0 and generated["killed_at"] == [0, 1, 2]
    assert generated["second"].returncode == 0, generated["second"].stderr
    assert [entry["id"] for entry in _journal(generated["out"])] == [0, 1, 2, 3]
    # the resumed run asked only for the item in flight when it was killed
    assert {item for _, item in generated["asked_after"]} == {3}
    assert "2 of 4 questions kept" in generated["second"].stdout


def test_each_question_is_kept_or_dropped_with_its_reason(generated: dict[str, Any]) -> None:
    entries = {entry["id"]: entry for entry in _journal(generated["out"])}
    assert [entries[i]["kept"] for i in range(4)] == [True, False, False, True]
    assert entries[1]["reason"].startswith("solutions disagree: 2 of 3 agree, 3 needed")
    assert entries[2]["reason"] == "malformed: the reply holds no JSON object"
    assert entries[2]["solutions"] == [] and entries[2]["reply"] == QUESTIONS[2]
    # agreement at the precision of the label: 5.8433 agrees with 5.84, and 5.84 is the label
    assert entries[0]["labels"] == [["mean_sepal_length", "5.84"], ["std_sepal_length", "0.83"]]
    wine = pd.read_csv(TABLES / "wine.csv")
    assert entries[3]["labels"] == [["r_alcohol_color", f"{wine.alcohol.corr(wine.color_intensity):.2f}"]]
    assert all(entry["tokens"]["prompt"] > 0 for entry in entries.values())
    page = (generated["out"] / "review.html").read_text()
    assert "solutions disagree" in page and "2 of 4 questions kept" in page


def test_the_generated_suite_validates_and_its_references_score_everything(
    generated: dict[str, Any], tmp_path: Path
) -> None:
    suite = f"dabench:{generated['out']}"
    questions = [json.loads(line) for line in (generated["out"] / "questions.jsonl").read_text().splitlines()]
    assert [(q["id"], q["file_name"], q["level"]) for q in questions] == [
        (0, "iris.csv", "easy"),
        (3, "wine.csv", "medium"),
    ]
    checked = subprocess.run([sys.executable, "-m", "daharness", "validate", "--suite", suite],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "daharness", "run", "--suite", suite, "--agent", "reference",
                           "--out", str(run), "-j", "2"], capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["score"]["value"]) for r in records) == [("0", 1.0), ("3", 1.0)]


def test_a_folder_generated_with_other_settings_is_refused(generated: dict[str, Any]) -> None:
    command = _generate("http://127.0.0.1:9/v1", generated["out"].parent / "tables", generated["out"])
    command[command.index("--per-table") + 1] = "3"
    refused = subprocess.run(command, capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    assert "generated with another per-table (2)" in refused.stderr


# ---- the rules on their own (no model, no sandbox) ------------------------------------------------------


def _question_task() -> Any:
    from daharness.families.closed_form.generate import Slot, parse_question
    from daharness.families.closed_form.loader import _to_task

    row, why = parse_question(
        QUESTIONS[0], Slot(0, "iris.csv", "Summary Statistics", "easy"), ("Summary Statistics",)
    )
    assert why == "" and row is not None
    return row, _to_task(row, TABLES / "iris.csv", [], [], "test", None)


def test_solutions_that_never_read_the_table_are_not_run_and_leave_the_question_unanswerable() -> None:
    from daharness.families.closed_form.generate import agreement, run_solutions

    _, task = _question_task()
    constant = "print('@mean_sepal_length[5.84] @std_sepal_length[0.83]')\n"
    runs = run_solutions(task, [constant] * 3, "no-such-backend", None)  # never opens a sandbox
    assert [run["problem"] for run in runs] == ["it never names iris.csv"] * 3
    chosen, agreed, why = agreement(task, runs, 2)
    assert (chosen, agreed) == (None, 0)
    assert why.startswith(
        "unanswerable: 0 of 3 solutions gave every answer (solution 1: it never names iris.csv"
    )


def test_agreement_is_at_the_labels_precision_and_counts_the_majority() -> None:
    from daharness.families.closed_form.generate import agreement

    _, task = _question_task()
    runs = [
        {"answers": [["mean_sepal_length", "5.8433"], ["std_sepal_length", "0.8281"]], "problem": ""},
        {"answers": [["mean_sepal_length", "5.84"], ["std_sepal_length", "0.83"]], "problem": ""},
        {"answers": [["mean_sepal_length", "5.85"], ["std_sepal_length", "0.83"]], "problem": ""},
    ]
    assert agreement(task, runs, 2) == (1, 2, "")  # 5.8433 matches the label 5.84, not the other way round
    chosen, agreed, why = agreement(task, runs, 3)
    assert (chosen, agreed) == (None, 2) and why.startswith("solutions disagree: 2 of 3 agree, 3 needed")


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"question": "What is the mean petal width?", "format": "the mean", "concepts": ["Summary Statistics"], "level": "easy"}',
         "format invalid: it names no answer as @name[value]"),
        ('{"question": "What is the mean petal width?", "format": "@m[x] @m[y]", "concepts": ["Summary Statistics"], "level": "easy"}',
         "format invalid: an answer name is used twice"),
        ('{"question": "What is the mean petal width?", "format": "@m[x]", "concepts": ["Astrology"], "level": "easy"}',
         "format invalid: unknown concept 'Astrology'"),
        ('{"question": "What is the mean petal width?", "format": "@m[x]", "concepts": ["Summary Statistics"]}',
         "malformed: field level: Field required"),
        ('{"question": "What is the mean', "malformed: the reply holds no JSON object"),
    ],
)  # fmt: skip
def test_malformed_and_invalid_questions_are_dropped_with_the_reason(reply: str, why: str) -> None:
    from daharness.families.closed_form.generate import Slot, parse_question

    assert parse_question(
        reply, Slot(0, "iris.csv", "Summary Statistics", "easy"), ("Summary Statistics",)
    ) == (None, why)


def test_answers_written_in_the_question_are_trivial() -> None:
    from daharness.families.closed_form.generate import filter_kept

    row, task = _question_task()
    row = {**row, "constraints": "The mean is 5.84 and the deviation 0.83; report them."}
    labels = [("mean_sepal_length", "5.84"), ("std_sepal_length", "0.83")]
    assert filter_kept(row, labels, task) == "trivial: every answer is written in the question"
    assert filter_kept({**row, "constraints": ""}, labels, task) == ""
