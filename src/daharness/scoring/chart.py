"""DA-Code chart scoring: the data and metadata of the agent's chart against the gold chart's.

Both charts are captures written by ``daharness/sandbox/chart_capture.py`` (its docstring describes the
JSON): a matplotlib hook records what each saved figure shows, so the agent's code is never edited.
The rule (DA-Code paper §3.4 "chart match score" and Appendix C.1): the score is 1 only if the data
and every plot setting the task names match, else 0. ``check`` names what is compared: ``data``,
``type``, ``color``, ``figsize``, ``title``, ``legend_title``, ``legend_labels``, ``xlabel``, ``ylabel``,
``xtick_labels``, ``ytick_labels`` (the official key names ``graph_title``, ``x_label``, ``y_label`` and
``labels`` are accepted too).

Two modes:

* ``compat`` reproduces the official scorer (``da_agent/evaluators/metrics/image.py``, ``compare_image``)
  on the data its extraction script (``da_agent/configs/scripts/image.py``) would produce:

  - Only the figure's current axes (``plt.gca()``) is read. Its type is the first of ``pie`` (any
    wedge), ``bar`` (any rectangle that is not a square: bar, barh and hist alike), ``scatter``, ``line``
    (any line of two points or more, axhline and error-bar caps included), else ``""``.
  - Data is a matrix: pie, one row of wedge fractions; bar, rows of bar lengths, a new row each time
    the bar position goes back (the orientation is the dimension, width or height, with more distinct
    values; a tie means horizontal); line, one row of y values per line; scatter, one row per point.
    Ragged rows are padded with zeros. Data matches if both matrices have the same shape and every
    predicted row, sorted, is ``numpy.allclose`` (atol 1e-5, rtol 1e-5, NaN equal) to some gold row,
    sorted. An empty matrix on either side does not match.
  - Titles and axis labels (``title``, ``xlabel``, ``ylabel``, ``legend_title``) match if fuzzywuzzy's
    ``fuzz.ratio`` of the lower-cased texts, rounded to an integer, is >= 90; an empty prediction
    against a non-empty gold fails, two empty texts match.
  - Label lists (``legend_labels``, ``xtick_labels``, ``ytick_labels``) match if they have the same
    length and every lower-cased predicted label has ``fuzz.ratio`` > 95 with some gold label.
  - Colours are the distinct ``#rrggbb`` colours of the artists of the chart's type; they match if every
    predicted colour is within RGB distance 15 of some gold colour. ``figsize`` must be equal;
    ``type`` equal ignoring case.
  - ``fuzz.ratio`` is computed as python-Levenshtein (an official requirement) does: 2·LCS/(len a +
    len b), which is also rapidfuzz's ratio (difflib's block heuristic can score lower).

  Official defects reproduced here, and fixed in ``corrected``:

  - **order and scale options are ignored**: data is always compared sorted (so a task that asks for
    sorted bars cannot check it) and never scaled (the scaled comparison is computed, reported as
    ``scale_data``, and not used). compat ignores ``data_order_free`` and ``data_scale_free``.
  - **matching is not one-to-one**: two predicted series equal to one gold series match gold
    ``[A, B]``; a label list ``["a", "a"]`` matches ``["a", "b"]``.
  - **pairing is lost**: each series is sorted on its own, so a grouped bar chart whose values are
    shuffled across categories still matches; each scatter point's (x, y) is sorted too, so (1, 2)
    equals (2, 1).
  - **colours only one way**: a chart drawn in one of the gold colours, or with no colour, matches a
    multi-coloured gold.
  - **one axes, one type**: other subplots are ignored; ``barh`` equals ``bar``; reference lines
    (axhline) and error-bar caps count as line data, and a bar chart whose bars all have the same
    height is read as horizontal.
  - A title set with ``suptitle`` (or as a left/right title) is not found; a figure-level legend is
    not found; ``figsize`` is compared as exact floats.

  Not reproduced: the official shortcut that scores 1 when the PNG is pixel-identical to the gold
  image (this scorer has no images), and the official extraction's quirk of re-running the agent's
  script with its ``savefig``/``show``/``close`` lines deleted (we capture the figure as saved).

* ``corrected`` (default) keeps the rule and fixes what is unfair:

  - Every axes that holds data is compared (colorbars excluded), in order; with no data axes, the
    current axes. A different number of such axes fails every item but ``figsize``. An axes' type is the main kind of its data series (pie > bar or barh > scatter >
    line); only data series count: reference lines, error-bar caps and loose rectangles do not.
  - Data is the type's series: bar lengths (height of vertical, width of horizontal bars), line y
    values, scatter (x, y) points, pie fractions. Series and values are compared in order, each value
    with ``numpy.isclose`` (rtol 1e-5, atol 1e-5, NaN equal). ``data_order_free``: series are paired one
    to one in any order and values compared as sorted multisets (scatter points as (x, y) pairs);
    when several series of one length share positions (grouped or stacked bars, lines over the same
    x), the rows across them must also be the same multiset, so values keep their pairing.
    ``data_scale_free``: before comparing, all values of an axes are divided by the sum of their
    absolute values (one factor for the whole chart; scatter x and y each by their own), so
    percentages match fractions. A gold chart without data raises ``ValueError``.
  - Texts are compared after trimming, collapsing whitespace, case-folding and reading the Unicode
    minus of tick labels as ``-``, with the same thresholds (ratio >= 90, > 95) unrounded; an empty
    text matches only an empty text.
  - ``title``: the axes' centre title, else its left or right title; with one data axes, the figure's
    ``suptitle`` when the axes has no title. Legend items fall back to the figure's legend when the
    axes has none.
  - Label lists are paired one to one; tick labels must also be in the same order unless
    ``data_order_free`` (legend labels never need to be).
  - Colours match both ways: every predicted colour near a gold one and every gold colour near a
    predicted one (distance <= 15). ``type`` tells ``bar`` from ``barh``. ``figsize`` within 0.01 inch.

A missing or unreadable prediction scores 0 with the reason; a gold capture that cannot be read raises.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.scoring.chart_files import captured_chart
from daharness.scoring.modes import WORKSPACE_MODES
from daharness.scoring.outputs import OutputFileOptions, nothing_collected

Mode = Literal["corrected", "compat"]
MODES: tuple[Mode, ...] = ("corrected", "compat")
CHECKS: tuple[str, ...] = (
    "data",
    "type",
    "color",
    "figsize",
    "title",
    "legend_title",
    "legend_labels",
    "xlabel",
    "ylabel",
    "xtick_labels",
    "ytick_labels",
)
# The official evaluator's key names.
ALIASES = {"graph_title": "title", "x_label": "xlabel", "y_label": "ylabel", "labels": "legend_labels"}

TITLE_THRESHOLD = 90  # a title matches at ratio >= 90
LABEL_THRESHOLD = 95  # a label matches at ratio > 95
COLOR_DISTANCE = 15.0  # RGB Euclidean distance
DATA_RTOL = DATA_ATOL = 1e-5  # numpy.allclose defaults for rtol, the official atol
FIGSIZE_TOLERANCE = 0.01  # inches, corrected
_LCS_LIMIT = 250_000  # beyond len(a) * len(b), difflib approximates the LCS ratio
_SEARCH_BUDGET = 10_000  # series assignments tried by the order-free pairing
_SORT_DECIMALS = 6  # near-equal values sort together before a tolerant comparison


@dataclass
class _Axes:
    """What the scorer compares of one axes."""

    type: str = ""
    series: list[np.ndarray] = field(default_factory=list)
    points: bool = False  # scatter: each series is an (n, 2) array of points
    colors: list[str] = field(default_factory=list)
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    legend_title: str = ""
    legend_labels: list[str] = field(default_factory=list)
    xtick_labels: list[str] = field(default_factory=list)
    ytick_labels: list[str] = field(default_factory=list)


@dataclass
class _Verdict:
    match: bool
    reason: str
    predicted: Any = None
    gold: Any = None

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"match": self.match, "reason": self.reason}
        if self.predicted is not None or self.gold is not None:
            record.update(predicted=self.predicted, gold=self.gold)
        return record


# ---- loading ----------------------------------------------------------------------------------------


def load_capture(path: Path) -> dict[str, Any]:
    """Read a chart capture written by ``chart_capture``.

    Raises ``FileNotFoundError`` when the file is missing and ``ValueError`` when it is not a capture
    (not JSON, or no ``axes`` list).
    """
    path = Path(path)
    try:
        capture = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a chart capture (invalid JSON: {error})") from error
    if not isinstance(capture, dict) or not isinstance(capture.get("axes"), list):
        raise ValueError(f"{path}: not a chart capture (no 'axes' list)")
    return capture


# ---- the scorer -------------------------------------------------------------------------------------


def score_chart(
    predicted: dict[str, Any] | Path | None,
    gold: dict[str, Any] | Path,
    *,
    check: Sequence[str] = ("data",),
    data_order_free: bool = False,
    data_scale_free: bool = False,
    mode: Mode = "corrected",
) -> Score:
    """Score the agent's chart capture against the gold chart capture, all or nothing.

    Args:
        predicted: the capture of the agent's chart (dict or JSON path); ``None`` or a missing file
            scores 0 ("no chart captured"), an unreadable one scores 0 with the error.
        gold: the capture of the gold chart (dict or JSON path); unreadable raises.
        check: what must match, among ``CHECKS`` (official names in ``ALIASES`` accepted); every item
            is compared, also after one fails, so ``details`` lists each verdict. An unknown name
            raises ``ValueError``. DA-Code tasks list ``data`` explicitly (the official evaluator
            always compares data).
        data_order_free: compare data regardless of the order of series and values (corrected only;
            compat always does, as the official evaluator).
        data_scale_free: compare data up to one positive factor (corrected only; compat never does).
        mode: ``corrected`` (default) or ``compat``; the rules are in the module docstring.

    Returns a Score of 1.0 when every checked item matches, else 0.0; ``details`` holds the mode, the
    options and, under ``items``, each item's ``match``, ``reason`` and, for settings, both values.
    """
    if mode not in MODES:
        raise ValueError(f"unknown chart mode {mode!r}; choose one of {', '.join(MODES)}")
    items = _normalize_checks(check)
    gold_capture = load_capture(gold) if not isinstance(gold, dict) else _checked(gold, "gold")
    details: dict[str, Any] = {
        "mode": mode,
        "check": items,
        "data_order_free": data_order_free,
        "data_scale_free": data_scale_free,
    }
    if predicted is None:
        return Score(value=0.0, explanation="no chart captured (the agent saved no figure)", details=details)
    if not isinstance(predicted, dict):
        try:
            predicted = load_capture(predicted)
        except FileNotFoundError:
            return Score(value=0.0, explanation=f"no chart captured ({predicted} not found)", details=details)
        except (OSError, ValueError) as error:
            return Score(value=0.0, explanation=f"chart capture unreadable: {error}", details=details)
    elif not isinstance(predicted.get("axes"), list):
        return Score(value=0.0, explanation="chart capture unreadable: no 'axes' list", details=details)
    if predicted.get("errors"):
        details["capture_errors"] = list(predicted["errors"])
    if mode == "compat":
        verdicts = _score_compat(predicted, gold_capture, items)
    else:
        verdicts = _score_corrected(predicted, gold_capture, items, data_order_free, data_scale_free)
    details["items"] = {name: verdict.record() for name, verdict in verdicts.items()}
    failed = [name for name, verdict in verdicts.items() if not verdict.match]
    if not failed:
        explanation = f"all {len(verdicts)} checked items match"
    else:
        explanation = "mismatch: " + "; ".join(f"{name} ({verdicts[name].reason})" for name in failed)
    return Score(value=0.0 if failed else 1.0, explanation=explanation, details=details)


def _checked(capture: dict[str, Any], what: str) -> dict[str, Any]:
    if not isinstance(capture.get("axes"), list):
        raise ValueError(f"{what} is not a chart capture (no 'axes' list)")
    return capture


def _normalize_checks(check: Sequence[str]) -> list[str]:
    names = [check] if isinstance(check, str) else list(check)
    normalized: list[str] = []
    for name in names:
        item = ALIASES.get(str(name).lower(), str(name).lower())
        if item not in CHECKS:
            raise ValueError(f"unknown chart check {name!r}; choose among {', '.join(CHECKS)}")
        if item not in normalized:
            normalized.append(item)
    return normalized


# ---- compat: the official evaluator -----------------------------------------------------------------


def _score_compat(predicted: dict[str, Any], gold: dict[str, Any], items: list[str]) -> dict[str, _Verdict]:
    pred_axes, pred_matrix = _official_axes(predicted)
    gold_axes, gold_matrix = _official_axes(gold)
    verdicts: dict[str, _Verdict] = {}
    for item in items:
        if item == "data":
            verdicts[item] = _official_data(pred_matrix, gold_matrix)
        elif item == "figsize":
            pred_size, gold_size = list(predicted.get("figsize") or []), list(gold.get("figsize") or [])
            verdicts[item] = _Verdict(
                pred_size == gold_size, _same(pred_size == gold_size), pred_size, gold_size
            )
        elif item == "type":
            ok = pred_axes.type.lower() == gold_axes.type.lower()
            verdicts[item] = _Verdict(ok, _same(ok), pred_axes.type, gold_axes.type)
        elif item == "color":
            ok = all(_near_any(c, gold_axes.colors) for c in pred_axes.colors)
            reason = (
                "every predicted colour is near a gold colour" if ok else "a predicted colour is not in gold"
            )
            verdicts[item] = _Verdict(ok, reason, pred_axes.colors, gold_axes.colors)
        elif item in ("title", "xlabel", "ylabel", "legend_title"):
            verdicts[item] = _official_text(getattr(pred_axes, item), getattr(gold_axes, item))
        else:
            verdicts[item] = _official_labels(getattr(pred_axes, item), getattr(gold_axes, item))
    return verdicts


def _official_axes(capture: dict[str, Any]) -> tuple[_Axes, np.ndarray]:
    """The current axes as the official extraction script reads it, and its data matrix."""
    axes_list = capture.get("axes") or []
    current = capture.get("current_axes")
    if not axes_list:
        return _Axes(), np.empty((0, 0))
    axes = axes_list[current] if isinstance(current, int) and 0 <= current < len(axes_list) else axes_list[-1]
    series = axes.get("series") or []
    kind = _official_type(series)
    chosen = [s for s in series if s["kind"] == kind]
    if kind == "bar":
        rows = _official_bar_rows(chosen)
    elif kind == "line":
        rows = [_array(s["y"]) for s in chosen if _official_line(s)]
        chosen = [s for s in chosen if _official_line(s)]
    elif kind == "pie":
        rows = [np.concatenate([_array(s["fractions"]) for s in chosen])]
    elif kind == "scatter":
        rows = [point for s in chosen for point in _points(s["offsets"])]
    else:
        rows = []
    view = _Axes(
        type=kind,
        colors=_distinct(c for s in chosen for c in s.get("colors", [])),
        title=axes.get("title", ""),
        xlabel=axes.get("xlabel", ""),
        ylabel=axes.get("ylabel", ""),
        legend_title=axes.get("legend_title", ""),
        legend_labels=list(axes.get("legend_labels", [])),
        xtick_labels=list(axes.get("xtick_labels", [])),
        ytick_labels=list(axes.get("ytick_labels", [])),
    )
    return view, _official_matrix(rows)


def _official_type(series: list[dict[str, Any]]) -> str:
    kinds = {s["kind"] for s in series}
    if "pie" in kinds:
        return "pie"
    if any(
        w != h for s in series if s["kind"] == "bar" for w, h in zip(s["widths"], s["heights"], strict=False)
    ):
        return "bar"
    if any(s["kind"] == "scatter" and s["offsets"] for s in series):
        return "scatter"
    if any(s["kind"] == "line" and len(s["x"]) > 1 and len(s["y"]) > 1 for s in series):
        return "line"
    return ""


def _official_line(series: dict[str, Any]) -> bool:
    y = _array(series["y"])
    return len(series["x"]) > 1 and len(y) > 1 and series.get("y_numeric", True) and not np.isnan(y).all()


def _official_bar_rows(series: list[dict[str, Any]]) -> list[np.ndarray]:
    bars = [
        (x, y, w, h)
        for s in series
        for x, y, w, h in zip(
            _array(s["x"]), _array(s["y"]), _array(s["widths"]), _array(s["heights"]), strict=False
        )
    ]
    if not bars:
        return []
    # The dimension with more distinct values holds the data; a tie reads as horizontal bars.
    vertical = len({h for *_, h in bars}) > len({w for _, _, w, _ in bars})
    rows, row, last = [], [], -1000.0
    for x, y, w, h in bars:
        if (w if vertical else h) == 0:
            continue
        coord = x if vertical else y
        if coord < last:  # the position went back: a new series
            rows.append(np.array(row))
            row = []
        row.append(h if vertical else w)
        last = coord
    if row:
        rows.append(np.array(row))
    return rows


def _official_matrix(rows: list[np.ndarray]) -> np.ndarray:
    if not rows:
        return np.empty((0, 0))
    width = max(len(np.atleast_1d(r)) for r in rows)
    if all(len(np.atleast_1d(r)) == width for r in rows):
        return np.array([np.atleast_1d(r) for r in rows], dtype=float)
    # numpy refuses ragged rows; the official script then pads them with zeros.
    return np.array([np.pad(np.atleast_1d(r), (0, width - len(np.atleast_1d(r)))) for r in rows], dtype=float)


def _official_data(predicted: np.ndarray, gold: np.ndarray) -> _Verdict:
    if predicted.size == 0 or gold.size == 0:
        side = "predicted" if predicted.size == 0 else "gold"
        return _Verdict(False, f"no data in the {side} chart")
    if predicted.shape != gold.shape:
        return _Verdict(False, f"shape {list(predicted.shape)} vs gold {list(gold.shape)}")

    def found(scale: bool) -> bool:
        return all(any(_official_rows_equal(row, ref, scale) for ref in gold) for row in predicted)

    ok = found(scale=False)
    reason = "every predicted series matches a gold series" if ok else "a series has no match"
    # scale_data is reported as the official evaluator does, though it never decides the score.
    return _Verdict(ok, f"{reason} (scale_data: {found(scale=True)})")


def _official_rows_equal(row: np.ndarray, ref: np.ndarray, scale: bool) -> bool:
    if scale:
        with np.errstate(divide="ignore", invalid="ignore"):
            row, ref = row / np.sum(row), ref / np.sum(ref)
    return bool(np.allclose(np.sort(row), np.sort(ref), rtol=DATA_RTOL, atol=DATA_ATOL, equal_nan=True))


def _official_text(predicted: str, gold: str) -> _Verdict:
    if not predicted and gold:
        return _Verdict(False, "missing", predicted, gold)
    ratio = fuzz_ratio(predicted.lower(), gold.lower())
    ok = ratio >= TITLE_THRESHOLD
    return _Verdict(ok, f"ratio {ratio} {'>=' if ok else '<'} {TITLE_THRESHOLD}", predicted, gold)


def _official_labels(predicted: list[str], gold: list[str]) -> _Verdict:
    if len(predicted) != len(gold):
        return _Verdict(False, f"{len(predicted)} labels vs {len(gold)}", predicted, gold)
    lowered = [g.lower() for g in gold]
    missing = [p for p in predicted if not any(fuzz_ratio(p.lower(), g) > LABEL_THRESHOLD for g in lowered)]
    reason = "every label found" if not missing else f"not in gold: {missing[:5]}"
    return _Verdict(not missing, reason, predicted, gold)


def fuzz_ratio(a: str, b: str) -> int:
    """fuzzywuzzy's ``fuzz.ratio`` with python-Levenshtein: equal texts 100, an empty one 0, else the
    similarity ratio as a rounded percentage."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    return round(similarity(a, b))


