"""The Plot_QA setting's chart-to-table tool: the charts the dialogue's history drew, as tables.

The paper (Appendix E.1) turns a chart image into a table with DePlot, a vision model, and gives the table
to the LLM. Here the chart's own data is read instead: in the agent's sandbox every open matplotlib figure
is saved once, the harness receives the capture of that save (`daharness/sandbox/chart_capture.py`: the
series each axes draws, read from matplotlib's artists), and `capture_table` writes each axes' series as
rows. With no open figure, the images the history saved are used, when their save was captured. No model
reads pixels, so the table holds the plotted numbers exactly; a chart drawn without matplotlib has none.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from daharness.core.backend import SandboxBackend
from daharness.core.observation import Observation
from daharness.scoring.chart_captures import MALFORMED, checked_capture

FOLDER = ".chart_to_table"
MAX_IMAGE_BYTES = 20 << 20
MAX_ROWS = 60  # per series: enough for a chart someone reads, short enough for a prompt
# run in the sandbox: save each open figure once (the save sends its capture to the harness); without
# one, list the images in the workspace, newest first
_SAVE_FIGURES = f"""
import json as _json, os as _os, sys as _sys
_saved = []
if "matplotlib.pyplot" in _sys.modules:
    _plt = _sys.modules["matplotlib.pyplot"]
    for _number in _plt.get_fignums():
        _os.makedirs({FOLDER!r}, exist_ok=True)
        _path = _os.path.join({FOLDER!r}, f"figure-{{_number}}.png")
        _plt.figure(_number).savefig(_path)
        _saved.append(_path)
if not _saved:
    _found = [_os.path.relpath(_os.path.join(_root, _name)) for _root, _dirs, _names in _os.walk(".")
              for _name in _names if _name.lower().endswith(".png") and {FOLDER!r} not in _root]
    _saved = sorted(_found, key=_os.path.getmtime, reverse=True)[:5]
print(_json.dumps(_saved))
"""


SAVE_FIGURES = _SAVE_FIGURES  # the code the tool runs (kept in the trajectory)


def charts_as_tables(sandbox: SandboxBackend) -> tuple[Observation, str | None]:
    """The tool's run in the sandbox, and the session's charts as text tables (None: no captured chart)."""
    observation = sandbox.python(_SAVE_FIGURES)
    if not observation.ok:
        return observation, None
    try:
        paths = json.loads(observation.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return observation, None
    tables = []
    with tempfile.TemporaryDirectory(prefix="chart-to-table-") as scratch:
        for index, path in enumerate(paths):
            try:
                digest = sandbox.copy_file_out(path, Path(scratch) / f"{index}.png", MAX_IMAGE_BYTES)
            except (OSError, ValueError):
                continue
            received = sandbox.chart_capture_file(digest)
            if received is None:  # an image saved without matplotlib, or before the capture hook
                continue
            try:
                capture = checked_capture(json.loads(received.read_text(encoding="utf-8")), path)
                tables.append(capture_table(capture, name=Path(path).name))
            except MALFORMED:
                continue
    return observation, "\n\n".join(table for table in tables if table) or None


def capture_table(capture: dict[str, Any], name: str = "chart") -> str:
    """Each axes of a chart capture with its series as rows (category or x, then the values)."""
    parts = []
    for axes in capture.get("axes", []):
        if axes.get("colorbar"):
            continue
        series = [s for s in axes.get("series", []) if s.get("role", "data") == "data"]
        if not series:
            continue
        heading = f"--- {name}, axes {axes.get('index', 0) + 1} ({axes.get('type') or 'chart'})"
        described = [
            f"{what} {axes[key]!r}" for what, key in (("title", "title"), ("x", "xlabel"), ("y", "ylabel"))
            if axes.get(key)
        ]  # fmt: skip
        parts.append(heading + (": " + ", ".join(described) if described else "") + " ---")
        for item in series:
            parts.append(_series_rows(item, axes))
    return "\n".join(parts)


def _series_rows(series: dict[str, Any], axes: dict[str, Any]) -> str:
    kind, label = series.get("kind"), series.get("label") or ""
    title = f"{kind} {label!r}" if label and not str(label).startswith("_") else str(kind)
    if kind == "bar":
        horizontal = series.get("orientation") == "horizontal"
        starts, sizes = (series["y"], series["heights"]) if horizontal else (series["x"], series["widths"])
        values = series["widths"] if horizontal else series["heights"]
        ticks = axes.get("ytick_labels" if horizontal else "xtick_labels") or []
        centres = [_number(s + w / 2) for s, w in zip(starts, sizes, strict=False)]
        keys = ticks if len(ticks) == len(values) and all(ticks) else centres
        rows = [("category" if keys is ticks else "position", "value"), *zip(keys, values, strict=False)]
    elif kind == "line":
        rows = [("x", "y"), *zip(series.get("x", []), series.get("y", []), strict=False)]
    elif kind == "scatter":
        rows = [("x", "y"), *((x, y) for x, y in series.get("offsets", []))]
    elif kind == "pie":
        rows = [
            ("label", "fraction"),
            *zip(series.get("labels", []), series.get("fractions", []), strict=False),
        ]
    else:
        return f"{title}: (not read)"
    shown = rows[: MAX_ROWS + 1]
    lines = [" | ".join(_cell(value) for value in row) for row in shown]
    if len(rows) > len(shown):
        lines.append(f"... {len(rows) - len(shown)} more rows")
    return f"{title}\n" + "\n".join(lines)


def _number(value: float) -> float:
    return round(value, 6)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value)
