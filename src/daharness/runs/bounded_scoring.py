"""Host-side scoring of the agent's files, within limits: the scorers run on the host (they need the gold
files), so what the agent left behind must not be able to exhaust the host through them.

- Input: agent files larger than `Limits.score_file_mb` are withheld from the scorers (a scorer that
  needs one finds no file and scores 0), and the score says which and why.
- Memory and time: when the agent changed any file, the scorers run in a child of a scoring worker
  (`score_worker.py`) with a cap on its data memory (RLIMIT_DATA) and CPU time (RLIMIT_CPU), and the
  host kills it after `Limits.score_seconds` of wall time. Running over scores 0 with the reason; an exception in a scorer
  is still an error of the harness, as before.

Scorers of answers alone (the agent changed no file, or the family scores answers only) run in the
harness's own process: there is nothing hostile to read, and a worker would only cost time.
"""

from __future__ import annotations

import signal
from dataclasses import replace
from typing import Any

from daharness.core.backend import SkippedEntry, Snapshot
from daharness.core.limits import Limits
from daharness.core.registry import families, scorers
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.runs.score_worker import score_in_worker
from daharness.sandbox.workspace import display_name
from daharness.scoring import score_submission


def _reads_files(task: Task) -> bool:
    """Whether the task's family scores files (`FamilyBase.reads_files`); unknown families do."""
    return task.family not in families or families.get(task.family).impl.reads_files


class ScoringFailed(RuntimeError):
    """A scorer raised in the child process (the harness's failure, recorded as an error)."""


def score_within_limits(
    task: Task, submission: Submission, snapshot: Snapshot | None, settings: ScoringSettings, limits: Limits
) -> Score:
    withheld = _oversized(snapshot, limits.score_file_mb << 20)
    readable = _without(snapshot, withheld) if snapshot is not None and withheld else snapshot
    if readable is None or not readable.changed or not _reads_files(task):
        score = score_submission(task, submission, readable, settings)
    else:
        score = _score_in_child(task, submission, readable, settings, limits)
    if withheld:
        names = ", ".join(f"{display_name(name)} ({size / 2**20:,.0f} MB)" for name, size in withheld)
        notice = f"not read by the scorers, larger than the {limits.score_file_mb} MB cap: {names}"
        score = score.model_copy(
            update={
                "explanation": f"{notice}; {score.explanation}" if score.explanation else notice,
                "details": {**score.details, "withheld_files": [display_name(n) for n, _ in withheld]},
            }
        )
    return score


def _oversized(snapshot: Snapshot | None, cap: int) -> list[tuple[str, int]]:
    if snapshot is None:
        return []
    found = []
    for name in sorted(snapshot.changed):
        try:
            size = (snapshot.root / name).stat().st_size
        except OSError:
            continue
        if size > cap:
            found.append((name, size))
    return found


def _without(snapshot: Snapshot, withheld: list[tuple[str, int]]) -> Snapshot:
    names = {name for name, _ in withheld}
    return replace(
        snapshot,
        files=snapshot.files - names,
        changed=tuple(name for name in snapshot.changed if name not in names),
        skipped=(*snapshot.skipped, *(SkippedEntry(name, "over_quota") for name in sorted(names))),
    )


def _score_in_child(
    task: Task, submission: Submission, snapshot: Snapshot, settings: ScoringSettings, limits: Limits
) -> Score:
    modules = sorted({scorers.get(spec.name).fn.__module__ for spec in task.scorers})
    if "__main__" in modules:  # a scorer defined in a script cannot be imported by the worker
        return score_submission(task, submission, snapshot, settings)
    kind, payload = score_in_worker(
        modules,
        (task, submission, snapshot, settings),
        memory_mb=limits.score_memory_mb,
        seconds=limits.score_seconds,
    )
    if kind == "ok":
        return payload
    if kind == "error":
        raise ScoringFailed(payload)
    if kind == "worker":
        raise ScoringFailed(f"the scoring worker exited (code {payload})")
    return Score(value=0.0, explanation=_over_limit(kind, payload, limits, snapshot))


def _over_limit(kind: str, exitcode: Any, limits: Limits, snapshot: Snapshot) -> str:
    biggest = max(
        ((name, _size(snapshot, name)) for name in snapshot.changed), key=lambda item: item[1], default=None
    )
    files = (
        f" (largest agent file: {display_name(biggest[0])}, {biggest[1] / 2**20:,.1f} MB)" if biggest else ""
    )
    if kind == "memory":
        return f"scoring stopped: it needed more than {limits.score_memory_mb} MB of memory{files}"
    if kind == "time" or exitcode == -signal.SIGXCPU:
        return f"scoring stopped: it took longer than {limits.score_seconds:g} s{files}"
    return f"scoring stopped: its process died (exit code {exitcode}, e.g. killed for memory){files}"


def _size(snapshot: Snapshot, name: str) -> int:
    try:
        return (snapshot.root / name).stat().st_size
    except OSError:
        return 0
