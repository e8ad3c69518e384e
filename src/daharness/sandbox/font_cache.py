"""matplotlib's list of fonts, made once per machine and given to every sandbox.

A sandbox starts with an empty /tmp, so the first `import matplotlib.pyplot` in it would scan every font
of the system again (a second or more of CPU, and "Matplotlib is building the font cache" on stderr). The
list is built here once, by the Python the sandboxes run, with an empty home as the sandbox has, and kept
in the user's cache folder; the kernel copies it into the sandbox's own MPLCONFIGDIR when it starts.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from daharness.sandbox.once import computed_once

BUILD_TIMEOUT_S = 300


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "daharness" / "matplotlib"


@computed_once
def font_list_path() -> Path | None:
    """The machine's font list for the sandboxes' Python, made if missing; None when matplotlib is not
    installed or the list cannot be made (each sandbox then makes its own)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or spec.origin is None:
        return None
    # the list names the fonts matplotlib ships by their path: one list per installation
    key = hashlib.sha256(f"{sys.executable}\0{spec.origin}".encode()).hexdigest()[:16]
    folder = cache_root() / key
    try:
        found = sorted(folder.glob("fontlist-v*.json"))
        return found[-1] if found else _build(folder)
    except (OSError, subprocess.SubprocessError, FileNotFoundError, StopIteration):
        return None


@computed_once
def font_list() -> tuple[str, bytes] | None:
    """The file name matplotlib gives its font list (`fontlist-v390.json`) and its content."""
    path = font_list_path()
    try:
        return (path.name, path.read_bytes()) if path is not None else None
    except OSError:
        return None


def _build(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="daharness-fonts-") as scratch:
        home, config = Path(scratch) / "home", Path(scratch) / "matplotlib"
        home.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(config)}  # fmt: skip
        subprocess.run(
            [sys.executable, "-I", "-c", "import matplotlib.font_manager"],
            env=env, capture_output=True, timeout=BUILD_TIMEOUT_S, check=True,
        )  # fmt: skip
        made = next(config.glob("fontlist-v*.json"))
        staged = folder / f".{made.name}.{os.getpid()}"
        staged.write_bytes(made.read_bytes())
        target = folder / made.name
        os.replace(staged, target)  # atomic: another daharness process may build it at the same time
        return target
