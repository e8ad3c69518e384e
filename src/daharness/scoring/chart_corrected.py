"""corrected chart scoring: the rule of DA-Code's paper, with the official evaluator's defects fixed.

The score is 1 only if the data and every checked setting match (DA-Code paper §3.4, "chart match score").
Charts come as views, one per axes with data (``ChartView``): from a daharness capture
(``views_from_capture``, every data axes) or from DA-Agent's ``plot.json`` + ``result.npy``
(``views_from_dabench``, the one axes DA-Agent's post-processing reads, its series the rows of the
matrix). The rules (the full list is in ``daharness.families.workspace.scorers.chart``'s docstring):

* data compared in order unless ``data_order_free`` (series then paired one to one, values as sorted
  multisets, rows across series kept together), each value with ``numpy.isclose`` (rtol 1e-5, atol 1e-5,
  NaN equal); ``data_scale_free`` divides all values by their total absolute value first;
* texts normalized and fuzzy-matched without rounding; label lists one to one, tick labels in order
  unless order is free; colours both ways; ``type`` tells bar from barh; ``figsize`` within 0.01 inch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from daharness.core.scoring import GoldProblem
from daharness.scoring.chart_match import (
    Verdict,
    capture_floats,
    capture_points,
    colors_verdict,
    labels_verdict,
    same,
    text_verdict,
)

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np

DATA_RTOL = DATA_ATOL = 1e-5
FIGSIZE_TOLERANCE = 0.01  # inches
_SEARCH_BUDGET = 10_000  # series assignments tried by the order-free pairing
_SORT_DECIMALS = 6  # near-equal values sort together before a tolerant comparison


@dataclass
class ChartView:
    """What the corrected rules compare of one axes."""

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


def views_from_dabench(params: dict[str, Any], matrix: np.ndarray) -> list[ChartView]:
    """The one axes DA-Agent's post-processing describes: ``plot.json`` and the ``result.npy`` matrix
    (rows are series; a scatter's rows are its points; a 1-D array is one series)."""
    import numpy as np

    kind = str(params.get("type") or "").lower()
    data = np.asarray(matrix, dtype=float)
    if data.ndim == 1:
        data = data.reshape(1, -1)
    if kind == "scatter":
        series = [data.reshape(-1, 2)] if data.size and data.shape[-1] == 2 else [data]
    else:
        series = list(data) if data.size else []
    return [
        ChartView(
            type=kind,
            series=series,
            points=kind == "scatter",
            colors=_strings(params, "color"),
            title=str(params.get("graph_title") or ""),
            xlabel=str(params.get("x_label") or ""),
            ylabel=str(params.get("y_label") or ""),
            legend_title=str(params.get("legend_title") or ""),
            legend_labels=_strings(params, "labels"),
            xtick_labels=_strings(params, "xtick_labels"),
            ytick_labels=_strings(params, "ytick_labels"),
        )
    ]


def _strings(params: dict[str, Any], key: str) -> list[str]:
    """A list of plot.json as texts; ValueError when it is not a list (the side is unreadable)."""
    values = params.get(key) or []
    if not isinstance(values, list):
        raise ValueError(f"plot.json {key!r} is a {type(values).__name__}, not a list")
    return [str(value) for value in values]


def score_corrected(
    predicted: tuple[list[ChartView], Any],
    gold: tuple[list[ChartView], Any],
    items: list[str],
    order_free: bool,
    scale_free: bool,
) -> dict[str, Verdict]:
    """A verdict per item; each side is (its views, its figsize). A gold chart without data raises."""
    (pred_axes, pred_size), (gold_axes, gold_size) = predicted, gold
    verdicts: dict[str, Verdict] = {}
    for item in items:
        if item == "figsize":
            verdicts[item] = _figsize(pred_size, gold_size)
            continue
        if item == "data" and not any(a.series for a in gold_axes):
            raise GoldProblem("gold chart has no data to compare (no bar, line, scatter or pie series)")
        if len(pred_axes) != len(gold_axes):
            reason = f"{len(pred_axes)} axes with data vs {len(gold_axes)} in gold"
            verdicts[item] = Verdict(False, reason)
            continue
        compare = _corrected_comparer(item, order_free, scale_free)
        per_axes = [compare(p, g) for p, g in zip(pred_axes, gold_axes, strict=True)]
        verdicts[item] = _combine(per_axes)
    return verdicts


def _corrected_comparer(
    item: str, order_free: bool, scale_free: bool
) -> Callable[[ChartView, ChartView], Verdict]:
    if item == "data":
        return lambda p, g: _data(p, g, order_free, scale_free)
    if item == "type":
        return lambda p, g: Verdict(p.type == g.type, same(p.type == g.type), p.type, g.type)
    if item == "color":
        return lambda p, g: colors_verdict(p.colors, g.colors)
    if item in ("title", "xlabel", "ylabel", "legend_title"):
        return lambda p, g: text_verdict(getattr(p, item), getattr(g, item))
    ordered = item != "legend_labels" and not order_free
    return lambda p, g: labels_verdict(getattr(p, item), getattr(g, item), ordered)


def _combine(per_axes: list[Verdict]) -> Verdict:
    if len(per_axes) == 1:
        return per_axes[0]
    ok = all(v.match for v in per_axes)
    reason = "; ".join(f"axes {i}: {v.reason}" for i, v in enumerate(per_axes) if not v.match) or "all axes"
    return Verdict(ok, reason, [v.predicted for v in per_axes], [v.gold for v in per_axes])


def views_from_capture(capture: dict[str, Any]) -> list[ChartView]:
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
            ChartView(
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
    import numpy as np

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
    lines = [s for s in data if s["kind"] == "line" and s["y"] and not np.isnan(capture_floats(s["y"])).all()]
    return ("line", lines) if lines else ("", [])


def _series_values(series: dict[str, Any]) -> np.ndarray:
    kind = series["kind"]
    if kind == "bar":
        return capture_floats(
            series["widths"] if series.get("orientation") == "horizontal" else series["heights"]
        )
    if kind == "scatter":
        return capture_points(series["offsets"])
    if kind == "pie":
        return capture_floats(series["fractions"])
    return capture_floats(series["y"])


def _data(predicted: ChartView, gold: ChartView, order_free: bool, scale_free: bool) -> Verdict:
    pred, ref = predicted.series, gold.series
    if not pred:
        return Verdict(False, "no data in the predicted chart")
    if len(pred) != len(ref):
        return Verdict(False, f"{len(pred)} series vs {len(ref)} in gold")
    lengths, gold_lengths = [len(s) for s in pred], [len(s) for s in ref]
    if sorted(lengths) != sorted(gold_lengths) or (not order_free and lengths != gold_lengths):
        return Verdict(False, f"series lengths {lengths} vs {gold_lengths} in gold")
    if scale_free:
        pred, ref = _rescale(pred, predicted.points), _rescale(ref, gold.points)
    if not order_free:
        ok = all(_close(p, g) for p, g in zip(pred, ref, strict=True))
        return Verdict(ok, "values equal in order" if ok else "values differ")
    ok = _match_order_free(pred, ref, rows=not predicted.points)
    return Verdict(ok, "values equal up to order" if ok else "values differ (in any order)")


def _rescale(series: list[np.ndarray], points: bool) -> list[np.ndarray]:
    """Divide by the sum of absolute values of all series (per coordinate for scatter points)."""
    import numpy as np

    stacked = np.concatenate([s.reshape(-1, 2) if points else s.ravel() for s in series])
    totals = np.nansum(np.abs(stacked), axis=0)
    totals = np.where(totals > 0, totals, 1.0)
    return [s / totals for s in series]


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    import numpy as np

    return a.shape == b.shape and bool(np.isclose(a, b, rtol=DATA_RTOL, atol=DATA_ATOL, equal_nan=True).all())


def _sorted(values: np.ndarray) -> np.ndarray:
    import numpy as np

    if values.ndim == 1:
        return np.sort(values)
    keys = np.round(values, _SORT_DECIMALS)
    return values[np.lexsort(keys.T[::-1])]  # rows, by first column then the next


def _match_order_free(pred: list[np.ndarray], gold: list[np.ndarray], *, rows: bool) -> bool:
    """Pair series one to one (sorted values equal); with ``rows``, equal-length series must also give
    the same multiset of rows (values at one position across series)."""
    import numpy as np

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


def _figsize(predicted: Any, gold: Any) -> Verdict:
    pred, ref = list(predicted or []), list(gold or [])
    ok = len(pred) == len(ref) == 2 and all(
        abs(p - g) <= FIGSIZE_TOLERANCE for p, g in zip(pred, ref, strict=True)
    )
    return Verdict(ok, same(ok), pred, ref)


def _distinct(values: Any) -> list[str]:
    return list(dict.fromkeys(values))