def similarity(a: str, b: str) -> float:
    """100 · 2·LCS(a, b) / (len a + len b): the Indel similarity of python-Levenshtein and rapidfuzz.

    Very long pairs (beyond ``_LCS_LIMIT`` character pairs) use difflib's approximation.
    """
    if not a and not b:
        return 100.0
    if len(a) * len(b) > _LCS_LIMIT:
        return 100.0 * difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    previous = [0] * (len(b) + 1)
    for char_a in a:
        current = [0]
        for j, char_b in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if char_a == char_b else max(previous[j], current[j - 1]))
        previous = current
    return 200.0 * previous[-1] / (len(a) + len(b))


# ---- corrected --------------------------------------------------------------------------------------


def _score_corrected(
    predicted: dict[str, Any], gold: dict[str, Any], items: list[str], order_free: bool, scale_free: bool
) -> dict[str, _Verdict]:
    pred_axes, gold_axes = _corrected_axes(predicted), _corrected_axes(gold)
    verdicts: dict[str, _Verdict] = {}
    for item in items:
        if item == "figsize":
            verdicts[item] = _figsize(predicted.get("figsize"), gold.get("figsize"))
            continue
        if item == "data" and not any(a.series for a in gold_axes):
            raise ValueError("gold chart has no data to compare (no bar, line, scatter or pie series)")
        if len(pred_axes) != len(gold_axes):
            reason = f"{len(pred_axes)} axes with data vs {len(gold_axes)} in gold"
            verdicts[item] = _Verdict(False, reason)
            continue
        compare = _corrected_comparer(item, order_free, scale_free)
        per_axes = [compare(p, g) for p, g in zip(pred_axes, gold_axes, strict=True)]
        verdicts[item] = _combine(per_axes)
    return verdicts


