"""DA-Code chart scoring: the data and metadata of the agent's chart against the gold chart's.

A chart reaches the scorer in one of two forms, on either side:

* a **daharness capture**: the JSON that ``daharness/sandbox/chart_capture.py`` writes when a figure is
  saved (its docstring describes the format, ``"format": "daharness-chart-capture"``, ``"version": 1``;
  the scorer refuses other formats and versions), so the agent's code is never edited;
* **DA-Agent's files**: ``dabench/plot.json`` (type, colours, figsize, titles, labels) and
  ``dabench/result.npy`` (the data matrix), what DA-Agent's post-processing leaves in an output folder
  and what DA-Code's gold folders hold, with the image itself.

The rule (DA-Code paper §3.4 "chart match score" and Appendix C.1): the score is 1 only if the data and
every plot setting the task names match, else 0. ``check`` names what is compared: ``data``, ``type``,
``color``, ``figsize``, ``title``, ``legend_title``, ``legend_labels``, ``xlabel``, ``ylabel``,
``xtick_labels``, ``ytick_labels`` (the official key names ``graph_title``, ``x_label``, ``y_label`` and
``labels`` are accepted too). ``keys`` is the official option (DA-Code's eval configs): the plot.json keys
to compare, all of them when empty.

Two modes:

* ``compat`` is DA-Code's ``compare_image`` (``chart_compat``): a capture is first turned into the
  plot.json / result.npy that DA-Agent's post-processing would have written for it, then the official
  steps run: the gold image must exist; a predicted image equal to the gold image pixel by pixel scores
  1; otherwise the data matrix and every key must match. Its rules and defects, listed in
  ``chart_compat``'s docstring and in the family's README.md, include: only the current axes is read;
  bar, barh and hist are all ``bar``; each column of the data matrix is sorted on its own, so values
  shuffled within a column across series still match; the data also matches once each side is divided
  by its own total; label lists are not paired one to one; colours are checked one way only; reference
  lines (axhline) and error-bar caps count as line data; a suptitle is not a title; a gold folder
  without the image scores 0 whatever the agent did.
* ``corrected`` (default, ``chart_corrected``) keeps the paper's rule and fixes what is unfair. With a
  capture on both sides every axes with data is compared (colorbars excluded); otherwise both sides
  are compared as DA-Agent's files describe them (a capture converted as above), which is how DA-Agent
  outputs are rescored. Data is compared in order unless ``data_order_free``: series are then paired
  one to one and values compared as multisets with rows across series kept together; values match with
  ``numpy.isclose`` (rtol 1e-5, atol 1e-5, NaN equal); ``data_scale_free`` divides all values by their
  total absolute value first. Texts are trimmed, whitespace-collapsed and case-folded, the thresholds
  (ratio >= 90 for titles, > 95 for labels) unrounded, an empty text matches only an empty text; the
  title falls back to left/right titles and the suptitle, legend items to the figure legend. Label lists
  pair one to one, tick labels in order unless order is free. Colours match both ways. ``type`` tells
  ``bar`` from ``barh``. ``figsize`` within 0.01 inch. The image itself is not compared.

A missing or unreadable prediction scores 0 with the reason. A gold chart that cannot be read raises in
``corrected`` (a benchmark defect) and scores 0 in ``compat`` (the official evaluator fails there too).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import field_validator

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import GoldMissing, ScoringContext
from daharness.families.workspace.modes import WORKSPACE_MODES
from daharness.families.workspace.scorers.chart_compat import (
    OFFICIAL_KEYS,
    OfficialChart,
    compare_image,
    dabench_from_capture,
)
from daharness.families.workspace.scorers.chart_files import captured_chart
from daharness.families.workspace.scorers.text import official_file_names
from daharness.scoring.chart_captures import (
    ALIASES,
    CHECKS,
    MALFORMED,
    ChartSide,
    capture_side,
    load_capture,
    normalize_checks,
    read_capture,
    score_sides,
    verdict_score,
)
from daharness.scoring.chart_corrected import ChartView, views_from_dabench
from daharness.scoring.chart_match import fuzz_ratio, similarity
from daharness.scoring.outputs import OutputFileOptions, nothing_collected, read_npy

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np

__all__ = ["ChartFiles", "fuzz_ratio", "load_capture", "score_chart", "similarity"]

Mode = Literal["corrected", "compat"]
MODES: tuple[Mode, ...] = ("corrected", "compat")
OFFICIAL_NAMES = {item: key for key, item in ALIASES.items()}  # our item -> the official key
DABENCH_PLOT = "dabench/plot.json"
DABENCH_DATA = "dabench/result.npy"


@dataclass(frozen=True)
class ChartFiles:
    """One side of a chart comparison. ``capture``: a daharness capture (dict or JSON path), used when
    given; ``plot`` / ``data``: DA-Agent's ``plot.json`` / ``result.npy`` (paths that may be missing);
    ``images``: the image files for compat's pixel comparison, as (name, file or None): the gold images,
    or the predicted candidates in the official order."""

    capture: dict[str, Any] | Path | None = None
    plot: Path | None = None
    data: Path | None = None
    images: tuple[tuple[str, Path | None], ...] = ()  # (listed name, the file or None when absent)


# ---- loading ----------------------------------------------------------------------------------------


def _side(value: ChartFiles | dict[str, Any] | Path | None) -> ChartFiles:
    if isinstance(value, ChartFiles):
        return value
    return ChartFiles(capture=value)


def _read_dabench(files: ChartFiles) -> tuple[dict[str, Any], np.ndarray]:
    """plot.json and result.npy; FileNotFoundError or ValueError says what is missing or unreadable."""
    import numpy as np

    if files.plot is None or not files.plot.is_file():
        raise FileNotFoundError("no capture and no dabench/plot.json")
    if files.data is None or not files.data.is_file():
        raise FileNotFoundError("no dabench/result.npy")
    try:
        params = json.loads(files.plot.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"unreadable plot.json: {error}") from error
    try:
        matrix = read_npy(files.data)
    except (OSError, ValueError) as error:
        raise ValueError(f"unreadable result.npy: {error}") from error
    if not isinstance(params, dict):
        raise ValueError("plot.json is not a JSON object")
    try:
        return params, np.asarray(matrix, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"result.npy is not numeric: {error}") from error


# ---- the scorer -------------------------------------------------------------------------------------


def score_chart(
    predicted: ChartFiles | dict[str, Any] | Path | None,
    gold: ChartFiles | dict[str, Any] | Path,
    *,
    check: Sequence[str] = ("data",),
    keys: Sequence[str] | None = None,
    data_order_free: bool = False,
    data_scale_free: bool = False,
    mode: Mode = "corrected",
) -> Score:
    """Score the agent's chart against the gold chart, all or nothing.

    Args:
        predicted: the agent's chart: a capture (dict or JSON path) or ``ChartFiles``; ``None`` or a
            missing file scores 0 ("no chart captured"), an unreadable one scores 0 with the error.
        gold: the gold chart, a capture or ``ChartFiles``.
        check: what must match, among ``CHECKS`` (official names in ``ALIASES`` accepted); every item
            is compared, also after one fails, so ``details`` lists each verdict. An unknown name
            raises ``ValueError``.
        keys: compat: the official keys to compare (``OFFICIAL_KEYS``; empty means every key of the
            gold plot.json, as officially); ``None`` takes them from ``check`` (then data only when
            ``check`` names nothing else). corrected ignores it. compat always compares the data.
        data_order_free: compare data regardless of the order of series and values (corrected only).
        data_scale_free: compare data up to one positive factor (corrected only).
        mode: ``corrected`` (default) or ``compat``; the rules are in the module docstring.

    Returns a Score of 1.0 when every checked item matches, else 0.0; ``details`` holds the mode, the
    options and, under ``items``, each item's ``match``, ``reason`` and, for settings, both values.
    """
    if mode not in MODES:
        raise ValueError(f"unknown chart mode {mode!r}; choose one of {', '.join(MODES)}")
    items = normalize_checks(check)
    details: dict[str, Any] = {
        "mode": mode,
        "check": items,
        "data_order_free": data_order_free,
        "data_scale_free": data_scale_free,
    }
    if mode == "compat":
        official_keys = (
            list(keys) if keys is not None else [OFFICIAL_NAMES.get(i, i) for i in items if i != "data"]
        )
        details["keys"] = official_keys
        value, verdicts = compare_image(
            _official(predicted), _official(gold), official_keys, empty_means_all=keys is not None
        )
        return verdict_score(value, verdicts, details)

    gold_side = _read(_side(gold), "gold")
    if predicted is None:
        return Score(value=0.0, explanation="no chart captured (the agent saved no figure)", details=details)
    try:
        predicted_side = _read(_side(predicted), "predicted", like=gold_side.form)
    except FileNotFoundError as error:
        return Score(value=0.0, explanation=f"no chart captured ({error})", details=details)
    except MALFORMED as error:
        return Score(
            value=0.0, explanation=f"chart unreadable: {type(error).__name__}: {error}", details=details
        )
    if predicted_side.form != gold_side.form:  # a capture against DA-Agent's files: compare as DA-Agent reads
        gold_side = _read(_side(gold), "gold", like="dabench")
    return score_sides(predicted_side, gold_side, items, data_order_free, data_scale_free, details)


def _read(files: ChartFiles, side: str, like: str = "capture") -> ChartSide:
    """One side for the corrected rules. A capture is read as captured unless ``like="dabench"``, when
    it is first turned into DA-Agent's files. Raises FileNotFoundError / ValueError when the side cannot
    be read."""
    if isinstance(files.capture, Path) and not files.capture.is_file():
        raise FileNotFoundError(f"{files.capture} not found")
    if files.capture is not None:
        capture = read_capture(files.capture, side)
        if like == "capture":
            return capture_side(capture)
        errors = list(capture.get("errors") or [])
        params, matrix = dabench_from_capture(capture)
        if params is None or matrix is None:
            return ChartSide([ChartView()], capture.get("figsize"), "dabench", errors)
        return ChartSide(views_from_dabench(params, matrix), params.get("figsize"), "dabench", errors)
    params, matrix = _read_dabench(files)
    return ChartSide(views_from_dabench(params, matrix), params.get("figsize"), "dabench", [])


def _official(value: ChartFiles | dict[str, Any] | Path | None) -> OfficialChart:
    """One side as the official evaluator reads it (a capture turned into DA-Agent's files)."""
    files = _side(value)
    if files.capture is None:
        return OfficialChart(list(files.images), files.plot, files.data)
    try:
        params, matrix = dabench_from_capture(read_capture(files.capture, "capture"))
    except MALFORMED:
        return OfficialChart(list(files.images))  # no readable capture: DA-Agent would have left no files
    return OfficialChart(list(files.images), params, matrix)


def checks_for_keys(keys: Sequence[str]) -> list[str]:
    """corrected items for official ``keys``: data plus each known key (every item when empty)."""
    if not keys:
        return list(CHECKS)
    known = [ALIASES.get(k.lower(), k.lower()) for k in keys if k.lower() in OFFICIAL_KEYS]
    return normalize_checks(["data", *known])


# ---- the registered scorer --------------------------------------------------------------------------


class ChartScorerOptions(OutputFileOptions):
    """Options of a `chart` scorer: `file` is the image the agent must save (from a sandbox, its data is
    the capture the harness received when it was saved, see `chart_files.py`), `gold` the gold image (or
    a gold capture `<image>.json`); `check` the items to compare; `keys` the official compare_image keys
    (DA-Code configs), from which `check` follows when `check` is not given."""

    check: tuple[str, ...] = ("data",)
    keys: tuple[str, ...] | None = None
    data_order_free: bool = False
    data_scale_free: bool = False

    @field_validator("check")
    @classmethod
    def _known_checks(cls, check: tuple[str, ...]) -> tuple[str, ...]:
        # an unknown item, or none, is an error when the task is loaded, not when it is scored
        normalize_checks(check)
        return check


@scorer("chart", options=ChartScorerOptions, modes=WORKSPACE_MODES)
def chart(context: ScoringContext, options: ChartScorerOptions) -> Score:
    """The data and properties of a saved matplotlib chart against the gold chart (DA-Code compare_image)."""
    if context.files is None:
        return nothing_collected(options.file)
    check: Sequence[str] = options.check
    if "check" not in options.model_fields_set and options.keys is not None:
        check = checks_for_keys(options.keys)
    if context.files.captures is not None:  # files from a daharness sandbox: the harness's capture only
        image = context.output(options.file)
        if image is None:
            return nothing_collected(options.file)
        capture, problem = captured_chart(context.files, options.file, image)
        if capture is None:
            return Score(value=0.0, explanation=problem, details={"mode": context.mode, "file": options.file})
        predicted = ChartFiles(capture=capture, images=((options.file, image),))
    else:  # an official agent's output folder: its own files
        predicted = _predicted_files(context, options)
    return score_chart(
        predicted, _gold_files(context, options), mode=context.mode,  # type: ignore[arg-type]
        check=check, keys=options.keys, data_order_free=options.data_order_free,
        data_scale_free=options.data_scale_free,
    )  # fmt: skip


def _predicted_files(context: ScoringContext, options: ChartScorerOptions) -> ChartFiles:
    """An output folder from outside a daharness sandbox (rescoring): the capture of the image it saved
    (`<image>.json` beside it) when there is one,
    else DA-Agent's files. As officially, the files are the names in the answer (directories dropped)
    followed by dabench/plot.json and dabench/result.npy, or the task's files when the answer names none;
    the first image, .json and .npy among them are read."""
    image = context.output(options.file)
    capture = context.output(options.file + ".json") if image is not None else None
    names = official_file_names(context.submission.answer)
    listed = [*names, DABENCH_PLOT, DABENCH_DATA] if names else [options.file, DABENCH_PLOT, DABENCH_DATA]
    return ChartFiles(
        capture=capture,
        plot=context.output(next(name for name in listed if name.endswith(".json"))),
        data=context.output(next(name for name in listed if name.endswith(".npy"))),
        images=tuple((name, context.output(name)) for name in listed),
    )


def _gold_files(context: ScoringContext, options: ChartScorerOptions) -> ChartFiles:
    """The gold chart: a gold capture (`<gold image>.json`, or `gold` itself when it names a JSON file)
    if the suite has one, else DA-Code's gold files (the image, plot.json, result.npy)."""
    gold_name = options.gold_name()
    image = gold_name.removesuffix(".json") if gold_name.endswith(".json") else gold_name
    images = ((image, _gold_or_none(context, image)),)
    capture = _gold_or_none(context, gold_name if gold_name.endswith(".json") else gold_name + ".json")
    if capture is not None:
        return ChartFiles(capture=capture, images=images)
    return ChartFiles(
        plot=_gold_or_none(context, "plot.json"), data=_gold_or_none(context, "result.npy"), images=images
    )


def _gold_or_none(context: ScoringContext, name: str) -> Path | None:
    try:
        return context.gold(name)
    except GoldMissing:
        return None
