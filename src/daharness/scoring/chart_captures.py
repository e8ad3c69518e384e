"""Chart captures, read and compared by the corrected rules: what every family that scores charts shares.

A capture is the JSON that ``daharness/sandbox/chart_capture.py`` writes when a figure is saved (its
docstring describes the format, ``"format": "daharness-chart-capture"``, ``"version": 1``); captures of
other formats or versions are refused. Two captures are compared axes by axes on the items named in
``check`` (``CHECKS``; DA-Code's key names in ``ALIASES`` are accepted too) with the rules of
``chart_corrected``; the score is 1 when every item matches, else 0, and ``details["items"]`` holds each
verdict. The workspace family's ``chart`` scorer adds DA-Agent's files and the official rules on top;
the interactive family compares the data of two plots with ``compare_captures``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from daharness.core.score import Score
from daharness.scoring.chart_corrected import ChartView, score_corrected, views_from_capture
from daharness.scoring.chart_match import Verdict

CAPTURE_FORMAT = "daharness-chart-capture"  # written by sandbox/chart_capture.py (FORMAT, VERSION)
CAPTURE_VERSIONS = (1,)
CHECKS: tuple[str, ...] = (
    "data", "type", "color", "figsize", "title", "legend_title", "legend_labels", "xlabel", "ylabel",
    "xtick_labels", "ytick_labels",
)  # fmt: skip
# The official evaluator's key names.
ALIASES = {"graph_title": "title", "x_label": "xlabel", "y_label": "ylabel", "labels": "legend_labels"}
# What reading a malformed chart raises: a capture arrives from the agent's process and may be forged,
# so its structure is not trusted (an exception would turn a wrong chart into an unscored sample).
MALFORMED = (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError)


class ChartSide(NamedTuple):
    """One side of a comparison, ready for the corrected rules."""

    views: list[ChartView]
    figsize: Any
    form: str  # "capture", or "dabench" (DA-Agent's files)
    errors: list[str]  # what the capture could not read


def load_capture(path: Path) -> dict[str, Any]:
    """Read a chart capture written by ``chart_capture``.

    Raises ``FileNotFoundError`` when the file is missing and ``ValueError`` when it is not a capture
    (not JSON, no ``axes`` list, another format or an unsupported version).
    """
    path = Path(path)
    try:
        capture = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a chart capture (invalid JSON: {error})") from error
    return checked_capture(capture, str(path))


def checked_capture(capture: Any, what: str) -> dict[str, Any]:
    """`capture` when it is a capture this daharness reads, else a ValueError naming `what`."""
    if not isinstance(capture, dict) or not isinstance(capture.get("axes"), list):
        raise ValueError(f"{what}: not a chart capture (no 'axes' list)")
    if capture.get("format") != CAPTURE_FORMAT:
        raise ValueError(
            f"{what}: not a chart capture (format {capture.get('format')!r}, not {CAPTURE_FORMAT!r})"
        )
    if capture.get("version") not in CAPTURE_VERSIONS:
        raise ValueError(
            f"{what}: chart capture version {capture.get('version')!r} is not supported "
            f"(this daharness reads version {', '.join(map(str, CAPTURE_VERSIONS))})"
        )
    return capture


def read_capture(value: dict[str, Any] | Path, what: str) -> dict[str, Any]:
    """A capture given as its JSON (checked) or its file."""
    return checked_capture(value, what) if isinstance(value, dict) else load_capture(value)


def capture_side(capture: dict[str, Any]) -> ChartSide:
    """A checked capture as the corrected rules read it: every axes with data."""
    return ChartSide(
        views_from_capture(capture), capture.get("figsize"), "capture", list(capture.get("errors") or [])
    )


def normalize_checks(check: Sequence[str]) -> list[str]:
    """The items of `check` by their own names, in order, once each; an unknown name, or none, raises."""
    names = [check] if isinstance(check, str) else list(check)
    normalized: list[str] = []
    for name in names:
        item = ALIASES.get(str(name).lower(), str(name).lower())
        if item not in CHECKS:
            raise ValueError(f"unknown chart check {name!r}; choose among {', '.join(CHECKS)}")
        if item not in normalized:
            normalized.append(item)
    if not normalized:  # nothing compared would give every chart 1
        raise ValueError(f"chart check names no item; choose among {', '.join(CHECKS)}")
    return normalized


def score_sides(
    predicted: ChartSide,
    gold: ChartSide,
    items: list[str],
    order_free: bool,
    scale_free: bool,
    details: dict[str, Any],
) -> Score:
    """The corrected rules on two sides read alike: 1 when every item matches, else 0."""
    details["compared_as"] = gold.form
    if predicted.errors:
        details["capture_errors"] = predicted.errors
    verdicts = score_corrected(
        (predicted.views, predicted.figsize), (gold.views, gold.figsize), items, order_free, scale_free
    )
    return verdict_score(float(all(v.match for v in verdicts.values())), verdicts, details)


def verdict_score(value: float, verdicts: dict[str, Verdict], details: dict[str, Any]) -> Score:
    """The score of a comparison, its explanation naming what failed (or the pixel-equal image)."""
    details["items"] = {name: verdict.record() for name, verdict in verdicts.items()}
    failed = [name for name, verdict in verdicts.items() if not verdict.match]
    if value == 1.0 and "image" in verdicts and verdicts["image"].match:
        explanation = "the image equals the gold image pixel by pixel"
    elif value == 1.0:
        decisive = [name for name in verdicts if name != "image"]
        explanation = f"all {len(decisive)} checked items match"
        if "image" in verdicts:
            explanation += " (the image itself differs from the gold image)"
    else:
        explanation = "mismatch: " + "; ".join(f"{name} ({verdicts[name].reason})" for name in failed)
    return Score(value=value, explanation=explanation, details=details)


def compare_captures(
    predicted: dict[str, Any] | Path,
    gold: dict[str, Any] | Path,
    *,
    check: Sequence[str] = ("data",),
    data_order_free: bool = False,
    data_scale_free: bool = False,
) -> Score:
    """Score one capture against another by the corrected rules, all or nothing.

    Args:
        predicted: the agent's capture, as its JSON or its file; a missing or unreadable one scores 0
            with the error.
        gold: the reference's capture, as its JSON or its file; one that cannot be read raises
            ``ValueError`` or ``OSError`` (a defect of the reference, not the agent's).
        check: what must match, among ``CHECKS``.
        data_order_free: compare data regardless of the order of series and values.
        data_scale_free: compare data up to one positive factor.
    """
    items = normalize_checks(check)
    details: dict[str, Any] = {
        "mode": "corrected",
        "check": items,
        "data_order_free": data_order_free,
        "data_scale_free": data_scale_free,
    }
    gold_side = capture_side(read_capture(gold, "gold"))
    try:
        predicted_side = capture_side(read_capture(predicted, "predicted"))
    except FileNotFoundError as error:
        return Score(value=0.0, explanation=f"no chart captured ({error})", details=details)
    except MALFORMED as error:
        return Score(
            value=0.0, explanation=f"chart unreadable: {type(error).__name__}: {error}", details=details
        )
    return score_sides(predicted_side, gold_side, items, data_order_free, data_scale_free, details)
