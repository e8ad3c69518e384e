"""The harness's own screenshots of a desktop sample: the screen after the setup and the screen the agent
left (before the checks), kept in its trajectory as notes with a small JPEG. Whatever the agent records
(a reference solution records no screen at all), the sample's page then shows where it began and ended.
"""

from __future__ import annotations

from daharness.core.backend import SandboxBackend
from daharness.core.desktop import small_jpeg
from daharness.core.submission import Note, Submission

AFTER_SETUP = "screen after the setup"
BEFORE_CHECKS = "screen the agent left, before the checks"


def screen_note(box: SandboxBackend, text: str) -> Note | None:
    """The screen now, as a note (None without a desktop). A screenshot that fails is said, never fatal:
    the sample is about the agent's work, not the harness's picture of it."""
    if box.desktop is None:
        return None
    try:
        view = box.desktop.observe("screenshot")
        return Note(text=text, data={"screenshot_jpeg": small_jpeg(view.image)}) if view.image else None
    except Exception as exc:  # the desktop stopped answering: the checks say what it means
        return Note(text=f"{text}: no screenshot ({type(exc).__name__}: {exc})")


def keep_screens(submission: Submission, first: Note | None, last: Note | None) -> None:
    """The first screen before the agent's events, the last one after them."""
    submission.trajectory[:0] = [first] if first else []
    submission.trajectory += [last] if last else []
