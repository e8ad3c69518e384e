"""Scoring shared by every family: applying a task's scorers (`score_submission`), and the helpers that
several families' scorers use (plain numbers, text exactness, output files, chart captures).

Scorers are registered functions from (task, submission, collected files) to a Score; each family keeps
its own in `families/<name>/`. They never call a model or the network, and read the agent's files only
from the collected snapshot.
"""

from daharness.scoring.apply import score_submission

__all__ = ["score_submission"]