def _corrected_comparer(item: str, order_free: bool, scale_free: bool) -> Callable[[_Axes, _Axes], _Verdict]:
    if item == "data":
        return lambda p, g: _data(p, g, order_free, scale_free)
    if item == "type":
        return lambda p, g: _Verdict(p.type == g.type, _same(p.type == g.type), p.type, g.type)
    if item == "color":
        return lambda p, g: _colors(p.colors, g.colors)
    if item in ("title", "xlabel", "ylabel", "legend_title"):
        return lambda p, g: _text(getattr(p, item), getattr(g, item))
    ordered = item != "legend_labels" and not order_free
    return lambda p, g: _labels(getattr(p, item), getattr(g, item), ordered)


def _combine(per_axes: list[_Verdict]) -> _Verdict:
    if len(per_axes) == 1:
        return per_axes[0]
    ok = all(v.match for v in per_axes)
    reason = "; ".join(f"axes {i}: {v.reason}" for i, v in enumerate(per_axes) if not v.match) or "all axes"
    return _Verdict(ok, reason, [v.predicted for v in per_axes], [v.gold for v in per_axes])


def _corrected_axes(capture: dict[str, Any]) -> list[_Axes]:
    axes_list = [a for a in capture.get("axes") or [] if not a.get("colorbar")]
    with_data = [a for a in axes_list if _data_series(a.get("series") or [])[0]]
    if not with_data:
        current = capture.get("current_axes")
        all_axes = capture.get("axes") or []
        if isinstance(current, int) and 0 <= current < len(all_axes):
            with_data = [all_axes[current]]
        elif axes_list:
            with_data = [axes_list[-1]]
    figure_legends = capture.get("legends") or []
    views = []
    for axes in with_data:
        kind, series = _data_series(axes.get("series") or [])
        title = axes.get("title") or axes.get("title_left") or axes.get("title_right") or ""
        if not title and len(with_data) == 1:
            title = capture.get("suptitle") or ""
        legend_title, legend_labels = axes.get("legend_title", ""), list(axes.get("legend_labels", []))
        if not axes.get("has_legend", bool(legend_labels or legend_title)) and figure_legends:
            legend_title = figure_legends[0].get("title", "")
            legend_labels = [label for legend in figure_legends for label in legend.get("labels", [])]
        views.append(
            _Axes(
                type=kind,
                series=[_series_values(s) for s in series],
                points=kind == "scatter",
                colors=_distinct(c for s in series for c in s.get("colors", [])),
                title=title,
                xlabel=axes.get("xlabel", ""),
                ylabel=axes.get("ylabel", ""),
                legend_title=legend_title,
                legend_labels=legend_labels,
                xtick_labels=list(axes.get("xtick_labels", [])),
                ytick_labels=list(axes.get("ytick_labels", [])),
            )
        )
    return views


