"""The agent interface: an agent gets a task and a sandbox backend, and hands back a submission; its own
settings are a typed options model, declared with `@agent(name, options=Model)`."""

from __future__ import annotations

from typing import Any, Protocol

from daharness.core.backend import SandboxBackend
from daharness.core.options import TypedOptions
from daharness.core.submission import Submission
from daharness.core.task import Task


class AgentOptions(TypedOptions):
    """Base of an agent's options. Each field is a `run` option (`--memory-window` for `memory_window`,
    or `-A memory_window=5`), its description the help; the chosen agent's model checks what is given
    before the first sample, and run.json records the options as the model dumps them."""


class NoAgentOptions(AgentOptions):
    pass


class Agent(Protocol):
    """An agent of a run. It may also define `check_run(suite, tasks) -> None`, called once before the
    first sample, to refuse a run it cannot do with a one-line UserError (the replay agent: a saved run of
    another suite) rather than fail every sample."""

    name: str

    def describe(self) -> dict[str, Any]:
        """What identifies this agent's configuration in run.json (model, sampling, limits, and its
        options as `options.model_dump(mode="json")` gives them)."""
        ...

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        """Work on the task inside `sandbox` (its workspace holds the task's visible files)."""
        ...
