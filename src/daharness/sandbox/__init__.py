"""The only place agent code runs: an isolated, resource-limited, stateful Python + Bash + SQL kernel."""

from daharness.sandbox.backends import BACKENDS, UNSAFE_WARNING, Backend, check_backend
from daharness.sandbox.limits import Limits
from daharness.sandbox.observation import ErrorInfo, Observation
from daharness.sandbox.session import Sandbox, SandboxError, kill_all_sandboxes
from daharness.sandbox.workspace import Workspace

__all__ = [
    "BACKENDS",
    "UNSAFE_WARNING",
    "Backend",
    "ErrorInfo",
    "Limits",
    "Observation",
    "Sandbox",
    "SandboxError",
    "Workspace",
    "check_backend",
    "kill_all_sandboxes",
]
