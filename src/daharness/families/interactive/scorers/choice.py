"""Multiple-choice answers: which option a reply picks, and the `choice` scorer (Tapilot-Crossing).

``corrected`` (default) reads the letter in this order, the first kind of evidence found deciding:

1. a ``<choice>B</choice>`` tag;
2. an explicit answer: ``Answer: B``, ``the answer is (B)``, ``Final answer: **B**``, ``Terminate[B]``;
   then ``the option is B`` / ``choice: B``;
3. a letter in parentheses, ``(B)``;
4. a reply that is just the letter (``B``, ``B.``, ``**B**``) or starts with it (``B. Japan``, ``B) ...``);
5. the text of one option (``None of the above`` included), written out instead of its letter.

Only letters of the question's options count. When the deciding kind of evidence names two different
options (``Answer: A or C``, two tags that disagree), the reply is ambiguous: it is wrong and flagged.

``official`` reproduces the letter extraction of the released evaluation script (``evaluate.py``,
``extract_model_answer``): with ``</choice>`` and no ``\\nAnswer:``, the letter before ``</choice>``;
with ``\\nAnswer:`` and no ``</choice>``, the letter after it; with neither, ``answer|choice|option is|:
X``, else the first ``X.`` followed by a space, else the first standalone capital letter A-J anywhere (so
"A good option is C" reads as A); with both markers, nothing. Option texts are never read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import Field

from daharness.core.registry import scorer
from daharness.core.score import Check, Score
from daharness.core.scoring import ScorerOptions, ScoringContext
from daharness.families.interactive.scorers.code import INTERACTIVE_MODES, turn_details

LETTERS = "ABCDEFGHIJ"
_TAG = re.compile(r"<choice>\s*\**\s*\(?([A-J])\b", re.IGNORECASE)
_ANSWER = re.compile(r"(?:\banswer\b(?:\s+is)?\s*[:\-]?|terminate\s*\[)\s*", re.IGNORECASE)
_OPTION_IS = re.compile(r"\b(?:choice|option)\s*(?:is|:)\s*", re.IGNORECASE)
_LETTER_RUN = re.compile(r"\**\s*\(?([A-J])\)?(?![A-Za-z'])\**")
_JOINER = re.compile(r"\s*(?:,|/|&|\band\b|\bor\b)\s*", re.IGNORECASE)
_PARENTHESISED = re.compile(r"\(([A-J])\)")
_LONE = re.compile(r"^[\s*_`'\"]*\(?([A-J])\)?[\s.*_`'\"]*$")
_LEADING = re.compile(r"^[\s*_`]*\(?([A-J])[.)]\s")


@dataclass(frozen=True)
class Reading:
    """What a reply answers: the letter (None when there is none or it is ambiguous) and why."""

    letter: str | None
    how: str
    ambiguous: bool = False
    candidates: tuple[str, ...] = field(default=())


def _normalize(text: str) -> str:
    return " ".join(re.sub(r"[^\w%.\-]+", " ", text.lower()).split()).strip(" .")


def _letters_after(text: str, start: int) -> list[str]:
    """Letters listed right after an answer marker: 'B', '(B)', 'A or C', 'A, B'."""
    found = []
    position = start
    while True:
        match = _LETTER_RUN.match(text, position)
        if match is None:
            return found
        found.append(match.group(1).upper())
        joiner = _JOINER.match(text, match.end())
        if joiner is None:
            return found
        position = joiner.end()


def _decide(letters: list[str], how: str, valid: str) -> Reading | None:
    letters = [letter for letter in letters if letter in valid]
    distinct = tuple(dict.fromkeys(letters))
    if not distinct:
        return None
    if len(distinct) > 1:
        return Reading(None, how, ambiguous=True, candidates=distinct)
    return Reading(distinct[0], how, candidates=distinct)


def read_choice(reply: str | None, options: list[str]) -> Reading:
    """The option a reply picks (corrected rules, see the module docstring)."""
    text = (reply or "").strip()
    valid = LETTERS[: len(options)] if options else LETTERS
    if not text:
        return Reading(None, "empty reply")
    tags = [m.group(1).upper() for m in _TAG.finditer(text)]
    if (reading := _decide(tags, "<choice> tag", valid)) is not None:
        return reading
    for marker, how in ((_ANSWER, "explicit answer"), (_OPTION_IS, "option named")):
        stated = [letter for m in marker.finditer(text) for letter in _letters_after(text, m.end())]
        if (reading := _decide(stated, how, valid)) is not None:
            return reading
    if (
        reading := _decide([m.group(1) for m in _PARENTHESISED.finditer(text)], "(letter)", valid)
    ) is not None:
        return reading
    for pattern in (_LONE, _LEADING):
        match = pattern.match(text)
        if match and match.group(1).upper() in valid:
            return Reading(match.group(1).upper(), "lone letter", candidates=(match.group(1).upper(),))
    said = _normalize(text)
    named = [
        letter
        for letter, option in zip(valid, options, strict=False)
        if (wanted := _normalize(option)) and re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", said)
    ]
    # an option whose text is inside another named option's text (e.g. '30' in '30 to 40') is not named
    texts = {letter: _normalize(options[valid.index(letter)]) for letter in named}
    named = [a for a in named if not any(a != b and texts[a] in texts[b] for b in named)]
    if (reading := _decide(named, "option text", valid)) is not None:
        return reading
    return Reading(None, "no option found in the reply")


def read_choice_official(reply: str | None) -> Reading:
    """The released evaluation script's letter extraction (see the module docstring)."""
    text = reply or ""
    has_tag, has_answer = "</choice>" in text, "\nAnswer:" in text
    match = None
    if has_tag and not has_answer:
        match = re.search(r"\b([A-J])\.?\b[^<]*</choice>", text)
    elif has_answer and not has_tag:
        match = re.search(r"\nAnswer:\s*\b([A-J])\.?\b", text)
    elif not has_tag and not has_answer:
        match = (
            re.search(r"(?:answer|choice|option)\s*(?:is|:)\s*\**\s*([A-J])\b", text, re.IGNORECASE)
            or re.search(r"\b([A-J])\.\s", text)
            or re.search(r"\b([A-J])\b", text)
        )
    if match is None:
        return Reading(None, "official: no letter")
    return Reading(match.group(1).upper(), "official", candidates=(match.group(1).upper(),))


