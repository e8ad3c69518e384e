"""`daharness validate` for closed-form tasks: wrong answers built from the task's own labels.

The labels written back as `@name[value]` must score 1 (else a label cannot be answered as written),
and each answer below changes one sub-answer the way a wrong or careless agent would, so it must
score lower:

* a number moved by 5% (at least one unit of its last written digit), at the label's precision;
* a number rounded to one decimal fewer, when that changes it (`0.9934` -> `0.993`);
* a text or list answered with something else;
* the sub-answer left out.

Both modes catch all of these; hedges (several values for one name) are the scorer's own tests, since
the official rule (strict) takes the last value by design.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal

from daharness.scoring.plain_number import PLAIN_NUMBER


def written(labels: list[tuple[str, str]]) -> str:
    """The labels as an answer: `@name[value]` for each, in order."""
    return " ".join(f"@{name}[{value}]" for name, value in labels)


def damaged_answers(labels: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """(what was changed, the whole answer with that one change) for every sub-answer."""
    for index, (name, value) in enumerate(labels):
        number = Decimal(value.strip()) if PLAIN_NUMBER.fullmatch(value.strip()) else None
        if number is None:
            yield f"{name} answered with other text", _with(labels, index, f"not {value}")
        else:
            yield f"{name} moved by 5%", _with(labels, index, format(_moved(number), "f"))
            rounded = _one_decimal_fewer(number)
            if rounded is not None:
                yield f"{name} rounded to one decimal fewer", _with(labels, index, format(rounded, "f"))
        yield f"{name} left out", _with(labels, index, None)


def _with(labels: list[tuple[str, str]], index: int, new: str | None) -> str:
    """The labels written as an answer with the one at `index` replaced by `new` (None: left out)."""
    kept = labels[:index] + ([(labels[index][0], new)] if new is not None else []) + labels[index + 1 :]
    return written(kept)


def _moved(number: Decimal) -> Decimal:
    exponent = min(number.as_tuple().exponent, 0)  # type: ignore[type-var]
    unit = Decimal(1).scaleb(exponent)
    step = max(abs(number) * Decimal("0.05"), unit)
    return (number + step).quantize(unit, rounding=ROUND_HALF_UP)


def _one_decimal_fewer(number: Decimal) -> Decimal | None:
    exponent = number.as_tuple().exponent
    if not isinstance(exponent, int) or exponent >= 0:
        return None
    rounded = number.quantize(Decimal(1).scaleb(exponent + 1), rounding=ROUND_HALF_UP)
    return rounded if rounded != number else None