def _data_series(series: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The axes' main kind and its data series (pie > bar/barh > scatter > line; data role only)."""
    data = [s for s in series if s.get("role", "data") == "data"]
    pies = [s for s in data if s["kind"] == "pie"]
    if pies:
        merged = {
            "kind": "pie",
            "fractions": [f for s in pies for f in s["fractions"]],
            "colors": [c for s in pies for c in s.get("colors", [])],
        }
        return "pie", [merged]
    bars = [s for s in data if s["kind"] == "bar" and s["heights"]]
    if bars:
        return ("barh" if bars[0].get("orientation") == "horizontal" else "bar"), bars
    scatters = [s for s in data if s["kind"] == "scatter" and s["offsets"]]
    if scatters:
        return "scatter", scatters
    lines = [s for s in data if s["kind"] == "line" and s["y"] and not np.isnan(_array(s["y"])).all()]
    return ("line", lines) if lines else ("", [])


def _series_values(series: dict[str, Any]) -> np.ndarray:
    kind = series["kind"]
    if kind == "bar":
        return _array(series["widths"] if series.get("orientation") == "horizontal" else series["heights"])
    if kind == "scatter":
        return _points(series["offsets"])
    if kind == "pie":
        return _array(series["fractions"])
    return _array(series["y"])


def _data(predicted: _Axes, gold: _Axes, order_free: bool, scale_free: bool) -> _Verdict:
    pred, ref = predicted.series, gold.series
    if not pred:
        return _Verdict(False, "no data in the predicted chart")
    if len(pred) != len(ref):
        return _Verdict(False, f"{len(pred)} series vs {len(ref)} in gold")
    lengths, gold_lengths = [len(s) for s in pred], [len(s) for s in ref]
    if sorted(lengths) != sorted(gold_lengths) or (not order_free and lengths != gold_lengths):
        return _Verdict(False, f"series lengths {lengths} vs {gold_lengths} in gold")
    if scale_free:
        pred, ref = _rescale(pred, predicted.points), _rescale(ref, gold.points)
    if not order_free:
        ok = all(_close(p, g) for p, g in zip(pred, ref, strict=True))
        return _Verdict(ok, "values equal in order" if ok else "values differ")
    ok = _match_order_free(pred, ref, rows=not predicted.points)
    return _Verdict(ok, "values equal up to order" if ok else "values differ (in any order)")


def _rescale(series: list[np.ndarray], points: bool) -> list[np.ndarray]:
    """Divide by the sum of absolute values of all series (per coordinate for scatter points)."""
    stacked = np.concatenate([s.reshape(-1, 2) if points else s.ravel() for s in series])
    totals = np.nansum(np.abs(stacked), axis=0)
    totals = np.where(totals > 0, totals, 1.0)
    return [s / totals for s in series]


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=DATA_RTOL, atol=DATA_ATOL, equal_nan=True))


