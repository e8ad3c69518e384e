"""Text / JSON answer scoring (DA-Code): the agent's answer, a JSON value, against a gold value.

Two modes:

* ``compat`` follows the official ``compare_text`` (``da_agent/evaluators/metrics/text.py`` of
  ``yiyihum/da-code``, latest version): the gold is a JSON object; the answer is the first ``{...}``
  span of the answer text (greedy, parsed as JSON5) or a ``.json`` answer file (a JSON list yields its
  first object). Top-level keys are compared after lower-casing and trimming; a missing key is wrong,
  extra keys are ignored. Each top-level value is first converted to the gold value's type
  (``type(gold)(answer)``, failure = wrong), then compared: floats within ``tolerance`` (1e-2
  officially), ints exactly, strings without case or surrounding space, lists of equal length element by
  element (sorted by ``str`` first when order is ignored), nested objects with exactly the same keys.
  Inside lists and nested objects the element types must match exactly. The score is 1 when every key is
  right (``score_rule="all"``, the official default) or the fraction of right keys (``"fraction"``,
  spelled ``devide`` in DA-Code's configs). The answer is parsed with ``json5``, as officially. (Older
  official versions compared numbers within 1e-3 and keys with case; ``compat`` follows the latest.)
* ``corrected`` (default) keeps those rules where they are deliberate (case-insensitive keys and
  strings, the numeric tolerance (with binary rounding absorbed at its edge), extra top-level keys allowed, nested objects needing the same keys,
  the two score rules) and fixes the defects below. It also scores non-object gold values (lists,
  scalars: 0 or 1) and accepts an answer that is plain JSON or a bare scalar. Where a task's instruction
  fixes the case or the surrounding whitespace of string values, its ``case_sensitive`` /
  ``whitespace_sensitive`` options make them count (``exactness.py``).

Defects of the official evaluator, reproduced in ``compat`` and fixed in ``corrected``:

1. Booleans (and ``null``) crash it: there is no ``calculate_bool``, so a boolean gold value at the top
   level, or a boolean/``null`` pair inside a list or nested object, raises ``AttributeError``.
   ``compat`` scores such an answer 0 and says the official evaluator crashes there; it never raises.
2. A one-element list never equals its scalar below the top level (the official ``normalize_value``
   only unwraps top-level values), e.g. ``{"a": {"b": [5]}}`` vs ``{"a": {"b": 5}}``.
3. The type conversion truncates: gold ``3`` accepts ``3.9`` (``int(3.9)``); gold ``"None"`` accepts
   ``null`` (``str(None)``).
4. Inside lists and nested objects ``1`` and ``1.0`` differ (exact type match); a top-level gold
   ``null`` never equals anything (``NoneType(answer)`` fails).
5. Empty lists and empty objects never equal each other (``all([])`` is guarded by ``len > 0``).
6. Order-free list comparison sorts by ``str`` and then compares pairwise, so elements that are equal
   only without case or within the tolerance can be paired wrongly (``["b", "A"]`` vs ``["a", "B"]``).
7. With ``score_rule="fraction"`` an empty gold object divides by zero (a crash, scored 0 here).

The official evaluator also compares several alternative gold objects and keeps the best score; call
``score_text`` once per alternative for that.

An answer that names files (the DA-Agent terminates with ``Terminate(output="result.json")``):

* ``compat``: when the answer text ends with ``.txt``, ``.json``, ``.png``, ``.jpg``, ``.csv`` or
  ``.npy``, the official evaluator takes every file name in it (the regex of its
  ``_get_result_file_from_json``, directories dropped), reads ``<output folder>/<name>`` and scores each
  file's content as the answer; several names are scored one by one and averaged. Only ``.json`` files
  are read (a ``.txt`` or ``.csv`` file scores 0), a missing file scores 0, and an answer that ends like
  a file name but holds none scores 0.
* ``corrected``: when every word of the answer (separated by commas or spaces) is a file the agent left
  (its path as written, else its base name at the top of the workspace), each file's text is read as the
  answer and the scores are averaged; otherwise the answer text itself is scored.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workspace.modes import WORKSPACE_MODES
from daharness.scoring.exactness import TextRules, text_key
from daharness.scoring.outputs import nothing_collected
from daharness.scoring.plain_number import PLAIN_NUMBER

Mode = Literal["corrected", "compat"]
MODES: tuple[Mode, ...] = ("corrected", "compat")
ScoreRule = Literal["all", "fraction"]

_OBJECT_SPAN = re.compile(r"\{.*\}", re.DOTALL)
_LIST_SPAN = re.compile(r"\[.*\]", re.DOTALL)
_FENCE = re.compile(r"```[\w+-]*\s*(.*?)\s*```", re.DOTALL)
FORGIVING = TextRules()  # case and surrounding whitespace do not count
_LITERAL_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
# The official evaluator reads the answer from files when the answer text ends with one of these.
OFFICIAL_FILE_SUFFIXES = (".txt", ".json", ".png", ".jpg", ".csv", ".npy")
_OFFICIAL_FILE_NAME = re.compile(r"\b(?:[\w/\-_]+/)?([\w\-_]+(\.\w+)+)\b")  # group 1: the base name


class _OfficialCrash(Exception):
    """The official evaluator raises here; ``compat`` scores 0 instead."""


# ---- parsing ----------------------------------------------------------------------------------------


def _loads(text: str) -> Any:
    """JSON, else JSON5, else Python literal syntax (``True``, ``None``, single quotes). Raises
    ValueError."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    import json5  # loaded when an answer is not plain JSON, not when the scorers register

    try:
        return json5.loads(text)
    except ValueError:
        pass
    try:
        return _literal(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        raise ValueError("not JSON") from None


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | type(None)):
        return node.value
    if isinstance(node, ast.Name) and node.id in _LITERAL_NAMES:
        return _LITERAL_NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.List):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    raise ValueError("not a literal")


