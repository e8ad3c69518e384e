"""The scoring boundary: where what an agent produced is scored, and who is to blame when that fails.

Every host-side scoring of an agent's output (`daharness run`, `score --dacode-...`, `rescore`) goes
through `score_within_limits`, so what the agent left behind can neither run code on the host, nor
exhaust it, nor turn a wrong answer into an infrastructure error:

- Where: when the sample has agent files to read (the agent changed files and the family's scorers
  read files, or the family's after-hook kept evidence files), the scorers run in a child of a scoring
  worker (`score_worker.py`) confined as a sandbox is: no network, the host read-only and invisible
  but for daharness's code and the job's own files (`scoring_inputs.py`), a sandbox user id when
  daharness runs as root. Unconfined only with `confined=False` (`--sandbox unsafe-local`). Scorers
  of answers alone run in the harness's process, unless the answers are longer than 16 K characters:
  there is no file to read, and a worker would only cost time.
- Input: agent files larger than `Limits.score_file_mb` are withheld from the scorers (a scorer that
  needs one finds no file and scores 0), and the score says which and why.
- Memory and time: the worker's child has a cap on its data memory (RLIMIT_DATA) and CPU time
  (RLIMIT_CPU), and the host kills the worker after `Limits.score_seconds` of wall time.
- Blame (docs/scoring-integrity.md, "Who is to blame"): an exception a scorer raises on the agent's
  output, a score that cannot be recorded or sent back, running over memory or time, or a scoring
  child that dies, all score 0 with the reason. Only a problem of the gold side (`GoldProblem`), a
  failure outside the scorers (the task's scorer options, a scorer module that does not import) or a
  worker that cannot start or dies itself raise, to make the sample an infrastructure error.
"""

from __future__ import annotations

import importlib
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from daharness.core.backend import SkippedEntry, Snapshot
from daharness.core.errors import InfrastructureError
from daharness.core.limits import Limits
from daharness.core.registry import families, scorers
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.runs.score_worker import checked_out, score_in_worker
from daharness.runs.scoring_inputs import evidence_files, stage
from daharness.sandbox.bwrap import SCORING_INPUTS, python_roots
from daharness.sandbox.workspace import display_name, remove_tree
from daharness.scoring.apply import recordable

SCORE_SUBMISSION = "daharness.scoring.apply:score_submission"
IN_PROCESS_ANSWER_CHARS = 1 << 14  # longer answers are scored in the worker, within its time and memory


def _reads_files(task: Task) -> bool:
    """Whether the task's family scores files (`FamilyBase.reads_files`); unknown families do."""
    return task.family not in families or families.get(task.family).impl.reads_files


def score_within_limits(
    task: Task,
    submission: Submission,
    snapshot: Snapshot | None,
    settings: ScoringSettings,
    limits: Limits,
    *,
    confined: bool = True,
    call: str = SCORE_SUBMISSION,
) -> Score:
    """Score an agent's output (see the module docstring). `call` ("module:function", taking the same
    arguments as `score_submission`) scores in the worker: rescoring uses it to read an answer file
    there rather than in the harness."""
    withheld = _oversized(snapshot, limits.score_file_mb << 20)
    readable = _without(snapshot, withheld) if snapshot is not None and withheld else snapshot
    if call == SCORE_SUBMISSION and not _agent_files(task, submission, readable):
        score = _in_this_process(task, submission, readable, settings)
    else:
        score = _in_a_worker(call, task, submission, readable, settings, limits, confined)
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


def _agent_files(task: Task, submission: Submission, snapshot: Snapshot | None) -> bool:
    """Whether scoring reads what needs the worker's bounds: agent files, evidence files, or answers
    longer than IN_PROCESS_ANSWER_CHARS (a parser's time can grow faster than its input)."""
    if evidence_files(submission.evidence):
        return True
    if sum(len(answer or "") for answer in submission.answers) > IN_PROCESS_ANSWER_CHARS:
        return True
    return snapshot is not None and bool(snapshot.changed) and _reads_files(task)


