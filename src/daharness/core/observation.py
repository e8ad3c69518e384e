"""What one step in the sandbox returns."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorInfo(BaseModel):
    name: str
    value: str
    traceback: str = ""


class Observation(BaseModel):
    kind: str = Field(description="python, bash or sql")
    stdout: str = ""
    stderr: str = ""
    error: ErrorInfo | None = None
    truncated: bool = Field(default=False, description="Some output was cut (head and tail kept).")
    exit_status: int | None = Field(default=None, description="Exit status of a bash command.")
    timed_out: bool = False
    restarted: bool = Field(
        default=False, description="The kernel was killed and restarted; variables are lost."
    )
    duration_s: float = 0.0
    files_changed: list[str] = Field(default_factory=list, description="Workspace files created or modified.")

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_status in (None, 0)

    @property
    def has_traceback(self) -> bool:
        """DABench's self-debug signal: the interpreter reported a Traceback."""
        texts = (self.stdout, self.stderr, self.error.traceback if self.error else "")
        return any("Traceback" in text for text in texts)

    @classmethod
    def failure(cls, kind: str, name: str, value: str) -> Observation:
        return cls(kind=kind, error=ErrorInfo(name=name, value=value))
