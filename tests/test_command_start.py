"""What a command does before its first sample (issue 27: a one-sample run in 1.2 s): the bubblewrap
probe kept between commands, and the modules and models a run without a desktop does without."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from helpers import last_line_printed

from daharness.core.errors import UserError
from daharness.report.stats import WILSON, mean_interval
from daharness.sandbox import probe_cache
from daharness.sandbox.bwrap import check_bwrap

# says it works; logs each probe (a command run in the sandbox), not `bwrap --version` or `--help`
_WORKS = '#!/bin/sh\ncase " $* " in *" -- "*) echo probed >> "{log}" ;; esac\nexit 0\n'
_FAILS = "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"


@pytest.fixture
def fake_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `bwrap` first on the PATH that says it works and logs each start; a cache folder of the test's."""
    folder = tmp_path / "bin"
    folder.mkdir()
    binary = folder / "bwrap"
    binary.write_text(_WORKS.format(log=tmp_path / "probes.log"))
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return binary


def _probe() -> None:
    check_bwrap.__wrapped__()  # type: ignore[attr-defined]  # past the once-per-process cache


def _probes(binary: Path) -> int:
    log = binary.parent.parent / "probes.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_successful_bwrap_probe_is_not_run_again_on_the_same_machine(fake_bwrap: Path) -> None:
    _probe()
    _probe()
    assert _probes(fake_bwrap) == 1
    assert (probe_cache.user_cache_dir() / probe_cache.CACHE_FILE).exists()


def test_the_kept_probe_is_invalidated_when_the_bwrap_binary_changes(fake_bwrap: Path) -> None:
    _probe()
    fake_bwrap.write_text(_FAILS)  # another bwrap at the same path: probed again, and refused
    with pytest.raises(UserError, match="bubblewrap cannot create namespaces here"):
        _probe()
    assert not (probe_cache.user_cache_dir() / probe_cache.CACHE_FILE).exists()  # the failure is not kept


def test_a_failed_probe_is_said_again_by_every_command(fake_bwrap: Path) -> None:
    fake_bwrap.write_text(_FAILS)
    for _ in range(2):
        with pytest.raises(UserError, match="No permissions to create new namespace"):
            _probe()


def test_the_doctor_probes_afresh(fake_bwrap: Path) -> None:
    _probe()
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "doctor", "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert _probes(fake_bwrap) == 2


def test_the_mean_of_outcomes_without_numpy_is_numpys_to_the_last_bit() -> None:
    rng = random.Random(27)
    for n in [1, 2, 3, 7, 8, 9, 100, 129, 1000, 4097]:
        outcomes = [float(rng.random() < rng.random()) for _ in range(n)]
        figure = mean_interval(outcomes)
        data = np.asarray(outcomes)
        mean = float(data.mean())
        z = NormalDist().inv_cdf(0.975)
        centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n))
        low, high = max(0.0, centre - half), min(1.0, centre + half)
        assert figure == {
            "value": round(mean, 4), "low": round(float(low), 4), "high": round(float(high), 4), "n": n,
            "method": WILSON,
        }  # fmt: skip


RUN_SPARES = (
    "numpy",
    "pandas",
    "rapidfuzz",
    "json5",
    "tomllib",
    "daharness.sandbox.desktop.session",
    "daharness.sandbox.desktop.views",
    "daharness.sandbox.desktop.actions",
    "daharness.sandbox.desktop.kernel_desktop",
)


def test_a_closed_form_run_imports_no_desktop_session_nor_numpy_and_builds_no_desktop_model(
    tmp_path: Path,
) -> None:
    probe = (
        "import sys\n"
        "from daharness.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        f"    loaded = [m for m in {RUN_SPARES!r} if m in sys.modules]\n"
        "    from daharness.sandbox.desktop import actions\n"
        "    print(exc.code, loaded, actions.Click.__pydantic_complete__)\n"
    )
    args = [
        "run",
        "--suite",
        "closed-form",
        "--agent",
        "reference",
        "--ids",
        "0",
        "--out",
        str(tmp_path / "r"),
    ]
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)
    assert done.stdout.endswith("0 [] False\n"), done.stdout[-500:] + done.stderr[-2000:]


def test_the_root_help_lists_every_command_and_builds_none() -> None:
    import typer

    from daharness.cli import root_command

    group = root_command()
    context = typer.Context(group, info_name="daharness")
    text = group.get_help(context)
    lazy = group.commands
    assert " run " in text and " doctor " in text and " suites " in text
    assert not [name for name in lazy.infos if lazy.is_built(name)]
    assert group.get_command(context, "doctor") is not None
    assert [name for name in lazy.infos if lazy.is_built(name)] == ["doctor"]


def test_the_families_are_imported_without_garbage_collection_and_the_command_runs_with_it() -> None:
    """Every object the start makes lives as long as the process: the collector is paused while the
    families' options are added (a tenth of that time), and on again for the command itself."""
    probe = (
        "import gc, importlib, sys\n"
        "app = importlib.import_module('daharness.cli.app')\n"
        "seen = []\n"
        "added = app.install\n"
        "def install(argv):\n"
        "    seen.append(gc.isenabled())\n"
        "    added(argv)\n"
        "app.install = install\n"
        "sys.argv = ['daharness', 'run', '--help']\n"
        "try:\n"
        "    app.main()\n"
        "except SystemExit as exc:\n"
        "    print(exc.code, seen, gc.isenabled())\n"
    )
    assert last_line_printed(probe) == "0 [False] True"
