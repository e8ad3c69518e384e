"""An observation in the form a run asked for: screenshot, table, both, or set-of-mark.

Set-of-mark follows the official agent's `draw_bounding_boxes`: each kept element whose box is not a
single flat colour (nothing to see there) gets a red outline and its number on a black label at its
bottom-left corner, and only the marked elements are rows of the table, numbered as on the image.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from daharness.core.desktop import DesktopView, ObservationType, ScreenElement, keeps, linearize
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
            observation=observation, image=marked, table=linearize(rows, index=True), elements=rows,
            duration_s=duration_s,
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

    image = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(image)
    marked: list[ScreenElement] = []
    for element in elements:
        box = (element.x, element.y, element.x + element.width, element.y + element.height)
        if all(low == high for low, high in image.crop(box).getextrema()):
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


@computed_once
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    return ImageFont.load_default(size=15)