class ChoiceOptions(ScorerOptions):
    """`answer`: the right letter; `choices`: the options' texts, in letter order (A first)."""

    answer: str = Field(pattern=r"^[A-J]$")
    choices: list[str] = Field(min_length=2, max_length=10)


@scorer("choice", options=ChoiceOptions, modes=INTERACTIVE_MODES)
def choice(context: ScoringContext, options: ChoiceOptions) -> Score:
    """The reply picks the right option (Acc); an ambiguous reply is wrong and flagged."""
    reply = context.submission.answer
    reading = (
        read_choice_official(reply) if context.mode == "official" else read_choice(reply, options.choices)
    )
    right = reading.letter == options.answer
    if reading.ambiguous:
        explanation = f"ambiguous reply: it names {', '.join(reading.candidates)} ({reading.how})"
    elif reading.letter is None:
        explanation = f"no answer: {reading.how}"
    else:
        explanation = f"picked {reading.letter} ({reading.how}), the answer is {options.answer}"
    details = {
        **turn_details(context),
        "answer_type": "choice",
        "expected": options.answer,
        "picked": reading.letter,
        "how": reading.how,
        "ambiguous": reading.ambiguous,
        "acc": float(right),
        "accr": float(right),
    }
    return Score(
        value=float(right),
        explanation=explanation,
        checks=[Check(name="choice", passed=right, explanation=explanation)],
        details=details,
    )