def _parse_answer(text: str, expected: Any) -> Any:
    """The corrected reading of an answer: JSON (fences stripped), else the JSON span of the expected
    kind inside the text, else the text itself as a scalar."""
    text = text.strip()
    if fenced := _FENCE.fullmatch(text):
        text = fenced.group(1)
    try:
        return _loads(text)
    except ValueError:
        pass
    span = _OBJECT_SPAN if isinstance(expected, dict) else _LIST_SPAN if isinstance(expected, list) else None
    if span is not None and (match := span.search(text)):
        try:
            return _loads(match.group())
        except ValueError:
            pass
    return text


def _official_answer(answer_text: str | None, answer_file: Path | None) -> tuple[Any, str | None]:
    """The official ``select_expected`` + list handling; returns (answer, why it is missing)."""
    if answer_file is not None:
        if answer_file.suffix != ".json":
            return None, "the official evaluator only reads .json answer files"
        content = answer_file.read_text(encoding="utf-8", errors="replace")
        try:
            value = json.loads(content)
        except ValueError:
            try:
                value = json.loads(content.replace("'", '"'))
            except ValueError:
                return None, "the answer file is not JSON"
    else:
        match = _OBJECT_SPAN.search(answer_text or "")
        if match is None:
            return None, "no {...} object in the answer"
        value = _official_loads(match.group())
        if value is None:
            return None, "the {...} span of the answer is not JSON5"
    if isinstance(value, list):
        value = next((item for item in value if isinstance(item, dict)), None)
        if value is None:
            return None, "the answer is a list without an object"
    return value, None


def _official_loads(span: str) -> Any:
    """The official ``text2json``: JSON5, retried with escaped newlines unescaped; None when both fail."""
    import json5

    for text in (span, span.replace("\\n", "\n")):
        try:
            return json5.loads(text)
        except ValueError:
            continue
    return None


# ---- corrected comparison ---------------------------------------------------------------------------


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and PLAIN_NUMBER.fullmatch(value.strip()):
        return float(value)
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and text_key(value) in ("true", "false"):
        return text_key(value) == "true"
    return None


def _scalar_equal(predicted: Any, expected: Any, tolerance: float, rules: TextRules = FORGIVING) -> bool:
    if isinstance(expected, bool) or isinstance(predicted, bool):
        return _as_bool(predicted) is not None and _as_bool(predicted) == _as_bool(expected)
    if expected is None or predicted is None:
        return expected is None and predicted is None
    a, b = _as_number(predicted), _as_number(expected)
    if a is not None and b is not None:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        difference = abs(a - b)
        # isclose absorbs binary rounding: |1.24 - 1.23| is 0.010000000000000009.
        return difference <= tolerance or math.isclose(difference, tolerance, rel_tol=1e-9)
    if isinstance(expected, str) and isinstance(predicted, str):
        exact = {"case_sensitive": rules.case_sensitive, "whitespace_sensitive": rules.whitespace_sensitive}
        return text_key(predicted, **exact) == text_key(expected, **exact)
    return False


