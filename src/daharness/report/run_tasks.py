"""The tasks of a finished run, loaded again from where its run.json says the suite came from.

Best effort, for showing a sample's request next to its trajectory: runs made before 0.2 do not say how
to load their suite, and a suite named by a relative path or moved since is not found; then there is
nothing to show and nothing fails.
"""

from __future__ import annotations

from pathlib import Path

from daharness.core.runlog import RunSpec
from daharness.core.task import Task


def reload_tasks(spec: RunSpec) -> dict[str, Task]:
    from daharness.suites import load_suite

    name = spec.suite_spec.get("spec")
    if not name:
        return {}
    options = {key: Path(value) for key, value in spec.suite_spec.get("options", {}).items()}
    try:
        suite = load_suite(name, **options)
    except Exception:  # the suite moved, or its files changed shape: the run still shows without it
        return {}
    return {task.id: task for task in suite.tasks}


def request_text(task: Task) -> str:
    """What the agent was asked: the instructions, with constraints and the answer format when present."""
    parts = ["\n\n".join(task.instructions)]
    if task.constraints:
        parts.append(f"Constraints: {task.constraints}")
    if task.answer_format.text:
        parts.append(f"Format: {task.answer_format.text}")
    return "\n\n".join(parts)
