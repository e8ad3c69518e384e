"""The images a trajectory names by attachment (a file of the sample's `attachments/`), put back as the data
URLs the model was sent, for the exports that carry them (Inspect's log, training examples)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from daharness.core.runlog import TrajectoryFile
from daharness.core.submission import ATTACHMENT_SCHEME, ModelCall


def with_attachments(trajectory: TrajectoryFile | None, folder: Path) -> TrajectoryFile | None:
    """The trajectory with each image its model calls name by attachment (`attachment:step-3.png`, a file
    of the sample's attachments/) as the data URL the model was sent; Inspect's log keeps each image once
    however many calls show it. A missing file stays named."""
    if trajectory is None:
        return None
    cache: dict[str, str] = {}

    def resolved(url: str) -> str:
        name = url.removeprefix(ATTACHMENT_SCHEME)
        path = folder / name
        if name not in cache and name == Path(name).name and path.is_file():
            cache[name] = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
        return cache.get(name, url)

    steps = []
    for step in trajectory.steps:
        if isinstance(step, ModelCall) and ATTACHMENT_SCHEME in str(step.messages):
            messages = [
                {**message, "content": [_resolved_part(part, resolved) for part in message["content"]]}
                if isinstance(message.get("content"), list)
                else message
                for message in step.messages
            ]
            step = step.model_copy(update={"messages": messages})
        steps.append(step)
    return trajectory.model_copy(update={"steps": steps})


def _resolved_part(part: Any, resolved: Any) -> Any:
    image = part.get("image_url") if isinstance(part, dict) and part.get("type") == "image_url" else None
    if isinstance(image, dict) and str(image.get("url", "")).startswith(ATTACHMENT_SCHEME):
        return {**part, "image_url": {**image, "url": resolved(image["url"])}}
    return part
