"""The scoring worker (runs/score_worker.py): its children start with the libraries earlier ones imported,
and each draws fresh random numbers, as a new process would."""

from __future__ import annotations

from pathlib import Path

import pytest

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
