"""Bar charts for report.html, written as inline SVG.

A report's charts are a few bars with a value label each, so they are drawn here as rectangles and text:
importing matplotlib for them cost about 0.6 s of every `daharness run` (issue 27's one-sample target is
1.2 s for the whole process). The SVG scales with the page (`width:100%`), and each bar carries a
`<title>` so a pointer on it shows its label and value.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

GREEN, RED = "#2e7d32", "#c62828"
_QUOTES = {'"': "&quot;"}  # text and attribute values alike (SVG is XML: xml.sax's escaping)
_WIDTH = 620  # the drawing's own units; the page scales it
_CHAR = 6.6  # a rough width of one character at the labels' 11 px, enough to leave room for the text
_BAR = 26  # height of one horizontal bar's row
_PLOT_HEIGHT = 220  # height of the vertical bars' plot area
_TICKS = range(0, 101, 20)


def _text(x: float, y: float, text: str, anchor: str = "start", size: int = 11, extra: str = "") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
        f"{escape(text, _QUOTES)}</text>"
    )


def _bar(x: float, y: float, width: float, height: float, value: float, label: str) -> str:
    color = GREEN if value >= 50 else RED
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(width, 0):.1f}" height="{max(height, 0):.1f}" '
        f'fill="{color}"><title>{escape(label, _QUOTES)}: {value:.1f}%</title></rect>'
    )


def _svg(height: float, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height:.0f}" '
        f'style="width:100%;height:auto" font-family="system-ui,sans-serif" role="img" '
        f'aria-label="{escape(title, _QUOTES)}">' + _text(4, 16, title, size=13) + "".join(body) + "</svg>"
    )


def svg_bars(
    values: dict[str, float], title: str, horizontal: bool, measure: str = "accuracy by question"
) -> str:
    """Bars of `values` (fractions, drawn as percent): one row per label when `horizontal`, else one
    column per label; green at 50% or more, red below."""
    if not values:
        return "<p>No data.</p>"
    labels = list(values)
    percents = [values[label] * 100 for label in labels]
    return (_horizontal if horizontal else _vertical)(labels, percents, title, f"{measure} (%)")


def _horizontal(labels: list[str], percents: list[float], title: str, axis: str) -> str:
    left = min(max(len(label) for label in labels) * _CHAR + 12, _WIDTH * 0.45)
    right = _WIDTH - 48  # room for the value labels past 100%
    top = 30
    scale = (right - left) / 100
    bottom = top + _BAR * len(labels)
    body = []
    for tick in _TICKS:
        x = left + tick * scale
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#eee"/>')
        body.append(_text(x, bottom + 14, str(tick), "middle", 10))
    for row, (label, value) in enumerate(zip(labels, percents, strict=True)):
        y = top + row * _BAR
        body.append(_text(left - 6, y + _BAR / 2 + 4, label, "end"))
        body.append(_bar(left, y + 4, min(value, 100) * scale, _BAR - 8, value, label))
        body.append(_text(left + min(value, 100) * scale + 4, y + _BAR / 2 + 4, f"{value:.1f}", size=10))
    body.append(f'<line x1="{left:.1f}" y1="{top}" x2="{left:.1f}" y2="{bottom}" stroke="#444"/>')
    body.append(_text((left + right) / 2, bottom + 30, axis, "middle"))
    return _svg(bottom + 38, title, body)


def _vertical(labels: list[str], percents: list[float], title: str, axis: str) -> str:
    left, right, top = 56, _WIDTH - 10, 34
    slanted = max(len(label) for label in labels) * _CHAR > (right - left) / len(labels) - 4
    bottom = top + _PLOT_HEIGHT
    scale = _PLOT_HEIGHT / 112  # room over 100% for the value labels
    column = (right - left) / len(labels)
    body = []
    for tick in _TICKS:
        y = bottom - tick * scale
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(_text(left - 6, y + 4, str(tick), "end", 10))
    for index, (label, value) in enumerate(zip(labels, percents, strict=True)):
        x = left + index * column
        height = min(value, 100) * scale
        body.append(_bar(x + column * 0.15, bottom - height, column * 0.7, height, value, label))
        body.append(_text(x + column / 2, bottom - height - 4, f"{value:.1f}", "middle", 10))
        middle = x + column / 2
        if slanted:  # long labels run down at an angle instead of over each other
            turn = f' transform="rotate(-30 {middle:.1f} {bottom + 14:.1f})"'
            body.append(_text(middle, bottom + 14, label, "end", extra=turn))
        else:
            body.append(_text(middle, bottom + 14, label, "middle"))
    body.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>')
    below = max(len(label) for label in labels) * _CHAR * 0.5 + 20 if slanted else 22
    turn = f' transform="rotate(-90 14 {top + _PLOT_HEIGHT / 2:.1f})"'
    body.append(_text(14, top + _PLOT_HEIGHT / 2, axis, "middle", extra=turn))
    return _svg(bottom + below, title, body)
