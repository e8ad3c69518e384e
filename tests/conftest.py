"""Shared fixtures. The full reference runs of the built-in suites happen once per test session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from daharness.agents import make_agent
from daharness.core.runlog import ScoringSettings
from daharness.runs.runner import run_suite
from daharness.suites import load_suite


@pytest.fixture(scope="session")
def closed_form_reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference agent on the whole built-in closed-form suite, scored in strict mode."""
    out = tmp_path_factory.mktemp("closed-form") / "run"
    strict = ScoringSettings(modes={"closed_form": "strict"})
    outcome = run_suite(
        load_suite("closed-form"), make_agent("reference"), out, concurrency=2, scoring=strict
    )
    assert outcome.errors == 0
    return out


@pytest.fixture(scope="session")
def workspace_reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference agent on the whole built-in workspace suite (corrected mode)."""
    out = tmp_path_factory.mktemp("workspace") / "run"
    outcome = run_suite(load_suite("workspace"), make_agent("reference"), out, concurrency=2)
    assert outcome.errors == 0
    return out
