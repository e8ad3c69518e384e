"""Matching one chart item: titles and label lists by fuzzy ratio, colours by RGB distance, and the
verdict record every chart check returns. Both chart modes use these; each function says its mode.

The fuzzy ratio is the Indel similarity of python-Levenshtein and rapidfuzz, 100 · 2·LCS / (len a + len b),
which is what DA-Code's ``fuzzywuzzy.fuzz.ratio`` computes with python-Levenshtein installed (an official
requirement); fuzzywuzzy then rounds it to an integer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the libraries are imported where used, so that registering the scorers is cheap
    import numpy as np

TITLE_THRESHOLD = 90  # a title matches at ratio >= 90
LABEL_THRESHOLD = 95  # a label matches at ratio > 95
COLOR_DISTANCE = 15.0  # RGB Euclidean distance, 0..255 per channel
_OFFICIAL_HEX = re.compile(r"#?[0-9a-fA-F]{6}")


@dataclass
class Verdict:
    """One checked item: whether it matches, why, and (for settings) both values."""

    match: bool
    reason: str
    predicted: Any = None
    gold: Any = None

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"match": self.match, "reason": self.reason}
        if self.predicted is not None or self.gold is not None:
            record.update(predicted=self.predicted, gold=self.gold)
        return record


def same(ok: bool) -> str:
    return "equal" if ok else "differ"


# ---- texts ------------------------------------------------------------------------------------------


def similarity(a: str, b: str) -> float:
    """100 · 2·LCS(a, b) / (len a + len b); two empty texts are 100."""
    from rapidfuzz import fuzz  # imported by the charts scored, not by every run that registers the scorers

    return float(fuzz.ratio(a, b))


def fuzz_ratio(a: str, b: str) -> int:
    """fuzzywuzzy's ``fuzz.ratio`` with python-Levenshtein: equal texts 100, an empty one 0, else the
    similarity rounded to an integer (Python's ``round``, as fuzzywuzzy's ``intr``)."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    return round(similarity(a, b))


def official_text(predicted: str, gold: str) -> Verdict:
    """compat titles: an empty prediction fails a non-empty gold; else the rounded ratio of the
    lower-cased texts must be >= 90."""
    if not predicted and gold:
        return Verdict(False, "missing", predicted, gold)
    ratio = fuzz_ratio(predicted.lower(), gold.lower())
    ok = ratio >= TITLE_THRESHOLD
    return Verdict(ok, f"ratio {ratio} {'>=' if ok else '<'} {TITLE_THRESHOLD}", predicted, gold)


def official_labels(predicted: list[str], gold: list[str]) -> Verdict:
    """compat label lists: the same length, and every lower-cased predicted label has a ratio > 95 with
    some gold label (not one to one)."""
    if len(predicted) != len(gold):
        return Verdict(False, f"{len(predicted)} labels vs {len(gold)}", predicted, gold)
    lowered = [g.lower() for g in gold]
    missing = [p for p in predicted if not any(fuzz_ratio(p.lower(), g) > LABEL_THRESHOLD for g in lowered)]
    reason = "every label found" if not missing else f"not in gold: {missing[:5]}"
    return Verdict(not missing, reason, predicted, gold)


def normalize_text(text: str) -> str:
    """corrected: trimmed, whitespace collapsed, case-folded, the Unicode minus read as ``-``."""
    return " ".join(str(text).replace("\u2212", "-").split()).casefold()


def text_verdict(predicted: str, gold: str) -> Verdict:
    """corrected titles: normalized texts with an unrounded ratio >= 90; an empty text matches only an
    empty text."""
    pred, ref = normalize_text(predicted), normalize_text(gold)
    if not pred or not ref:
        ok = pred == ref
        return Verdict(
            ok, "both empty" if ok else ("missing" if not pred else "gold has none"), predicted, gold
        )
    ratio = similarity(pred, ref)
    ok = ratio >= TITLE_THRESHOLD
    return Verdict(ok, f"ratio {ratio:.1f} {'>=' if ok else '<'} {TITLE_THRESHOLD}", predicted, gold)


