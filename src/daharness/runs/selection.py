"""Which tasks of a suite a run takes: `--ids`, a seeded shuffle (`--sample-shuffle`), then `--limit N` or
a range `--limit A-B`, as Inspect AI selects samples. An id that names a task the suite holds but cannot
run here is refused with the suite's reason (the missing application and how to set it up), not as an
unknown id."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from daharness.core.errors import UserError
from daharness.core.task import Task

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True)
class TaskRange:
    """`--limit`: the first N tasks (`N`), or tasks A to B counted from 1, both included (`A-B`)."""

    first: int
    last: int

    @classmethod
    def parse(cls, text: str | int) -> TaskRange:
        found = _RANGE.match(str(text))
        first = last = 0
        if found:
            first, last = (int(found[1]), int(found[2])) if found[2] else (1, int(found[1]))
        if first < 1 or last < first:
            raise UserError(
                "--limit: give N (the first N tasks) or A-B (tasks A to B, counted from 1, both included), "
                f"e.g. 10 or 10-20, not {str(text)!r}"
            )
        return cls(first, last)

    def apply(self, tasks: list[Task]) -> list[Task]:
        return tasks[self.first - 1 : self.last]

    @property
    def text(self) -> str:
        return str(self.last) if self.first == 1 else f"{self.first}-{self.last}"


def select_tasks(
    tasks: Sequence[Task],
    *,
    ids: Sequence[str] | None,
    limit: int | str | TaskRange | None,
    shuffle: int | None = None,
    unsupported: Mapping[str, str] | None = None,
) -> list[Task]:
    """The tasks a run takes, in order: those named by `ids` (all when None), shuffled with the seed
    `shuffle` (the same seed, the same order on every machine and resume), then cut to `limit`. An id the
    suite lists in `unsupported` is refused with its reason."""
    selected = list(tasks)
    if ids is not None:
        if not ids:
            raise UserError("--ids: no task id given")
        by_id = {task.id: task for task in tasks}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise UserError(_not_runnable(missing, unsupported or {}))
        selected = [by_id[i] for i in dict.fromkeys(ids)]
    if shuffle is not None:
        random.Random(shuffle).shuffle(selected)
    if limit is not None:
        selected = (limit if isinstance(limit, TaskRange) else TaskRange.parse(limit)).apply(selected)
    return selected


def _not_runnable(missing: list[str], unsupported: Mapping[str, str]) -> str:
    """Why the ids name no task to run: the tasks that cannot run here with their reasons first."""
    here = [f"task {i} cannot run here: {unsupported[i]}" for i in missing if i in unsupported]
    unknown = [i for i in missing if i not in unsupported]
    if unknown:
        here.append(f"no task with id {', '.join(unknown)} in this suite")
    return "--ids: " + "; ".join(here)
