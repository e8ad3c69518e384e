"""Apply a task's scorers to a submission and combine their values with the task's conjunction.

Every scorer call goes through `_scorer_value`: an exception raised while a scorer reads what the
agent produced makes that scorer's value 0 with the reason (`core.scoring.blames_the_agent` decides);
only a problem of the gold side or of the harness propagates, to become an infrastructure error. And
every score is `recordable`: one the run directory could not write or read back (nested too deeply,
too large) is a 0 with the reason, never a sample that fails to be recorded.
"""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import from_json

from daharness.core.backend import Snapshot
from daharness.core.jsonl import json_text
from daharness.core.registry import ScorerEntry, scorers
from daharness.core.runlog import ScoringSettings
from daharness.core.score import Score, combine
from daharness.core.scoring import ScorerOptions, ScoringContext, blames_the_agent
from daharness.core.submission import Submission
from daharness.core.task import Task

_REASON_CHARS = 500  # an exception's text can quote the agent's output at any length
MAX_SCORE_BYTES = 8 << 20  # a score's JSON; more is a 0 (details quoting the agent's output at length)
# levels a score's JSON may lie below in what is read back (a combined score, the sample's record): its
# own depth plus these must stay within the JSON reader's nesting limit
_NESTING_HEADROOM = 8


def score_submission(
    task: Task, submission: Submission, files: Snapshot | None, settings: ScoringSettings | None = None
) -> Score:
    """Score one submission and the files collected after it; each scorer's mode comes from `settings`
    (its mode group's choice, else the group's default)."""
    settings = settings or ScoringSettings()
    if not task.scorers:
        raise ValueError(f"task {task.id} has no scorer")
    scores = []
    for spec in task.scorers:
        entry = scorers.get(spec.name)
        options = entry.parse_options(spec.options, f"task {task.id}")
        mode = settings.mode(entry.modes.name, entry.modes.default) if entry.modes else ""
        context = ScoringContext(task=task, submission=submission, files=files, mode=mode)
        scores.append(recordable(_scorer_value(spec.name, entry, context, options)))
    if len(scores) == 1:
        return scores[0]
    counted = [s for s in scores if not s.excluded]
    if not counted:
        return Score(value=0.0, excluded=True, explanation="every scorer excluded the sample")
    return recordable(
        Score(
            value=combine([s.value for s in counted], task.conjunction),
            explanation=f"{task.conjunction.value} of {len(counted)} scorers",
            details={"scorers": [s.model_dump() for s in scores]},
        )
    )


def _scorer_value(name: str, entry: ScorerEntry, context: ScoringContext, options: ScorerOptions) -> Score:
    try:
        return entry.fn(context, options)
    except MemoryError:
        raise  # the scoring limits say how much memory it needed (runs/bounded_scoring.py)
    except Exception as error:
        if not blames_the_agent(error):
            raise
        reason = f"scorer {name} failed on the agent's output: {describe(error)}"
        return Score(value=0.0, explanation=reason, details={"scoring_error": reason})


def recordable(score: Score) -> Score:
    """`score` as the run directory will read it back (text that is not valid Unicode escaped), or a 0
    saying why it cannot be recorded: its JSON is larger than MAX_SCORE_BYTES or nested too deeply."""
    try:
        text = json_text(score)
        if len(text) > MAX_SCORE_BYTES:
            reason = f"its JSON takes {len(text) / 2**20:,.1f} MB, more than {MAX_SCORE_BYTES >> 20} MB"
        else:
            from_json("[" * _NESTING_HEADROOM + text + "]" * _NESTING_HEADROOM)  # nesting limit
            return Score.model_validate_json(text)
    except RecursionError:
        reason = "it is nested too deeply"
    except (ValueError, ValidationError) as error:
        reason = "it is nested too deeply" if "recursion" in str(error).lower() else describe(error)
    why = f"the score cannot be recorded: {reason}"
    return Score(value=0.0, explanation=why, details={"scoring_error": why})


def describe(error: BaseException) -> str:
    """`Type: message`, cut short: never raises, whatever the exception holds."""
    try:
        text = str(error)
    except Exception:
        text = "(its message cannot be shown)"
    cut = len(text) > _REASON_CHARS
    text = " ".join(text[:_REASON_CHARS].split()) + ("..." if cut else "")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
