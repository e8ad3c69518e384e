"""Which capture describes a submitted chart image, and whether the image is a real one.

In a daharness sandbox, captures reach the harness through the kernel (`Snapshot.captures`), never
through the agent's files, and each records the SHA-256 and pixel size of the bytes `savefig` wrote.
A submitted image is scored only when

* it is a real image: a raster image that Pillow can decode (PNG, JPEG, ...) or an SVG / PDF file;
* a capture holds exactly its bytes (the latest such capture counts): an image written by other means,
  or changed after matplotlib saved it, has none;
* its pixel size is the captured one and, unless saved with a tight box, the figure's size times the
  dpi of the save (within a pixel).

Files that did not come from a daharness sandbox (`Snapshot.captures` is None: an official agent's
output folder, a run made before captures had their own channel) are read by the chart scorer as they
are (`<image>.json` beside the image, or DA-Agent's `dabench/` files).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from daharness.core.backend import Snapshot

_VECTOR_MAGIC = {"svg": b"<svg", "pdf": b"%PDF"}
_SNIFF_BYTES = 4096


def image_facts(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """({format, size}, None) for a real image, else (None, why not)."""
    try:
        from PIL import Image

        with Image.open(path) as picture:
            size, kind = list(picture.size), picture.format
            picture.verify()  # decodes the structure: a truncated or forged file fails here
        return {"format": kind, "size": size}, None
    except Exception as error:
        head = b""
        if path.is_file():
            with path.open("rb") as stream:
                head = stream.read(_SNIFF_BYTES)  # not the whole file: the agent chose its size
        for kind, magic in _VECTOR_MAGIC.items():
            if magic in head:
                return {"format": kind, "size": None}, None
        return None, f"{path.name} is not an image ({type(error).__name__})"


def captured_chart(files: Snapshot, name: str, image: Path) -> tuple[dict[str, Any] | None, str]:
    """The capture that describes the submitted image `name` (at `image`), or None and the reason."""
    facts, problem = image_facts(image)
    if facts is None:
        return None, problem or "not an image"
    if files.captures is None:
        return None, "these files did not come from a daharness sandbox: no captures were received"
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    entries = files.capture_entries()
    matching = [entry for entry in entries if entry.get("sha256") == digest]
    if not matching:
        if any(_names_image(entry, name) for entry in entries):
            return None, f"{name} was changed after matplotlib saved it: no capture describes its bytes"
        return None, f"no chart captured for {name} (it was not saved with matplotlib's savefig)"
    capture = _load(files.captures / f"{matching[-1]['n']}.json")
    if capture is None:
        return None, f"the capture of {name} is unreadable"
    mismatch = _size_mismatch(capture, facts)
    if mismatch:
        return None, f"{name}: {mismatch}"
    return capture, "captured"


def _load(path: Path) -> dict[str, Any] | None:
    try:
        capture = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return capture if isinstance(capture, dict) else None


def _names_image(entry: dict[str, Any], name: str) -> bool:
    saved = entry.get("file")
    return isinstance(saved, str) and Path(saved).name == Path(name).name


def _size_mismatch(capture: dict[str, Any], facts: dict[str, Any]) -> str | None:
    """Why the image's pixel size does not fit the captured figure (None when it fits)."""
    info = capture.get("image")
    size = facts["size"]
    if not isinstance(info, dict) or size is None:
        return None
    if info.get("size") is not None and list(info["size"]) != size:
        return f"the image is {size[0]}x{size[1]} pixels but the captured save was {info['size']}"
    figsize, dpi = capture.get("figsize"), info.get("dpi")
    if info.get("tight") or not isinstance(figsize, list) or len(figsize) != 2 or not dpi:
        return None
    try:
        expected = [float(inches) * float(dpi) for inches in figsize]
    except (TypeError, ValueError):
        return "the capture's figure size is not a number"
    if any(abs(pixels - want) > 1.0 for pixels, want in zip(size, expected, strict=True)):
        return (
            f"the image is {size[0]}x{size[1]} pixels but the captured figure is "
            f"{expected[0]:.0f}x{expected[1]:.0f} ({figsize[0]}x{figsize[1]} in at {dpi:g} dpi)"
        )
    return None