def _sorted(values: np.ndarray) -> np.ndarray:
    if values.ndim == 1:
        return np.sort(values)
    keys = np.round(values, _SORT_DECIMALS)
    return values[np.lexsort(keys.T[::-1])]  # rows, by first column then the next


def _match_order_free(pred: list[np.ndarray], gold: list[np.ndarray], *, rows: bool) -> bool:
    """Pair series one to one (sorted values equal); with ``rows``, equal-length series must also give
    the same multiset of rows (values at one position across series)."""
    pred_sorted, gold_sorted = [_sorted(s) for s in pred], [_sorted(s) for s in gold]
    candidates = [[j for j, g in enumerate(gold_sorted) if _close(p, g)] for p in pred_sorted]
    if any(not c for c in candidates):
        return False
    check_rows = rows and len(pred) > 1 and len({len(s) for s in pred}) == 1
    budget = [_SEARCH_BUDGET]
    chosen: list[int] = []

    def search(index: int) -> bool:
        if budget[0] <= 0:
            return False
        budget[0] -= 1
        if index == len(pred):
            if not check_rows:
                return True
            pred_rows = np.column_stack(pred)
            gold_rows = np.column_stack([gold[j] for j in chosen])
            return _close(_sorted(pred_rows), _sorted(gold_rows))
        for j in candidates[index]:
            if j not in chosen:
                chosen.append(j)
                if search(index + 1):
                    return True
                chosen.pop()
        return False

    return search(0)


