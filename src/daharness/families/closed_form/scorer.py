"""Closed-form (`@name[value]`) scoring, in the official DABench rule and in a corrected one.

Two modes:

* ``strict`` reproduces InfiAgent-DABench's ``eval_closed_form.py`` exactly: answers are found with
  ``re.findall(r"@(\\w+)\\[(.*?)\\]")``, the last occurrence of a name wins, a sub-answer is right if the
  strings are equal or ``abs(float(a) - float(b)) < 1e-6``, and a question without a (non-empty) response
  is excluded from every denominator. A question whose label list is empty counts as correct, because
  ``all({}.values())`` is true in the official script.
* ``normalized`` (default) fixes what is unfair in strict: values are found by bracket balance (so
  ``@x[[1, 2]]`` reads ``[1, 2]``), surrounding whitespace and quotes are ignored, strings compare
  case-insensitively, a number is compared at the precision its label is written with (label ``34.65``
  accepts ``34.650`` and ``34.6504`` but not ``34.6``) or within the official 1e-6, but never within more
  than a thousandth of the label (label ``0.0000001`` does not accept ``0.0000002``), comma-separated and bracketed lists compare
  element by element (``key: value`` lists as mappings), a missing response scores 0 instead of vanishing,
  and a question with no labels is excluded as unscorable. It also closes what strict leaves open to a
  guesser and accepts what only the notation changes:

  - several different values for one name are a hedge and wrong (strict: the last one counts, so
    ``@n[36] or @n[38] or @n[37]`` is right when 37 is last); the same value repeated is fine;
  - an integer label (written without a decimal point) matches only integral numbers: ``37`` and
    ``37.0``, not ``37.4`` (rounding at the label's precision would accept it) nor ``36.6``;
  - a label in percent (written with ``%``, or named ``pct`` / ``percent``, or a value the format says
    is in percent) accepts a trailing ``%``: ``3.23%`` for ``3.23``; nothing is converted, so ``32.3%``
    never matches ``0.323``, and a ``%`` on any other label is wrong;
  - a number may use thousands separators (``1,232.8`` for ``1232.8``, groups of three digits) and the
    Unicode minus (``−0.12`` for ``-0.12``).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any, Literal

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ModeGroup, NoOptions, ScoringContext
from daharness.core.task import Task
from daharness.scoring.plain_number import PLAIN_NUMBER

Mode = Literal["strict", "normalized"]
MODES: tuple[Mode, ...] = ("strict", "normalized")
CLOSED_FORM_MODES = ModeGroup(
    "closed-form",
    ("normalized", "strict"),
    default="normalized",
    help="'strict' is InfiAgent-DABench's official rule; 'normalized' fixes its unfair cases.",
    former_names=("closed_form",),  # run.json of daharness before 0.2's format 3
)

OFFICIAL_PATTERN = re.compile(r"@(\w+)\[(.*?)\]")
_ANSWER_START = re.compile(r"@(\w+)\[")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")  # thousands separators
_PERCENT_WORDS = re.compile(r"percent|pct|%")
_PLACEHOLDER = re.compile(r"@(\w+)\[([^\]]*)\]")
_QUOTES = "\"'`"
_OPEN_TO_CLOSE = {"[": "]", "(": ")", "{": "}"}
_DECIMALS = Context(prec=60)
_STRICT_TOLERANCE = 1e-6


# ---- extraction -------------------------------------------------------------------------------------


def extract_strict(response: str) -> dict[str, str]:
    """The official extraction: non-greedy up to the first ``]``, last occurrence of a name wins."""
    return dict(OFFICIAL_PATTERN.findall(response))


def extract_balanced(response: str) -> dict[str, str]:
    """Like the official extraction, but a value ends at the ``]`` that balances its opening ``[``.

    An opening bracket that never balances falls back to the official non-greedy rule for that answer.
    """
    return {name: values[-1] for name, values in extract_all_balanced(response).items()}


def _balanced_end(text: str, start: int) -> int | None:
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index
    return None


# ---- comparison -------------------------------------------------------------------------------------


def equal_strict(predicted: str | None, label: str) -> bool:
    """The official ``is_equal``: string equality, else floats within 1e-6 (anything unparsable: False)."""
    if predicted == label:
        return True
    try:
        return abs(float(predicted) - float(label)) < _STRICT_TOLERANCE  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def extract_all_balanced(response: str) -> dict[str, list[str]]:
    """Every value given for each name, in order (``extract_balanced`` keeps the last one)."""
    found: dict[str, list[str]] = {}
    position = 0
    while match := _ANSWER_START.search(response, position):
        start = match.end()
        end = _balanced_end(response, start)
        if end is None:
            end = response.find("]", start)
            if end < 0:
                break
        found.setdefault(match.group(1), []).append(response[start:end])
        position = end + 1
    return found


def is_hedge(values: list[str]) -> bool:
    """Several values for one answer that are not all the same value."""
    first = _clean(values[0])
    return any(
        not (_values_match(_clean(v), first, depth=0) and _values_match(first, _clean(v), depth=0))
        for v in values[1:]
    )


def equal_normalized(predicted: str | None, label: str, *, percent: bool = False) -> bool:
    """Compare one sub-answer with the normalized rule described in the module docstring; `percent`
    says the label is a value in percent (a trailing ``%`` is then accepted)."""
    if predicted is None:
        return False
    predicted, label = _clean(predicted), _clean(label)
    if percent or label.endswith("%"):
        predicted, label = _without_percent(predicted), _without_percent(label)
    return _values_match(predicted, label, depth=0)


def _without_percent(value: str) -> str:
    return value[:-1].rstrip() if value.endswith("%") else value


def _clean(value: str) -> str:
    value = value.strip()
    while len(value) >= 2 and value[0] == value[-1] and value[0] in _QUOTES:
        value = value[1:-1].strip()
    return value


def _as_number(value: str) -> Decimal | None:
    value = value.replace("\u2212", "-")  # the Unicode minus
    if _GROUPED.fullmatch(value):
        value = value.replace(",", "")
    if not PLAIN_NUMBER.fullmatch(value):
        return None
    return Decimal(value)


def _numbers_match(predicted: Decimal, label: Decimal) -> bool:
    if label.as_tuple().exponent >= 0:  # type: ignore[operator]  # an integer label: integral numbers only
        return predicted == predicted.to_integral_value() and predicted == label
    # the official 1e-6 forgives labels written with float noise (0.30000000000000004), but never more
    # than a thousandth of the label: for a p-value of 1e-7 it would accept any number near zero
    if abs(predicted - label) < min(Decimal("1e-6"), abs(label) / 1000):
        return True
    step = Decimal(1).scaleb(label.as_tuple().exponent)  # type: ignore[arg-type]
    try:
        return predicted.quantize(step, rounding=ROUND_HALF_UP, context=_DECIMALS) == label
    except InvalidOperation:
        return False


def _values_match(predicted: str, label: str, depth: int) -> bool:
    if predicted.casefold() == label.casefold():
        return True
    label_number, predicted_number = _as_number(label), _as_number(predicted)
    if label_number is not None and predicted_number is not None:
        return _numbers_match(predicted_number, label_number)
    if depth > 4:
        return False
    label_items, predicted_items = _split_items(label), _split_items(predicted)
    if len(label_items) <= 1 and len(predicted_items) <= 1:
        if label_items != [label] or predicted_items != [predicted]:  # a bracket was unwrapped
            return _values_match(_first(predicted_items), _first(label_items), depth + 1)
        return False
    label_map, predicted_map = _as_mapping(label_items), _as_mapping(predicted_items)
    if label_map is not None and predicted_map is not None:
        return label_map.keys() == predicted_map.keys() and all(
            _values_match(predicted_map[key], label_map[key], depth + 1) for key in label_map
        )
    return len(label_items) == len(predicted_items) and all(
        _values_match(p, q, depth + 1) for p, q in zip(predicted_items, label_items, strict=True)
    )


def _first(items: list[str]) -> str:
    return items[0] if items else ""


def _split_items(value: str) -> list[str]:
    """Unwrap one pair of enclosing brackets and split on top-level commas."""
    if len(value) >= 2 and value[0] in _OPEN_TO_CLOSE and _matching_close(value) == len(value) - 1:
        value = value[1:-1]
    items, depth, current = [], 0, []
    for char in value:
        if char in _OPEN_TO_CLOSE:
            depth += 1
        elif char in _OPEN_TO_CLOSE.values():
            depth -= 1
        if char == "," and depth == 0:
            items.append(_clean("".join(current)))
            current = []
        else:
            current.append(char)
    items.append(_clean("".join(current)))
    return [item for item in items if item] if len(items) > 1 else items


def _matching_close(value: str) -> int | None:
    opener, closer, depth = value[0], _OPEN_TO_CLOSE[value[0]], 0
    for index, char in enumerate(value):
        if char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return index
    return None


def _as_mapping(items: list[str]) -> dict[str, str] | None:
    mapping: dict[str, str] = {}
    for item in items:
        key, colon, rest = item.partition(":")
        if not colon:
            return None
        mapping[_clean(key).casefold()] = _clean(rest)
    return mapping


# ---- the scorer -------------------------------------------------------------------------------------


def score_closed_form(task: Task, answer: str | None, *, mode: Mode = "normalized") -> Score:
    """Score a closed-form answer against the task's labels.

    Args:
        task: a task whose ``gold.answers`` holds the (name, value) labels; for duplicate names the
            last label wins, as in the official script.
        answer: the agent's final response text; ``None`` or empty means no response.
        mode: ``strict`` (official rule) or ``normalized`` (corrected rule, default).

    Returns a Score whose value is 1.0 when every sub-answer is right, else 0.0; ``details`` holds each
    sub-answer's label, prediction and verdict, and the counts ``correct`` / ``total``.
    """
    labels = dict(task.gold.answers)
    if mode == "strict":
        if not answer:
            return Score(value=0.0, excluded=True, explanation="no response (excluded, as officially)")
        predicted = extract_strict(answer)
        sub_answers = {
            name: {"label": label, "predicted": predicted.get(name), "correct": equal_strict(predicted.get(name), label)}
            for name, label in labels.items()
        }  # fmt: skip
    elif mode == "normalized":
        if not labels:
            return Score(value=0.0, excluded=True, explanation="task has no labels (unscorable)")
        sub_answers = _normalized_sub_answers(task, labels, answer or "")
    else:
        raise ValueError(f"unknown closed-form mode {mode!r}; choose one of {', '.join(MODES)}")
    correct = sum(entry["correct"] for entry in sub_answers.values())
    all_right = correct == len(sub_answers)
    explanation = f"{correct}/{len(sub_answers)} sub-answers right" + ("" if answer else " (no response)")
    return Score(
        value=1.0 if all_right else 0.0,
        explanation=explanation,
        details={"mode": mode, "sub_answers": sub_answers, "correct": correct, "total": len(sub_answers)},
    )


def _normalized_sub_answers(task: Task, labels: dict[str, str], answer: str) -> dict[str, dict[str, Any]]:
    given, percent = extract_all_balanced(answer), percent_names(task)
    sub_answers: dict[str, dict[str, Any]] = {}
    for name, label in labels.items():
        values = given.get(name) or [None]
        entry: dict[str, Any] = {"label": label, "predicted": values[-1]}
        if len(values) > 1 and is_hedge(values):  # type: ignore[arg-type]
            entry.update(correct=False, hedged=values)
        else:
            entry["correct"] = equal_normalized(values[-1], label, percent=name in percent)
        sub_answers[name] = entry
    return sub_answers


def percent_names(task: Task) -> set[str]:
    """Answer names whose value is in percent: named so (``pct``, ``percent``), or described so by the
    format text (``@rate[rate] where "rate" is ... in percent``; names listed together, ``"mean" and
    "std" are in percent``, share the description)."""
    text = task.answer_format.text
    placeholders = {name: hole.strip().strip("\"'") for name, hole in _PLACEHOLDER.findall(text)}
    found = {name for name in placeholders if _PERCENT_WORDS.search(name.lower())}
    where = text.split(" where ", 1)[1] if " where " in text else ""
    mentions = sorted(
        (match.start(), match.end(), hole)
        for hole in set(placeholders.values())
        if hole
        for match in re.finditer(rf"[\"']{re.escape(hole)}[\"']", where)
    )
    groups: list[tuple[set[str], int]] = []
    for start, end, hole in mentions:
        if groups and re.fullmatch(r"[\s,]*(?:and|or)?[\s,]*", where[groups[-1][1] : start]):
            groups[-1] = (groups[-1][0] | {hole}, end)
        else:
            groups.append(({hole}, end))
    for index, (holes, end) in enumerate(groups):
        stop = min(
            [len(where)]
            + [p for p in (where.find(";", end), where.find(". ", end)) if p >= 0]
            + ([m[0] for m in mentions if m[0] >= end][:1] if index + 1 < len(groups) else [])
        )
        if _PERCENT_WORDS.search(where[end:stop].lower()):
            found |= {name for name, hole in placeholders.items() if hole in holes}
    return found


@scorer("closed_form", modes=CLOSED_FORM_MODES)
def closed_form(context: ScoringContext, options: NoOptions) -> Score:
    """`@name[value]` sub-answers in the final answer against the task's labels (InfiAgent-DABench)."""
    return score_closed_form(context.task, context.submission.answer, mode=context.mode)  # type: ignore[arg-type]
