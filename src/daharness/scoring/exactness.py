"""What an instruction fixes about text values, stated in a task's scorer options.

DA-Code's corrected comparisons forgive case and surrounding whitespace in text values, which is right
when the instruction leaves them open and wrong when it fixes them ("weather types in lower case",
"canonical site names", "no stray spaces"). A task says which applies with `case_sensitive` and
`whitespace_sensitive` (both False by default, the forgiving rule); `compat` mode ignores them and
keeps the official evaluator's rule (DA-Code HEAD compares text without case or surrounding spaces).
Order (`ignore_order`) and precision (`tolerance`) are the scorers' own options.
"""

from __future__ import annotations

from daharness.core.scoring import ScorerOptions


class TextRules(ScorerOptions):
    """Scorer options for text values: whether case and surrounding whitespace count (corrected mode)."""

    case_sensitive: bool = False
    whitespace_sensitive: bool = False


def text_key(text: str, *, case_sensitive: bool = False, whitespace_sensitive: bool = False) -> str:
    """A text value as the corrected rule compares it."""
    if not whitespace_sensitive:
        text = text.strip()
    return text if case_sensitive else text.casefold()
