"""Scoring throughput: how long 10,000 closed-form responses take to score, in both modes.

Target (issue 2): 10,000 responses in under 2 s on a 2-core machine. The responses are generated with
a fixed seed: prose, several `@name[value]` answers (some wrong, some repeated, some lists), as an agent
would write them. Run: python benchmarks/score_throughput.py [N]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

from daharness.core.task import AnswerFormat, Gold, ScorerSpec, Task, TaskMetadata
from daharness.families.closed_form.figures import dabench_figures, question_result
from daharness.families.closed_form.rescore import rescore_dabench
from daharness.families.closed_form.scorer import MODES, score_closed_form

CONCEPTS = ["Summary Statistics", "Feature Engineering", "Correlation Analysis", "Machine Learning",
            "Distribution Analysis", "Outlier Detection", "Comprehensive Data Preprocessing"]  # fmt: skip


def make_case(rng: random.Random, index: int) -> tuple[Task, str]:
    names = [f"answer_{index}_{k}" for k in range(rng.randint(1, 8))]
    labels = []
    for name in names:
        kind = rng.random()
        if kind < 0.6:
            labels.append((name, f"{rng.uniform(-1000, 1000):.{rng.choice([2, 4])}f}"))
        elif kind < 0.8:
            labels.append((name, rng.choice(["linear", "nonlinear", "none", "Yes", "No"])))
        else:
            labels.append((name, ", ".join(str(rng.randint(0, 999)) for _ in range(rng.randint(2, 6)))))
    task = Task(
        id=str(index), suite="bench", family="closed-form", instructions=["q"],
        gold=Gold(answers=labels), answer_format=AnswerFormat(names=names),
        scorers=[ScorerSpec(name="closed_form")],
        metadata=TaskMetadata(concepts=rng.sample(CONCEPTS, rng.randint(1, 3)), level=rng.choice(["easy", "medium", "hard"])),
    )  # fmt: skip
    parts = ["Thought: I computed the values below (see table [1]).\n"]
    for name, value in labels:
        if rng.random() < 0.1:
            parts.append(f"First guess @{name}[0]. ")
        shown = value if rng.random() < 0.8 else value.upper() + "0"
        parts.append(f"The result for {name} is @{name}[{shown}].\n")
    return task, "".join(parts) * (1 if rng.random() < 0.9 else 3)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    rng = random.Random(20261122)
    cases = [make_case(rng, i) for i in range(count)]
    for mode in MODES:
        started = time.perf_counter()
        results = []
        for task, response in cases:
            score = score_closed_form(task, response, mode=mode)
            results.append(
                question_result(
                    task.id, score.details, score.excluded, task.metadata.concepts, task.metadata.level
                )
            )
        figures = dabench_figures(results)
        elapsed = time.perf_counter() - started
        accuracy = figures["main_results"]["Accuracy by Question"]
        print(
            f"{mode:>10}: {count} responses scored in {elapsed:.3f} s ({count / elapsed:,.0f}/s), accuracy {accuracy}"
        )
    with tempfile.TemporaryDirectory() as folder:
        questions, labels, responses = (Path(folder) / n for n in ("q.jsonl", "l.jsonl", "r.jsonl"))
        with questions.open("w") as q, labels.open("w") as lab, responses.open("w") as r:
            for task, response in cases:
                q.write(json.dumps({"id": int(task.id), "question": "q", "concepts": task.metadata.concepts,
                                    "constraints": "", "format": " ".join(f"@{n}[v]" for n in task.answer_format.names),
                                    "file_name": "t.csv", "level": task.metadata.level}) + "\n")  # fmt: skip
                lab.write(
                    json.dumps({"id": int(task.id), "common_answers": [list(a) for a in task.gold.answers]})
                    + "\n"
                )
                r.write(json.dumps({"id": int(task.id), "response": response}) + "\n")
        started = time.perf_counter()
        figures, _ = rescore_dabench(
            responses, questions=questions, labels=labels, suite=None, mode="normalized"
        )
        elapsed = time.perf_counter() - started
        print(f"files end to end (read questions, labels, responses; score; figures): {elapsed:.3f} s")


if __name__ == "__main__":
    main()