def _keys(mapping: dict[Any, Any]) -> dict[str, Any]:
    return {text_key(str(key)): value for key, value in mapping.items()}


def _equal(
    predicted: Any,
    expected: Any,
    ignore_order: bool,
    tolerance: float,
    top: bool,
    rules: TextRules = FORGIVING,
) -> bool:
    def same(p: Any, e: Any) -> bool:
        return _equal(p, e, ignore_order, tolerance, top=False, rules=rules)

    if isinstance(expected, dict):
        if isinstance(predicted, list) and len(predicted) == 1:
            predicted = predicted[0]
        if not isinstance(predicted, dict):
            return False
        answer, gold = _keys(predicted), _keys(expected)
        # Extra keys are allowed in the answer's envelope only; a nested object is a value.
        if not top and answer.keys() != gold.keys():
            return False
        return all(key in answer and same(answer[key], value) for key, value in gold.items())
    if isinstance(expected, list):
        if not isinstance(predicted, list):
            return len(expected) == 1 and same(predicted, expected[0])
        if len(predicted) != len(expected):
            return len(predicted) == 1 and same(predicted[0], expected)
        if ignore_order:
            return _matched(predicted, expected, same)
        return all(same(p, e) for p, e in zip(predicted, expected, strict=True))
    if isinstance(predicted, list):
        return len(predicted) == 1 and same(predicted[0], expected)
    return _scalar_equal(predicted, expected, tolerance, rules)


def _matched(predicted: list[Any], expected: list[Any], same: Any) -> bool:
    """True when the elements pair up one to one (a maximum matching, so tolerance cannot mislead)."""
    import numpy as np

    if not expected:
        return True
    from scipy.optimize import linear_sum_assignment  # imported when used: the family registers cheaply

    equal = np.array([[same(p, e) for p in predicted] for e in expected], dtype=float)
    rows, cols = linear_sum_assignment(-equal)
    return bool(equal[rows, cols].sum() == len(expected))


# ---- official (compat) comparison -------------------------------------------------------------------


def _official_calculate(gold: Any, answer: Any, ignore_order: bool, tolerance: float) -> float:
    """``CalculateText.calculate_<type of gold>``; a type without one crashes."""
    kind = type(gold).__name__.lower()
    if kind == "float":
        return 1.0 if abs(gold - answer) <= tolerance else 0.0
    if kind == "int":
        return 1.0 if gold == answer else 0.0
    if kind == "str":
        return 1.0 if gold.lower().strip() == answer.lower().strip() else 0.0
    if kind == "list":
        if len(gold) != len(answer):
            return 0.0
        if ignore_order:
            gold, answer = sorted(gold, key=_official_sort_key), sorted(answer, key=_official_sort_key)
        return _official_all(zip(gold, answer, strict=True), ignore_order, tolerance)
    if kind == "dict":
        if gold.keys() != answer.keys():
            return 0.0
        return _official_all(((value, answer[key]) for key, value in gold.items()), ignore_order, tolerance)
    raise _OfficialCrash(f"CalculateText has no calculate_{kind}")


def _official_sort_key(value: Any) -> tuple[bool, str, bool]:
    return (value is None, str(value), isinstance(value, int | float))


def _official_all(pairs: Any, ignore_order: bool, tolerance: float) -> float:
    scores = []
    for gold, answer in pairs:
        if type(gold) is not type(answer):
            return 0.0
        scores.append(_official_calculate(gold, answer, ignore_order, tolerance))
    return 1.0 if scores and all(scores) else 0.0


