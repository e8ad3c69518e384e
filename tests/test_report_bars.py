"""report.html's bar charts: valid SVG whose bars are as long as their values, in the colours of pass and
fail, with labels escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from daharness.report.bars import GREEN, RED, svg_bars

SVG = "{http://www.w3.org/2000/svg}"


def _bars(svg: str) -> list[tuple[str, float, float, str]]:
    root = ET.fromstring(svg)
    return [
        (rect.findtext(f"{SVG}title") or "", float(rect.get("width")), float(rect.get("height")), rect.get("fill"))
        for rect in root.iter(f"{SVG}rect")
    ]  # fmt: skip


@pytest.mark.parametrize("horizontal", [True, False])
def test_bars_are_as_long_as_their_values_and_coloured_by_pass_or_fail(horizontal: bool) -> None:
    values = {"easy": 0.9, "<medium & more>": 0.45, "hard": 0.0}
    svg = svg_bars(values, "Accuracy by level", horizontal)
    bars = _bars(svg)
    assert [title for title, *_ in bars] == ["easy: 90.0%", "<medium & more>: 45.0%", "hard: 0.0%"]
    lengths = [width if horizontal else height for _, width, height, _ in bars]
    assert lengths[0] == pytest.approx(2 * lengths[1], rel=0.01) and lengths[2] == 0
    assert [fill for *_, fill in bars] == [GREEN, RED, RED]
    assert "&lt;medium &amp; more&gt;" in svg and "accuracy by question (%)" in svg
    assert 'style="width:100%;height:auto"' in svg


def test_no_values_draw_no_chart() -> None:
    assert svg_bars({}, "Accuracy by level", False) == "<p>No data.</p>"
