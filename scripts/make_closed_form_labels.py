"""Compute the labels of a closed-form suite by running each question's reference solution.

For suite authors: after writing or changing `solutions/<id>.py`, run

    python scripts/make_closed_form_labels.py src/daharness/families/closed_form/suite

and review the diff of labels.jsonl. Each solution runs in a scratch copy of its question's table, with
the table's bare file name in the working directory, and must print one `@name[value]` per answer.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

AT_ANSWER = re.compile(r"@(\w+)\[(.*)\]\s*$")


def run_solution(suite: Path, question: dict) -> list[list[str]]:
    solution = suite / "solutions" / f"{question['id']}.py"
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copy(suite / "tables" / question["file_name"], scratch)
        done = subprocess.run(
            [sys.executable, str(solution)], cwd=scratch, capture_output=True, text=True, timeout=120
        )
    if done.returncode != 0:
        raise SystemExit(f"{solution}: exit {done.returncode}\n{done.stderr}")
    answers = [list(m.groups()) for line in done.stdout.splitlines() if (m := AT_ANSWER.match(line.strip()))]
    if not answers:
        raise SystemExit(f"{solution}: printed no @name[value] line")
    return answers


def main() -> None:
    suite = Path(sys.argv[1]).resolve()
    questions_path = suite / (sys.argv[2] if len(sys.argv) > 2 else "questions.jsonl")
    labels_path = suite / (sys.argv[3] if len(sys.argv) > 3 else "labels.jsonl")
    questions = [json.loads(line) for line in questions_path.read_text().splitlines() if line.strip()]
    with labels_path.open("w") as out:
        for question in questions:
            answers = run_solution(suite, question)
            out.write(json.dumps({"id": question["id"], "common_answers": answers}) + "\n")
            print(question["id"], answers)


if __name__ == "__main__":
    main()
