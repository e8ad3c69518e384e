"""compat chart scoring: DA-Code's ``compare_image`` and the DA-Agent post-processing it relies on.

Two parts, each reproducing official code of yiyihum/da-code (b211daf):

* ``dabench_from_capture`` is DA-Agent's plot post-processing (``da_agent/configs/scripts/image.py``,
  run by ``configs/post_process.py``), which writes ``dabench/plot.json`` and ``dabench/result.npy``:
  here computed from a daharness chart capture instead of re-running the agent's script. Only the
  figure's current axes is read; its type is the first of ``pie`` (any wedge), ``bar`` (any rectangle
  that is not a square: bar, barh and hist alike), ``scatter``, ``line`` (any line of two points or
  more, axhline and error-bar caps included). The data matrix: pie, one row of wedge fractions; bar,
  rows of bar lengths, a new row each time the bar position goes back (the orientation is the dimension,
  width or height, with more distinct values; a tie means horizontal); line, one row of y values per
  line with numeric, not all-NaN y; scatter, one row per point. Ragged rows are padded with zeros.
  Colours are the distinct colours of the artists of that type. A chart without a type or without data
  leaves neither file, as DA-Agent's post-processing does.
* ``compare_image`` is the official evaluator (``da_agent/evaluators/metrics/image.py``):

  1. The gold image must exist, else the score is 0 (an assertion the evaluator's catch-all scores 0).
  2. If a predicted image whose path contains the gold image's base name equals the gold image pixel by
     pixel (``numpy.allclose``, atol 0.01), the score is 1. Images are read in grayscale unless ``color``
     is a key; with ``figsize`` a key the shapes must be equal, else the predicted image is resized to
     the gold size first (OpenCV's bilinear ``cv2.resize`` when opencv is installed; else Pillow's
     bilinear resize, which can differ in edge pixels).
  3. Otherwise both must hold: the data matrices match (a 1-D array is made a column; equal shapes; each
     column sorted on its own; ``numpy.allclose`` with atol 0.01 and NaN equal to NaN; either as they
     are or each divided by its own total), and every key of ``keys`` (all keys of the gold plot.json
     when empty) matches: ``figsize`` exactly; ``type`` without case; ``graph_title``, ``x_label``,
     ``y_label``, ``legend_title`` by rounded fuzzy ratio >= 90 of the lower-cased texts (an empty
     prediction against a non-empty gold fails); ``labels``, ``xtick_labels``, ``ytick_labels`` of equal
     length with every lower-cased predicted label > 95 against some gold label; ``color``: every
     predicted colour within RGB distance 15 of some gold colour. An unknown key makes the official
     evaluator raise: 0.

  Which files are read follows the official lists: the predicted images are the answer's file names
  (directories dropped) in the output folder, and the first ``.json`` / ``.npy`` among them precede
  ``dabench/plot.json`` / ``dabench/result.npy``. An unreadable file or a value of the wrong type, which
  makes the official code raise, scores 0 with the reason. One departure: an object array in a
  ``result.npy`` scores 0 with the reason, where the official code unpickles it (running whatever code
  the file names, on the host).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daharness.scoring.chart_match import (
    Verdict,
    capture_floats,
    capture_points,
    official_colors,
    official_labels,
    official_text,
    same,
)
from daharness.scoring.outputs import read_npy

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np

IMAGE_TOLERANCE = 0.01
DATA_TOLERANCE = 0.01
OFFICIAL_KEYS = (
    "figsize", "type", "labels", "x_label", "y_label", "graph_title", "legend_title", "color",
    "xtick_labels", "ytick_labels",
)  # fmt: skip
_TITLE_KEYS = ("graph_title", "x_label", "y_label", "legend_title")
_LABEL_KEYS = ("labels", "xtick_labels", "ytick_labels")


@dataclass
class OfficialChart:
    """One side as the official evaluator reads it: image files (the gold ones, or the predicted
    candidates in the official order), and plot.json / result.npy as files (which may be missing) or as
    values derived from a capture (``None``: no such file)."""

    images: list[tuple[str, Path | None]] = field(default_factory=list)  # (listed name, file or None)
    plot: Path | dict[str, Any] | None = None
    data: Path | np.ndarray | None = None


class _OfficialFailure(Exception):
    """The official evaluator raises here; its catch-all scores the task 0."""


# ---- DA-Agent's post-processing, from a capture -----------------------------------------------------


def dabench_from_capture(capture: dict[str, Any]) -> tuple[dict[str, Any] | None, np.ndarray | None]:
    """(plot.json, result.npy) as DA-Agent's post-processing would write them for this figure; (None,
    None) when it writes neither (no chart type or no data)."""
    import numpy as np

    axes_list = capture.get("axes") or []
    if not axes_list:
        return None, None
    current = capture.get("current_axes")
    axes = axes_list[current] if isinstance(current, int) and 0 <= current < len(axes_list) else axes_list[-1]
    series = axes.get("series") or []
    kind = _official_type(series)
    chosen = [s for s in series if s["kind"] == kind]
    if kind == "bar":
        rows = _bar_rows(chosen)
    elif kind == "line":
        chosen = [s for s in chosen if _data_line(s)]
        rows = [capture_floats(s["y"]) for s in chosen]
    elif kind == "pie":
        rows = [np.concatenate([capture_floats(s["fractions"]) for s in chosen])]
    elif kind == "scatter":
        rows = [point for s in chosen for point in capture_points(s["offsets"])]
    else:
        return None, None
    matrix = _matrix(rows)
    if matrix.size == 0:
        return None, None
    params = {
        "type": kind,
        "color": list(dict.fromkeys(c for s in chosen for c in s.get("colors", []))),
        "figsize": list(capture.get("figsize") or []),
        "graph_title": axes.get("title", ""),
        "legend_title": axes.get("legend_title", ""),
        "labels": list(axes.get("legend_labels", [])),
        "x_label": axes.get("xlabel", ""),
        "y_label": axes.get("ylabel", ""),
        "xtick_labels": list(axes.get("xtick_labels", [])),
        "ytick_labels": list(axes.get("ytick_labels", [])),
    }
    return params, matrix


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


def _data_line(series: dict[str, Any]) -> bool:
    import numpy as np

    y = capture_floats(series["y"])
    return len(series["x"]) > 1 and len(y) > 1 and series.get("y_numeric", True) and not np.isnan(y).all()


def _bar_rows(series: list[dict[str, Any]]) -> list[np.ndarray]:
    import numpy as np

    bars = [
        (x, y, w, h)
        for s in series
        for x, y, w, h in zip(
            capture_floats(s["x"]),
            capture_floats(s["y"]),
            capture_floats(s["widths"]),
            capture_floats(s["heights"]),
            strict=False,
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


def _matrix(rows: list[np.ndarray]) -> np.ndarray:
    import numpy as np

    if not rows:
        return np.empty((0,))
    width = max(len(np.atleast_1d(r)) for r in rows)
    # numpy refuses ragged rows; the official script then pads them with zeros.
    return np.array([np.pad(np.atleast_1d(r), (0, width - len(np.atleast_1d(r)))) for r in rows], dtype=float)


# ---- compare_image ----------------------------------------------------------------------------------


def compare_image(
    predicted: OfficialChart, gold: OfficialChart, keys: list[str], *, empty_means_all: bool = True
) -> tuple[float, dict[str, Verdict]]:
    """The official score (0 or 1) and a verdict per step (``image``, ``data``, ``plot``, each key).

    ``keys`` empty means every key of the gold plot.json, as officially; with ``empty_means_all`` False
    (a daharness task that checks data only) no key is compared."""
    verdicts: dict[str, Verdict] = {}
    try:
        golds = [path for _, path in gold.images if path is not None and path.is_file()]
        if not gold.images or len(golds) < len(gold.images):
            missing = ", ".join(name for name, _ in gold.images) or "none named"
            raise _OfficialFailure(f"gold image missing ({missing})")
        images = [(name, path) for name, path in predicted.images if name.endswith((".png", "jpg"))]
        verdicts["image"] = _images(images, golds, "color" in keys, "figsize" in keys)
        if verdicts["image"].match:
            return 1.0, verdicts
        verdicts["data"] = _data(predicted.data, gold.data)
        predicted_plot, gold_plot = _load_plot(predicted.plot, "predicted"), _load_plot(gold.plot, "gold")
        if gold_plot is None:
            raise _OfficialFailure("the gold plot.json does not exist")
        if predicted_plot is None:
            verdicts["plot"] = Verdict(False, "no plot.json")
        else:
            for key in keys or (list(gold_plot) if empty_means_all else []):
                verdicts[str(key)] = _key(str(key), predicted_plot, gold_plot)
    except _OfficialFailure as failure:
        verdicts["error"] = Verdict(False, f"the official evaluator fails: {failure}")
        return 0.0, verdicts
    decisive = [verdict for name, verdict in verdicts.items() if name != "image"]
    return float(all(verdict.match for verdict in decisive)), verdicts


def _images(predicted: list[tuple[str, Path | None]], gold: list[Path], color: bool, size: bool) -> Verdict:
    import numpy as np

    for gold_image in gold:
        # the first listed image whose name contains the gold name, which must then exist
        found = next((path for name, path in predicted if gold_image.name in name), "")
        if not isinstance(found, Path) or not found.is_file():
            return Verdict(False, f"no predicted image named like {gold_image.name}")
        try:
            result, reference = _read_image(found, color), _read_image(gold_image, color)
        except OSError as error:
            raise _OfficialFailure(f"cannot read an image: {error}") from error
        if reference.ndim == 3 and (result.ndim != 3 or reference.shape[-1] != result.shape[-1]):
            return Verdict(False, "the images have different channels")
        if size:
            equal = result.shape == reference.shape and bool(
                np.allclose(result, reference, atol=IMAGE_TOLERANCE)
            )
        else:
            result = _resize(result, reference.shape[:2])
            equal = bool(np.allclose(result, reference, atol=IMAGE_TOLERANCE))
        if not equal:
            return Verdict(False, f"{found.name} differs from the gold image pixel by pixel")
    return Verdict(True, "the images are equal pixel by pixel")


def _read_image(path: Path, color: bool) -> np.ndarray:
    import numpy as np
    from PIL import Image

    with Image.open(path) as image:
        return np.array(image if color else image.convert("L"))


def _resize(image: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    import numpy as np

    height, width = shape
    if image.shape[:2] == (height, width):
        return image
    try:
        import cv2  # type: ignore[import-not-found]
    except ImportError:
        from PIL import Image

        return np.array(Image.fromarray(image).resize((width, height), Image.Resampling.BILINEAR))
    return cv2.resize(image, (width, height))


def _data(predicted: Path | np.ndarray | None, gold: Path | np.ndarray | None) -> Verdict:
    import numpy as np

    if predicted is None or (isinstance(predicted, Path) and not predicted.is_file()):
        return Verdict(False, "no result.npy")
    if gold is None or (isinstance(gold, Path) and not gold.is_file()):
        raise _OfficialFailure("the gold result.npy does not exist")
    results, golds = _loadcapture_floats(predicted, "predicted"), _loadcapture_floats(gold, "gold")
    results = results.reshape(-1, 1) if results.ndim == 1 else results
    golds = golds.reshape(-1, 1) if golds.ndim == 1 else golds
    if results.shape != golds.shape:
        return Verdict(False, f"shape {list(results.shape)} vs gold {list(golds.shape)}")
    try:
        with np.errstate(all="ignore"):
            raw = _columns_close(results, golds)
            scaled = _columns_close(results / np.sum(results), golds / np.sum(golds))
    except (TypeError, ValueError) as error:
        raise _OfficialFailure(f"the data cannot be compared: {error}") from error
    if raw or scaled:
        return Verdict(True, "equal" if raw else "equal once each is divided by its total")
    return Verdict(False, "the values differ (each column sorted)")


def _columns_close(a: np.ndarray, b: np.ndarray) -> bool:
    import numpy as np

    return bool(np.allclose(np.sort(a, axis=0), np.sort(b, axis=0), atol=DATA_TOLERANCE, equal_nan=True))


def _loadcapture_floats(value: Path | np.ndarray, side: str) -> np.ndarray:
    import numpy as np

    if isinstance(value, np.ndarray):
        return value
    try:
        return np.asarray(read_npy(value))
    except (OSError, ValueError, EOFError) as error:
        raise _OfficialFailure(f"the {side} result.npy is unreadable: {error}") from error


def _load_plot(value: Path | dict[str, Any] | None, side: str) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if value is None or not value.is_file():
        return None
    try:
        loaded = json.loads(value.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise _OfficialFailure(f"the {side} plot.json is unreadable: {error}") from error
    if not isinstance(loaded, dict):
        raise _OfficialFailure(f"the {side} plot.json is not an object")
    return loaded


def _key(key: str, predicted: dict[str, Any], gold: dict[str, Any]) -> Verdict:
    """``ImageTest.compare_key``; a value of the wrong type or an unknown key makes it raise."""
    name = key.lower()
    if name not in OFFICIAL_KEYS:
        raise _OfficialFailure(f"unknown key {key!r}")
    empty: Any = [] if name in ("figsize", "color", *_LABEL_KEYS) else ""
    result, reference = predicted.get(name, empty), gold.get(name, empty)
    try:
        if name == "figsize":
            ok = list(result) == list(reference)
            return Verdict(ok, same(ok), result, reference)
        if name == "type":
            ok = result.lower() == reference.lower()
            return Verdict(ok, same(ok), result, reference)
        if name == "color":
            return official_colors(list(result), list(reference))
        if name in _TITLE_KEYS:
            return official_text(result, reference)
        return official_labels(list(result), list(reference))
    except (AttributeError, TypeError) as error:
        raise _OfficialFailure(f"{key}: {error}") from error
