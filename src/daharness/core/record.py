"""One line of samples.jsonl: everything known about one finished (or failed) sample."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from daharness.core.score import Score

Status = Literal["scored", "error"]


# `extra` key of an error record whose model endpoint could not be connected to at all
UNREACHABLE = "endpoint_unreachable"


class SkippedFile(BaseModel):
    """A workspace entry the agent left that was not collected (and not scored): a link, a FIFO..."""

    path: str
    kind: str = Field(description="symlink, hardlink, fifo, socket, device, unreadable, over_quota")
    target: str | None = Field(default=None, description="Where a symlink points (never followed).")


class Suspicion(BaseModel):
    """Something the agent did that an honest solution has no reason to do (report: suspicious actions)."""

    kind: str = Field(
        description="harness_files, interpreter_tampering, call_record_tampering, capture_like_file, link_out, "
        "special_file, kernel_tampering, check_environment"
    )
    detail: str
    step: int | None = Field(default=None, description="Index of the trajectory event, when one did it.")


def sample_key(task_id: str, epoch: int) -> str:
    """Where a sample is kept in a run (records, trajectories/, artifacts/): its task id, and for a
    repeat of a task (`run --epochs N`) the epoch after an `@`."""
    return task_id if epoch == 1 else f"{task_id}@{epoch}"


class SampleRecord(BaseModel):
    id: str
    status: Status
    attempt: int = 1
    epoch: int = Field(default=1, ge=1, description="Which repeat of the task (run --epochs).")
    agent: str
    family: str | None = Field(default=None, description="The task's family; None in runs made before 0.2.")
    score: Score | None = None
    answer: str | None = None
    error: str | None = Field(default=None, description="What failed in the harness, for status 'error'.")
    concepts: list[str] = Field(default_factory=list)
    level: str | None = None
    category: str | None = None
    subcategory: str | None = None
    source_id: int | str | None = None
    tags: list[str] = Field(default_factory=list)
    artifacts: list[str] = Field(default_factory=list)
    agent_metrics: dict[str, Any] = Field(
        default_factory=dict,
        description="completed, stop_reason, steps, code actions/errors, traceback, usage",
    )
    started_at: str
    duration_s: float
    failure: str | None = Field(
        default=None,
        description="What the agent's own code broke (its kernel, its files): scored 0, not retried.",
    )
    skipped_files: list[SkippedFile] = Field(default_factory=list)
    suspicious: list[Suspicion] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        return sample_key(self.id, self.epoch)
