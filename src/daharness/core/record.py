"""One line of samples.jsonl: everything known about one finished (or failed) sample."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from daharness.core.score import Score

Status = Literal["scored", "error"]


class SampleRecord(BaseModel):
    id: str
    status: Status
    attempt: int = 1
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
    extra: dict[str, Any] = Field(default_factory=dict)
