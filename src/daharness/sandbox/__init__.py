"""Where agent code runs. For now a plain subprocess in a scratch workspace; isolation comes next."""

from daharness.sandbox.local import ExecutionResult, Workspace, kill_all, run_python

__all__ = ["ExecutionResult", "Workspace", "kill_all", "run_python"]
