"""Scorers: registered functions from (task, submission, collected files) to a Score.

They never call a model or the network, and read the agent's files only from the collected snapshot.
Importing this package registers the built-in scorers.
"""

from daharness.scoring.apply import score_submission

__all__ = ["score_submission"]
