"""An observation in the form a run asked for: screenshot, table, both, or set-of-mark.

Set-of-mark follows the official agent's `draw_bounding_boxes`: each kept element whose box is not a
single flat colour (nothing to see there; the boxes drawn before count, and a box past the image's edge
is black there) gets a red outline and its number on a black label at its bottom-left corner, in the
official font (Arial 15 where installed, else Pillow's default font at its default size), and only the
marked elements are rows of the table, numbered as on the image. The image keeps the screenshot's mode.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from daharness.core.desktop import DesktopView, ObservationType, ScreenElement
from daharness.sandbox.desktop.table import keeps, linearize
from daharness.sandbox.once import computed_once

if TYPE_CHECKING:
    from PIL import ImageFont


def build_view(
    observation: ObservationType, image: bytes | None, raw_elements: list[dict[str, Any]], duration_s: float
) -> DesktopView:
    elements = [ScreenElement.model_validate(raw) for raw in raw_elements]
    rows = [element for element in elements if keeps(element)]
    if observation == "screenshot":
        return DesktopView(observation=observation, image=image, duration_s=duration_s)
    if observation == "som":
        assert image is not None
        marked, rows = mark_elements(image, rows)
        return DesktopView(
            observation=observation, image=marked, raw_image=image, table=linearize(rows, index=True),
            elements=rows, duration_s=duration_s,
        )  # fmt: skip
    return DesktopView(
        observation=observation,
        image=image if observation == "screenshot_a11y_tree" else None,
        table=linearize(rows),
        elements=rows,
        duration_s=duration_s,
    )


def mark_elements(png: bytes, elements: list[ScreenElement]) -> tuple[bytes, list[ScreenElement]]:
    """The screenshot with numbered boxes on the elements, and the elements that got a number."""
    from PIL import Image, ImageDraw  # imported when used: the families register cheaply

    image = Image.open(io.BytesIO(png))
    draw = ImageDraw.Draw(image)
    marked: list[ScreenElement] = []
    for element in elements:
        box = (element.x, element.y, element.x + element.width, element.y + element.height)
        if _one_colour(image.crop(box).getextrema()):
            continue
        draw.rectangle(box, outline="red", width=1)
        label = str(len(marked) + 1)
        corner = (element.x, box[3])
        draw.rectangle(draw.textbbox(corner, label, font=_font(), anchor="lb"), fill="black")
        draw.text(corner, label, font=_font(), anchor="lb", fill="white")
        marked.append(element)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue(), marked


def _one_colour(extrema: Any) -> bool:
    """Whether a crop's extrema (one (low, high) pair, or one per band) say it holds a single colour."""
    bands = [extrema] if isinstance(extrema[0], int | float) else extrema
    return all(low == high for low, high in bands)


@computed_once
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    try:
        return ImageFont.truetype("arial.ttf", 15)
    except OSError:  # no Arial (a Linux machine without Microsoft's fonts): the official fallback
        return ImageFont.load_default()