def _official_value(gold: Any, answer: Any, ignore_order: bool, tolerance: float) -> float:
    """One top-level value of ``text_score``: unwrap one-element lists, convert, compare."""
    gold_one = gold[0] if isinstance(gold, list) and len(gold) == 1 else gold
    answer_one = answer[0] if isinstance(answer, list) and len(answer) == 1 else answer
    if type(gold_one) is type(answer_one):
        gold, answer = gold_one, answer_one
    elif isinstance(gold, list) and not isinstance(answer, list):
        answer = [answer]
    elif not isinstance(gold, list) and isinstance(answer, list):
        gold = [gold]
    try:
        answer = type(gold)(answer)
    except Exception:  # the official code has a bare except here
        return 0.0
    return _official_calculate(gold, answer, ignore_order, tolerance)


def _official_keys(mapping: dict[Any, Any]) -> dict[str, Any]:
    if not all(isinstance(key, str) for key in mapping):
        raise _OfficialCrash("a key is not a string ('lower' of a non-string)")
    return {key.lower().strip(): value for key, value in mapping.items()}


# ---- public API -------------------------------------------------------------------------------------


def values_equal(
    predicted: Any,
    expected: Any,
    *,
    mode: Mode = "corrected",
    ignore_order: bool = False,
    tolerance: float = 1e-2,
) -> bool:
    """Whether an answer value equals the gold value, as a whole.

    Args:
        predicted: the answer, a parsed JSON value.
        expected: the gold value (object, list or scalar).
        mode: ``corrected`` or ``compat`` (see the module docstring).
        ignore_order: compare lists as multisets (at every depth).
        tolerance: the largest absolute difference between two equal numbers.

    Corrected rules: object keys ignore case and surrounding space; a gold object is matched when every
    gold key is present with an equal value (extra keys allowed at the top, not in nested objects);
    numbers (ints, floats and numeric strings alike) within ``tolerance``; strings without case or
    surrounding space; booleans equal booleans or the strings ``true``/``false``; ``null`` equals
    ``null``; lists of equal length element by element, or as a one-to-one pairing with
    ``ignore_order``; a one-element list equals its element at any depth. In ``compat`` a comparison
    that crashes the official evaluator (booleans) is False.
    """
    if mode == "compat":
        try:
            return _official_score(predicted, expected, ignore_order, tolerance, "all")[0] == 1.0
        except _OfficialCrash:
            return False
    if mode != "corrected":
        raise ValueError(f"unknown text scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    return _equal(predicted, expected, ignore_order, tolerance, top=True)


def _official_score(
    answer: Any, expected: Any, ignore_order: bool, tolerance: float, score_rule: ScoreRule
) -> tuple[float, dict[str, bool]]:
    if not isinstance(expected, dict):  # outside the official evaluator: its per-value rule
        return _official_value(expected, answer, ignore_order, tolerance), {}
    if isinstance(answer, list):
        answer = next((item for item in answer if isinstance(item, dict)), None)
    if not isinstance(answer, dict):
        raise _OfficialCrash(f"text_score calls .items() on a {type(answer).__name__} answer")
    gold, given = _official_keys(expected), _official_keys(answer)
    verdicts = {
        key: key in given and _official_value(value, given[key], ignore_order, tolerance) == 1.0
        for key, value in gold.items()
    }
    if score_rule == "all":
        return float(all(verdicts.values())), verdicts
    if not verdicts:
        raise _OfficialCrash("ZeroDivisionError: 'devide' with an empty gold object")
    return sum(verdicts.values()) / len(verdicts), verdicts


def _is_object(answer: Any) -> bool:
    return isinstance(answer, dict) or (
        isinstance(answer, list) and len(answer) == 1 and isinstance(answer[0], dict)
    )


def _corrected_score(
    answer: Any, expected: Any, ignore_order: bool, tolerance: float, score_rule: ScoreRule,
    rules: TextRules = FORGIVING,
) -> tuple[float, dict[str, bool]]:  # fmt: skip
    if not isinstance(expected, dict):
        return (1.0 if _equal(answer, expected, ignore_order, tolerance, top=True, rules=rules) else 0.0), {}
    if isinstance(answer, list) and len(answer) == 1:
        answer = answer[0]
    given = _keys(answer) if isinstance(answer, dict) else {}
    verdicts = {
        key: key in given and _equal(given[key], value, ignore_order, tolerance, top=False, rules=rules)
        for key, value in _keys(expected).items()
    }
    if score_rule == "all":
        return float(all(verdicts.values())), verdicts
    return sum(verdicts.values()) / len(verdicts), verdicts


def score_text(
    expected: Any,
    *,
    answer_text: str | None = None,
    answer_file: Path | None = None,
    mode: Mode = "corrected",
    ignore_order: bool = False,
    tolerance: float = 1e-2,
    score_rule: ScoreRule = "all",
    case_sensitive: bool = False,
    whitespace_sensitive: bool = False,
) -> Score:
    """Score a JSON/text answer against the gold value.

    Args:
        expected: the gold value: a JSON object (the DA-Code case), a list or a scalar.
        answer_text: the agent's final answer text; used when ``answer_file`` is None. ``corrected``
            parses it as JSON (code fences stripped, JSON5 leniency), else takes the first ``{...}``
            (or ``[...]`` for a list gold) span that parses, else the stripped text as a scalar string
            (compared as a number when it is one). ``compat`` takes the first ``{...}`` span only.
        answer_file: the agent's answer file, parsed like the text; a missing file scores 0.
        mode: ``corrected`` (default) or ``compat`` (the official rules and defects).
        ignore_order: compare lists without regard to order.
        tolerance: the largest absolute difference between two equal numbers (1e-2 officially).
        score_rule: for a gold object, ``all`` (official default: 1 only when every gold key is right)
            or ``fraction`` (the share of gold keys right; DA-Code's ``devide``). Other golds score 0/1.
        case_sensitive, whitespace_sensitive: ``corrected`` only: string values (not keys) keep their
            case / surrounding whitespace in the comparison (the task's instruction fixes them).

    No answer, an unreadable file or an answer without the expected object scores 0 with an
    explanation. A non-object gold is outside the official evaluator: ``compat`` then reads the answer
    as ``corrected`` does and applies the official rule for one top-level value. A gold object without
    keys is excluded as unscorable in ``corrected`` (``compat``: 1 with ``all``, as officially, and 0
    with ``fraction``). ``details`` holds the parsed answer and, for a gold object, each key's verdict.
    """
    if mode not in MODES:
        raise ValueError(f"unknown text scoring mode {mode!r}; choose one of {', '.join(MODES)}")
    details: dict[str, Any] = {"mode": mode, "score_rule": score_rule, "ignore_order": ignore_order}
    if answer_file is not None:
        answer_file = Path(answer_file)
        if not answer_file.is_file():
            return Score(value=0.0, explanation=f"answer file {answer_file.name} not found", details=details)
        try:
            raw = answer_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return Score(value=0.0, explanation=f"answer file unreadable: {exc}", details=details)
    else:
        raw = answer_text
    if raw is None or not raw.strip():
        return Score(value=0.0, explanation="no answer", details=details)
    if mode == "corrected" and isinstance(expected, dict) and not expected:
        return Score(
            value=0.0, excluded=True, explanation="gold object has no keys (unscorable)", details=details
        )

    if mode == "compat" and isinstance(expected, dict):
        answer, missing = _official_answer(raw if answer_file is None else None, answer_file)
        if missing is not None:
            return Score(value=0.0, explanation=missing, details=details)
    else:
        answer = _parse_answer(raw, expected)
    details["answer"] = answer
    if mode == "corrected" and isinstance(expected, dict) and not _is_object(answer):
        return Score(value=0.0, explanation="the answer is not a JSON object", details=details)
    try:
        if mode == "compat":
            value, verdicts = _official_score(answer, expected, ignore_order, tolerance, score_rule)
        else:
            rules = TextRules(case_sensitive=case_sensitive, whitespace_sensitive=whitespace_sensitive)
            value, verdicts = _corrected_score(answer, expected, ignore_order, tolerance, score_rule, rules)
    except _OfficialCrash as crash:
        return Score(
            value=0.0, explanation=f"the official evaluator crashes here ({crash}); scored 0", details=details
        )
    if verdicts:
        details["keys"] = verdicts
        right = sum(verdicts.values())
        explanation = f"{right}/{len(verdicts)} gold keys right"
    else:
        explanation = "answer equals the gold value" if value == 1.0 else "answer differs from the gold value"
    return Score(value=value, explanation=explanation, details=details)


def official_file_names(answer: str | None) -> list[str]:
    """Every file name in an answer as the official evaluator finds them (``_get_result_file_from_json``:
    directories dropped, in order)."""
    return [match.group(1) for match in _OFFICIAL_FILE_NAME.finditer(answer or "")]


def official_answer_files(answer: str | None) -> list[str] | None:
    """The file names the official evaluator reads instead of a text answer, in order; None when the
    answer does not end with one of ``OFFICIAL_FILE_SUFFIXES`` (the text itself is then the answer)."""
    if not isinstance(answer, str) or not answer.endswith(OFFICIAL_FILE_SUFFIXES):
        return None
    return official_file_names(answer)


def named_answer_files(answer: str | None, find: Callable[[str], Path | None]) -> list[Path] | None:
    """The corrected reading: the files an answer consists of (every word names a file ``find`` returns,
    by its path or, failing that, its base name), or None."""
    words = [word.strip("'\"`") for word in re.split(r"[,\s]+", (answer or "").strip())]
    words = [word for word in words if word]
    found = [find(word) or find(Path(word).name) for word in words]
    if not words or any(path is None for path in found):
        return None
    return found  # type: ignore[return-value]


def _mean_over_files(scores: list[Score], names: list[str]) -> Score:
    value = sum(s.value for s in scores) / len(scores)
    if len(scores) == 1:
        return scores[0]
    return Score(
        value=value,
        explanation=f"mean over {len(scores)} answer files",
        details={"files": {name: s.model_dump() for name, s in zip(names, scores, strict=True)}},
    )


class TextScorerOptions(TextRules):
    """Options of a `text` scorer: the expected value inline (`expected`) or in a gold JSON file (`gold`);
    with `alternatives`, `expected` is a list of acceptable gold values and the best score counts (DA-Code
    configs with several `number` entries). The answer is the agent's final answer, or the file `file`."""

    expected: Any = None
    alternatives: bool = False
    gold: str | None = None
    file: str | None = None
    ignore_order: bool = False
    tolerance: float = Field(default=1e-2, ge=0)
    score_rule: ScoreRule = "all"

    @model_validator(mode="after")
    def _has_a_gold_value(self) -> TextScorerOptions:
        if "expected" not in self.model_fields_set and not self.gold:
            raise ValueError("a text scorer needs 'expected' or 'gold'")
        return self


@scorer("text", options=TextScorerOptions, modes=WORKSPACE_MODES)
def text(context: ScoringContext, options: TextScorerOptions) -> Score:
    """A text or JSON answer (or answer file) against the expected value, key by key (DA-Code compare_text)."""
    if "expected" in options.model_fields_set:
        expected = options.expected
    else:  # the options' check makes sure there is a gold file
        expected = json.loads(context.gold(str(options.gold)).read_text(encoding="utf-8"))
    golds = list(expected) if options.alternatives and isinstance(expected, list) else [expected]
    settings: dict[str, Any] = {
        "mode": context.mode, "ignore_order": options.ignore_order, "tolerance": options.tolerance,
        "score_rule": options.score_rule, "case_sensitive": options.case_sensitive,
        "whitespace_sensitive": options.whitespace_sensitive,
    }  # fmt: skip
    if options.file:
        answer_file = context.output(options.file)
        if answer_file is None:
            return nothing_collected(options.file)
        return _best(golds, settings, answer_file=answer_file)
    answer = context.submission.answer
    if context.mode == "compat" and (names := official_answer_files(answer)) is not None:
        if not names:
            return Score(value=0.0, explanation="the answer ends like a file name but names no file")
        found = [context.output(name) for name in names]
        scores = [
            _best(golds, settings, answer_file=path)
            if path is not None
            else Score(value=0.0, explanation=f"answer file {name} not found")
            for name, path in zip(names, found, strict=True)
        ]
        return _mean_over_files(scores, names)
    if context.mode == "corrected" and (paths := named_answer_files(answer, context.output)):
        scores = [_best(golds, settings, answer_file=path) for path in paths]
        return _mean_over_files(scores, [path.name for path in paths])
    return _best(golds, settings, answer_text=answer)


def _best(golds: list[Any], settings: dict[str, Any], **answer: Any) -> Score:
    """The best score of one answer over the acceptable gold values (the official max)."""
    scores = [score_text(gold, **answer, **settings) for gold in golds]
    best = max(scores, key=lambda score: score.value)
    if len(scores) == 1:
        return best
    return best.model_copy(update={"explanation": f"best of {len(scores)} gold answers: {best.explanation}"})
