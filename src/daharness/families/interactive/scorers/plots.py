"""Comparing a plot of the agent's code with the reference's (Tapilot-Crossing, Appendix H.2).

``official``: both PNGs are converted to RGB, resized to 800x600 with LANCZOS, read in grayscale, and
the agent's plot is right when their structural similarity (``skimage.metrics.structural_similarity``)
is above 0.6. That rule alone accepts most plots drawn on the same layout: a histogram of another
column usually scores above 0.6 (white space dominates), and so does an empty figure of the right size.

``corrected`` (default) keeps the SSIM rule and adds the chart's data: when the reference plot has a
chart capture (made by the sandbox's matplotlib hook and received by the harness for exactly the PNG's
bytes, never read from a file the code wrote), the agent's plot must have one too, and its data must
match (``daharness.scoring.chart_captures``: the corrected rules, data only, series and values in any
order). A plot saved without matplotlib, or changed after it was saved, is then wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from daharness.families.interactive.scorers.values import Verdict
from daharness.scoring.chart_captures import compare_captures

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np

PLOT_SIZE = (800, 600)  # width, height, as the paper
SSIM_THRESHOLD = 0.6
MAX_PIXELS = 50_000_000  # a larger image is not decoded (a decompression bomb, or not a plot)


def _grayscale(path: Path) -> np.ndarray:
    import numpy as np
    from PIL import Image  # imported when used: the family registers cheaply

    with Image.open(path) as image:
        if image.width * image.height > MAX_PIXELS:
            raise ValueError(f"the image has {image.width}x{image.height} pixels, more than {MAX_PIXELS}")
        resized = image.convert("RGB").resize(PLOT_SIZE, Image.Resampling.LANCZOS)
        return np.asarray(resized.convert("L"))


def plot_similarity(expected: Path, actual: Path) -> float:
    """SSIM of two plots after the paper's grayscale 800x600 LANCZOS normalisation."""
    from skimage.metrics import structural_similarity

    return float(structural_similarity(_grayscale(expected), _grayscale(actual), data_range=255))


def compare_plot(
    expected_png: Path,
    actual_png: Path | None,
    expected_capture: dict[str, Any] | Path | None,
    actual_capture: dict[str, Any] | Path | None,
    *,
    mode: str,
) -> tuple[Verdict, dict[str, Any]]:
    """The verdict on one plot intent and what it was based on (SSIM, the data check)."""
    if actual_png is None:
        return Verdict(False, "the agent's code saved no such plot"), {}
    try:
        similarity = plot_similarity(expected_png, actual_png)
    except (OSError, ValueError) as exc:
        return Verdict(False, f"the agent's plot cannot be read: {exc}"), {}
    details: dict[str, Any] = {"ssim": round(similarity, 4)}
    if similarity <= SSIM_THRESHOLD:
        return Verdict(False, f"SSIM {similarity:.3f} <= {SSIM_THRESHOLD}"), details
    if mode == "official" or expected_capture is None:
        return Verdict(True, f"SSIM {similarity:.3f} > {SSIM_THRESHOLD}"), details
    if actual_capture is None:
        return Verdict(
            False, "no chart data was captured for the agent's plot (saved without matplotlib?)"
        ), details
    data = compare_captures(actual_capture, expected_capture, check=("data",), data_order_free=True)
    details["chart_data"] = data.explanation
    if data.value < 1.0:
        return Verdict(
            False, f"SSIM {similarity:.3f}, but the chart's data differ: {data.explanation}"
        ), details
    return Verdict(True, f"SSIM {similarity:.3f} > {SSIM_THRESHOLD} and the chart's data match"), details
