"""The scoring worker (runs/score_worker.py): its children start with the libraries earlier ones imported,
and each draws fresh random numbers, as a new process would; a confined worker runs the harness's own copy
of daharness."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import daharness
from daharness.runs.score_worker import checked_out, score_in_worker

PROBES = Path(__file__).parent / "worker_probes"


def test_the_next_jobs_start_with_the_libraries_the_first_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(PROBES))  # a job carries the harness's import path
    with checked_out(confined=True, code=(PROBES,)) as worker:
        outcomes = [
            score_in_worker(worker, "probes:imports_sklearn_metrics", [], (), memory_mb=1024, seconds=120)
            for _ in range(3)
        ]
    assert [kind for kind, _ in outcomes] == ["ok"] * 3, outcomes
    details = [payload["details"] for _, payload in outcomes]
    assert [found["started_with"] for found in details] == [False, True, True]
    assert len({found["draw"] for found in details}) == 3  # not the worker's one numpy state


def test_a_confined_worker_imports_the_daharness_of_the_harness_found_on_pythonpath(tmp_path: Path) -> None:
    """A harness run from a source folder on PYTHONPATH: its confined worker (python -I, which ignores
    PYTHONPATH, and which sees no other copy) imports that folder's daharness, not the installed one."""
    source = tmp_path / "src"
    shutil.copytree(
        Path(daharness.__file__).parent, source / "daharness", ignore=shutil.ignore_patterns("__pycache__")
    )
    script = (
        "import json, pathlib, daharness\n"
        "from daharness.runs.score_worker import checked_out, score_in_worker\n"
        f"with checked_out(confined=True, code=(pathlib.Path({str(PROBES)!r}),)) as worker:\n"
        "    kind, payload = score_in_worker(worker, 'probes:where_daharness_is', [], (), memory_mb=512, seconds=60)\n"
        "print(json.dumps([daharness.__file__, kind, payload]))\n"
    )
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(PROBES)])}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    harness, kind, payload = json.loads(done.stdout.splitlines()[-1])
    assert harness == str(source / "daharness" / "__init__.py")
    assert kind == "ok", payload  # without it the worker found no daharness it could read: "exited (code 1)"
    assert payload["details"]["daharness"] == harness
