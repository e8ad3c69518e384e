"""A scripted agent that works the screen as a screen-reading agent does: before each click it reads the
accessibility tree of the screen (the observation the harness gives agents), finds the element its script
names, and clicks its centre with the JSON action space; keys and text go through the same actions.
Shell commands, where a script has them, go through the sandbox's bash tool like any agent's."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from daharness.agents.reference import wait_until_still
from daharness.core.backend import SandboxBackend
from daharness.core.desktop import ScreenElement
from daharness.core.errors import InfrastructureError
from daharness.core.submission import Submission
from daharness.core.task import Task

_LOOK_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Click:
    """Click the element of this tag whose name (or else text) is `name`, or `right` and `below` pixels
    off its centre (a control the table shows no name for: a drop-down's search field, a switch beside
    its label)."""

    tag: str
    name: str
    right: int = 0
    below: int = 0


@dataclass(frozen=True)
class ClickCell:
    """Click in a table where the row of one element meets the column of another (`right` pixels from
    the column's left edge): a radio button in a grid, which has no name of its own."""

    row: tuple[str, str]
    column: tuple[str, str]
    right: int = 0


@dataclass(frozen=True)
class WaitFor:
    tag: str
    name: str
    gone: bool = False  # wait until no such element shows


@dataclass(frozen=True)
class Act:
    """One action of the JSON action space as it is (TYPING, PRESS, HOTKEY, SCROLL, MOVE_TO)."""

    action: dict[str, Any]


@dataclass(frozen=True)
class Shell:
    command: str


Step = Click | ClickCell | WaitFor | Act | Shell


def find(sandbox: Any, tag: str, name: str, *, gone: bool = False) -> ScreenElement | None:
    """The first element on the screen with this tag and name, looked for until one shows (or, `gone`,
    until none does)."""
    deadline = time.monotonic() + _LOOK_TIMEOUT_S
    while True:
        elements = sandbox.desktop.observe("a11y_tree").elements
        found = [e for e in elements if e.tag == tag and (e.name or e.text).strip() == name]
        if bool(found) != gone:
            return found[0] if found else None
        if time.monotonic() > deadline:
            shown = sorted({f"{e.tag}:{(e.name or e.text).strip()}" for e in elements})
            state = "still shows" if gone else "is not on the screen"
            raise InfrastructureError(f"{tag} {name!r} {state}; shown: {shown[:80]}")
        time.sleep(0.5)


def _found(sandbox: Any, tag: str, name: str) -> ScreenElement:
    element = find(sandbox, tag, name)
    assert element is not None
    return element


class ScreenScriptAgent:
    name = "screen-script"

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "steps": len(self.steps)}

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        submission = Submission(stop_reason="done")
        for step in self.steps:
            if isinstance(step, Shell):
                observation = sandbox.bash(step.command, timeout=300)
                submission.act("bash", {"command": step.command}, observation)
                if observation.exit_status != 0:
                    raise InfrastructureError(f"{step.command[:80]}: {observation.stderr[-500:]}")
                continue
            if isinstance(step, WaitFor):
                find(sandbox, step.tag, step.name, gone=step.gone)
                continue
            wait_until_still(sandbox.desktop, timeout_s=5)  # a settled screen: a dialog opening moves things
            if isinstance(step, Click):
                x, y = _found(sandbox, step.tag, step.name).center
                action: dict[str, Any] = {"action_type": "CLICK", "x": x + step.right, "y": y + step.below}
            elif isinstance(step, ClickCell):
                row, column = _found(sandbox, *step.row), _found(sandbox, *step.column)
                action = {"action_type": "CLICK", "x": column.x + step.right, "y": row.center[1]}
            else:
                action = step.action
            observation = sandbox.desktop.act(action)  # type: ignore[union-attr]
            submission.act("desktop", {"action": action}, observation)
            if not observation.ok:
                raise InfrastructureError(f"{action}: {observation.error}")
        submission.steps = len(self.steps)
        return submission