def _figsize(predicted: Any, gold: Any) -> _Verdict:
    pred, ref = list(predicted or []), list(gold or [])
    ok = len(pred) == len(ref) == 2 and all(
        abs(p - g) <= FIGSIZE_TOLERANCE for p, g in zip(pred, ref, strict=True)
    )
    return _Verdict(ok, _same(ok), pred, ref)


def _normalize_text(text: str) -> str:
    return " ".join(str(text).replace("\u2212", "-").split()).casefold()


def _text(predicted: str, gold: str) -> _Verdict:
    pred, ref = _normalize_text(predicted), _normalize_text(gold)
    if not pred or not ref:
        ok = pred == ref
        return _Verdict(
            ok, "both empty" if ok else ("missing" if not pred else "gold has none"), predicted, gold
        )
    ratio = similarity(pred, ref)
    ok = ratio >= TITLE_THRESHOLD
    return _Verdict(ok, f"ratio {ratio:.1f} {'>=' if ok else '<'} {TITLE_THRESHOLD}", predicted, gold)


def _labels(predicted: list[str], gold: list[str], ordered: bool) -> _Verdict:
    pred, ref = [_normalize_text(p) for p in predicted], [_normalize_text(g) for g in gold]
    if len(pred) != len(ref):
        return _Verdict(False, f"{len(pred)} labels vs {len(ref)}", predicted, gold)
    if ordered:
        wrong = [i for i, (p, g) in enumerate(zip(pred, ref, strict=True)) if not _label_match(p, g)]
        reason = "labels equal in order" if not wrong else f"differ at positions {wrong[:5]}"
        return _Verdict(not wrong, reason, predicted, gold)
    ok = _one_to_one(pred, ref)
    return _Verdict(ok, "labels paired one to one" if ok else "labels cannot be paired", predicted, gold)


