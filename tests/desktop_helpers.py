"""Helpers of the desktop tests: a sandbox with a desktop, pages served inside it, pixels of a screenshot."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import wait_until
from PIL import Image

from daharness.core.limits import Limits
from daharness.core.task import Task
from daharness.sandbox import BwrapSandbox, open_sandbox
from daharness.sandbox.desktop import desktop_problem

# LibreOffice, Chromium and a kernel together want more than the security tests' 1 GB
DESKTOP_LIMITS = Limits(memory_mb=3072, step_timeout_s=60, sample_timeout_s=1200)
needs_desktop = pytest.mark.skipif(
    desktop_problem() is not None, reason=f"no desktop on this machine: {desktop_problem()}"
)


def desktop_task(tmp_path: Path, files: dict[str, bytes] | None = None) -> Task:
    from daharness.core.task import WorkspaceFile

    listed = []
    for name, content in (files or {}).items():
        (tmp_path / name).write_bytes(content)
        listed.append(WorkspaceFile(path=name, source=tmp_path / name))
    return Task(
        id="screen",
        suite="desktop",
        family="workspace",
        instructions=["look"],
        files=listed,
        desktop=True,
    )


@contextmanager
def desktop_box(task: Task, limits: Limits = DESKTOP_LIMITS) -> Iterator[BwrapSandbox]:
    box = open_sandbox("bwrap", task, limits)
    box.start()
    try:
        yield box  # type: ignore[misc]
    finally:
        box.close()


def serve(box: BwrapSandbox, pages: dict[str, str], port: int) -> str:
    """Serve pages from the workspace on the sandbox's loopback (as the agent would) and wait until the
    server answers; the base URL."""
    for name, html in pages.items():
        written = box.write_file(name, html)
        assert written.ok, written
    assert box.desktop.start_program(
        ["python", "-m", "http.server", str(port), "--bind", "127.0.0.1"], f"http-{port}"
    ).ok
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=1)"
    answered = box.bash(
        f'for i in $(seq 300); do python -c "{probe}" 2>/dev/null && exit 0; sleep 0.1; done; exit 1'
    )
    assert answered.exit_status == 0, "the page server did not come up"
    return f"http://127.0.0.1:{port}"


def wait_for_window(box: BwrapSandbox, title: str, timeout_s: float = 120.0) -> dict:
    found: list[dict] = []

    def shown() -> bool:
        windows = box.desktop.windows()
        found[:] = [w for w in windows if title in w["title"]]
        return bool(found)

    wait_until(shown, timeout_s, what=f"a window titled {title!r}")
    return found[0]


def pixel(png: bytes, x: int, y: int) -> tuple[int, int, int]:
    return Image.open(io.BytesIO(png)).convert("RGB").getpixel((x, y))  # type: ignore[return-value]
