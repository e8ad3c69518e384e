"""The environment every sandbox's processes start with, and the kernel template's start from it.

Kept apart from the backends (and light to import) so that `run` can start the kernel template as its
very first step, before it imports the families, the sandbox backends or the suite's code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from daharness.sandbox.font_cache import font_list_path

SANDBOX_HOME = "/tmp"


def common_env() -> dict[str, str]:
    return {
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def sandbox_path() -> str:
    return f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"


def template_settings() -> tuple[dict[str, str], str | None]:
    """The kernel template's environment and font list (the same for every sandbox of the process)."""
    fonts = font_list_path()
    return {"PATH": sandbox_path(), "HOME": SANDBOX_HOME, **common_env()}, str(fonts) if fonts else None
