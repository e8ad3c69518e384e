"""Small builders shared by tests."""

from __future__ import annotations

from daharness.tasks.model import AnswerFormat, Family, Gold, ScorerSpec, Task, TaskMetadata


def closed_task(
    answers: list[tuple[str, str]],
    *,
    task_id: str = "1",
    concepts: list[str] | None = None,
    level: str = "easy",
) -> Task:
    return Task(
        id=task_id,
        suite="test",
        family=Family.closed_form,
        instructions=["question"],
        gold=Gold(answers=answers),
        answer_format=AnswerFormat(
            text=" ".join(f"@{n}[x]" for n, _ in answers), names=[n for n, _ in answers]
        ),
        scorers=[ScorerSpec(name="closed_form")],
        metadata=TaskMetadata(concepts=concepts or ["Summary Statistics"], level=level),
    )
