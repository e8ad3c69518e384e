"""Pausing the garbage collector while a process builds objects that live as long as it does (imported
modules, the openai SDK's models, the families' options): a collector pass over them frees nothing and
took a tenth of such an import's time. `sandbox/template_server.py` does the same on its own, as it may
import nothing of daharness."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No garbage collection inside the block; the collector is as it was after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