def _in_this_process(
    task: Task,
    submission: Submission,
    snapshot: Snapshot | None,
    settings: ScoringSettings,
    call: str = SCORE_SUBMISSION,
) -> Score:
    module, _, name = call.partition(":")
    try:
        return getattr(importlib.import_module(module), name)(task, submission, snapshot, settings)
    except MemoryError:
        return Score(value=0.0, explanation="scoring stopped: the host ran out of memory scoring the answer")


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


def _in_a_worker(
    call: str,
    task: Task,
    submission: Submission,
    snapshot: Snapshot | None,
    settings: ScoringSettings,
    limits: Limits,
    confined: bool,
) -> Score:
    modules = sorted({scorers.get(spec.name).fn.__module__ for spec in task.scorers})
    if "__main__" in modules:  # a scorer defined in a script cannot be imported by the worker: unconfined
        return _in_this_process(task, submission, snapshot, settings, call)
    with checked_out(confined, _code_folders() if confined else ()) as worker:
        job: tuple[Any, ...] = (task, submission, snapshot, settings)
        if worker.inputs is not None:
            staged = worker.inputs / "job"
            remove_tree(staged)
            job = (*stage(task, submission, snapshot, staged, f"{SCORING_INPUTS}/job"), settings)
        try:
            kind, payload = score_in_worker(
                worker, call, modules, job, memory_mb=limits.score_memory_mb, seconds=limits.score_seconds
            )
        finally:
            if worker.inputs is not None:
                remove_tree(worker.inputs / "job")
    if kind == "ok":
        try:
            return recordable(Score.model_validate(payload))
        except (ValueError, TypeError) as exc:
            kind, payload = "unsendable", f"the score sent back is not one ({type(exc).__name__})"
    if kind == "harness":
        raise InfrastructureError(f"scoring failed: {payload}")
    if kind == "worker":
        raise InfrastructureError(f"the scoring worker failed: {payload}")
    if kind == "unsendable":
        return Score(value=0.0, explanation=f"scoring stopped: {payload}", details={"scoring_error": payload})
    return Score(value=0.0, explanation=_over_limit(kind, payload, limits, snapshot))


def _code_folders() -> tuple[Path, ...]:
    """The folders a confined worker must see to import what this process imported from outside the
    Python installation and daharness (plugins' scorers and what they import): the import path entries
    such modules came from."""
    package = Path(__file__).resolve().parents[1]
    entries = {}  # the entry as it is on the import path -> the folder to mount
    for entry in filter(None, sys.path):
        folder = Path(entry).resolve()
        outside = not any(folder.is_relative_to(root) for root in (*python_roots(), package))
        if outside and folder.is_dir():
            entries[entry.rstrip("/") + "/"] = folder
            entries[str(folder).rstrip("/") + "/"] = folder
    used: set[Path] = set()
    own = str(package) + "/"
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None) or ""
        if file.startswith(own):
            continue  # daharness itself is mounted anyway
        found = [prefix for prefix in entries if file.startswith(prefix)]
        if found:  # the entry it was imported from: the deepest one holding it
            used.add(entries[max(found, key=len)])
    return tuple(sorted(used))


def _over_limit(kind: str, exitcode: Any, limits: Limits, snapshot: Snapshot | None) -> str:
    changed = snapshot.changed if snapshot is not None else ()
    biggest = max(((name, _size(snapshot, name)) for name in changed), key=lambda item: item[1], default=None)
    files = (
        f" (largest agent file: {display_name(biggest[0])}, {biggest[1] / 2**20:,.1f} MB)" if biggest else ""
    )
    if kind == "memory":
        return f"scoring stopped: it needed more than {limits.score_memory_mb} MB of memory{files}"
    if kind == "time" or exitcode == -signal.SIGXCPU:
        return f"scoring stopped: it took longer than {limits.score_seconds:g} s{files}"
    return f"scoring stopped: its process died (exit code {exitcode}, e.g. killed for memory){files}"


def _size(snapshot: Snapshot | None, name: str) -> int:
    try:
        return (snapshot.root / name).stat().st_size if snapshot is not None else 0
    except OSError:
        return 0