def label_match(a: str, b: str) -> bool:
    return a == b or similarity(a, b) > LABEL_THRESHOLD


def labels_verdict(predicted: list[str], gold: list[str], ordered: bool) -> Verdict:
    """corrected label lists: the same length; in order (``ordered``) or paired one to one."""
    pred, ref = [normalize_text(p) for p in predicted], [normalize_text(g) for g in gold]
    if len(pred) != len(ref):
        return Verdict(False, f"{len(pred)} labels vs {len(ref)}", predicted, gold)
    if ordered:
        wrong = [i for i, (p, g) in enumerate(zip(pred, ref, strict=True)) if not label_match(p, g)]
        reason = "labels equal in order" if not wrong else f"differ at positions {wrong[:5]}"
        return Verdict(not wrong, reason, predicted, gold)
    ok = one_to_one(pred, ref)
    return Verdict(ok, "labels paired one to one" if ok else "labels cannot be paired", predicted, gold)


def one_to_one(predicted: list[str], gold: list[str]) -> bool:
    """Whether the labels pair up one to one (a maximum matching of matching labels)."""
    import numpy as np

    if not gold:
        return not predicted
    from scipy.optimize import linear_sum_assignment  # imported when used: families register cheaply

    matches = np.array([[label_match(p, g) for g in gold] for p in predicted], dtype=float)
    rows, cols = linear_sum_assignment(-matches)
    return bool(matches[rows, cols].sum() == len(gold))


# ---- colours ----------------------------------------------------------------------------------------


def rgb(color: str) -> np.ndarray:
    """A matplotlib colour as integer RGB, 0..255 per channel."""
    import numpy as np
    from matplotlib.colors import to_rgb

    return np.round(np.array(to_rgb(color)) * 255)


def near_any(color: str, palette: list[str]) -> bool:
    import numpy as np

    point = rgb(color)
    return any(float(np.linalg.norm(point - rgb(other))) <= COLOR_DISTANCE for other in palette)


def official_colors(predicted: list[str], gold: list[str]) -> Verdict:
    """compat: every predicted colour within distance 15 of some gold colour (one way only); the
    official parser reads ``#rrggbb`` hex only and fails on anything else."""
    if not all(isinstance(c, str) and _OFFICIAL_HEX.match(c) for c in [*predicted, *gold]):
        return Verdict(False, "a colour is not #rrggbb (the official evaluator fails)", predicted, gold)
    ok = all(near_any("#" + c.lstrip("#")[:6], ["#" + g.lstrip("#")[:6] for g in gold]) for c in predicted)
    reason = "every predicted colour is near a gold colour" if ok else "a predicted colour is not in gold"
    return Verdict(ok, reason, predicted, gold)


def colors_verdict(predicted: list[str], gold: list[str]) -> Verdict:
    """corrected: colours match both ways (every predicted colour near a gold one and the reverse); a
    predicted value that is no colour matches nothing (a gold one raises: a benchmark defect)."""
    from matplotlib.colors import is_color_like

    colours = [c for c in predicted if is_color_like(c)]
    extra = [c for c in predicted if c not in colours or not near_any(c, gold)]
    missing = [c for c in gold if not near_any(c, colours)]
    ok = not extra and not missing
    reason = "colours match both ways" if ok else f"not in gold: {extra[:5]}; missing: {missing[:5]}"
    return Verdict(ok, reason, predicted, gold)


# ---- capture values ---------------------------------------------------------------------------------


def capture_floats(values: Any) -> np.ndarray:
    """Numbers of a chart capture as floats: null is NaN, "inf" / "-inf" are infinities."""
    import numpy as np

    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def capture_points(offsets: Any) -> np.ndarray:
    """A capture's scatter offsets as an (n, 2) array."""
    import numpy as np

    return np.array([capture_floats(point) for point in offsets], dtype=float).reshape(-1, 2)