def _label_match(a: str, b: str) -> bool:
    return a == b or similarity(a, b) > LABEL_THRESHOLD


def _one_to_one(pred: list[str], gold: list[str]) -> bool:
    """A perfect matching between the labels (augmenting paths)."""
    options = [[j for j, g in enumerate(gold) if _label_match(p, g)] for p in pred]
    owner: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:
        for j in options[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or assign(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(assign(i, set()) for i in range(len(pred)))


def _colors(predicted: list[str], gold: list[str]) -> _Verdict:
    extra = [c for c in predicted if not _near_any(c, gold)]
    missing = [c for c in gold if not _near_any(c, predicted)]
    ok = not extra and not missing
    reason = "colours match both ways" if ok else f"not in gold: {extra[:5]}; missing: {missing[:5]}"
    return _Verdict(ok, reason, predicted, gold)


# ---- shared helpers ---------------------------------------------------------------------------------


def _near_any(color: str, palette: list[str]) -> bool:
    rgb = _rgb(color)
    return any(math.dist(rgb, _rgb(other)) <= COLOR_DISTANCE for other in palette)


def _rgb(color: str) -> tuple[int, int, int]:
    text = color.lstrip("#")
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def _array(values: Sequence[Any]) -> np.ndarray:
    """Capture numbers to floats: null is NaN, "inf" / "-inf" are infinities."""
    return np.array([math.nan if v is None else float(v) for v in values], dtype=float)


def _points(offsets: Sequence[Sequence[Any]]) -> np.ndarray:
    return np.array([_array(point) for point in offsets], dtype=float).reshape(-1, 2)


def _distinct(values: Any) -> list[str]:
    return list(dict.fromkeys(values))


def _same(ok: bool) -> str:
    return "equal" if ok else "differ"


class ChartScorerOptions(OutputFileOptions):
    """Options of a `chart` scorer: `file` is the image the agent must save; its data comes from the
    capture the harness received when it was saved (`chart_files.py`), the gold from the gold capture
    (`<gold image>.json`)."""

    check: tuple[str, ...] = ("data",)
    data_order_free: bool = False
    data_scale_free: bool = False


@scorer("chart", options=ChartScorerOptions, modes=WORKSPACE_MODES)
def chart(context: ScoringContext, options: ChartScorerOptions) -> Score:
    """The data and properties of a saved matplotlib chart against the gold chart's capture."""
    image = context.output(options.file)
    if image is None or context.files is None:
        return nothing_collected(options.file)
    gold_name = options.gold_name()
    gold = context.gold(gold_name if gold_name.endswith(".json") else f"{gold_name}.json")
    capture, problem = captured_chart(context.files, options.file, image)
    if capture is None:
        return Score(value=0.0, explanation=problem, details={"mode": context.mode, "file": options.file})
    return score_chart(
        capture, gold, mode=context.mode,  # type: ignore[arg-type]
        check=options.check, data_order_free=options.data_order_free, data_scale_free=options.data_scale_free,
    )  # fmt: skip
