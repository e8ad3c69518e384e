"""Scorers: pure functions from (task, submission) to a Score. They never call a model or the network."""

from daharness.scoring.base import Score, combine
from daharness.scoring.closed_form import score_closed_form

__all__ = ["Score", "combine", "score_closed_form"]
