"""Shared fixtures. The full reference runs of the built-in suites happen once per test session.

Under pytest-xdist (pyproject's addopts run the suite on several workers, `--dist loadgroup`), the tests
that share a module- or session-scoped fixture of ours go to the same worker, so that no such fixture (a
run of a whole suite, a Ray cluster, a browser) is made twice.
"""

from __future__ import annotations

import compileall
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# A suite started in the background of a non-interactive shell inherits SIGINT ignored, and so would every
# command that the tests start and then stop with Ctrl+C (SIGINT): they would never stop. Give them the
# default, as an interactive terminal does.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import daharness
from daharness.agents import make_agent
from daharness.core.runlog import ScoringSettings
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

WIDE_SCOPES = ("package", "module", "session")


def pytest_configure(config: pytest.Config) -> None:
    """Compile daharness's modules once, before the workers start. Every command, scoring worker and
    kernel the tests start is a fresh interpreter, and where PYTHONDONTWRITEBYTECODE is set (it is on
    CI's machine) each one compiled the modules it imports from source again: about 0.45 s of CPU for
    a command that registers the families."""
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        compileall.compile_dir(Path(daharness.__file__).parent, quiet=2)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups from the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the group of the tests it shares a wide-scoped fixture with (transitively)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    parent: dict[Any, Any] = {}

    def root(key: Any) -> Any:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for item in items:
        shared = _wide_fixtures(item)
        root(item.nodeid)
        for key in shared:
            parent[root(key)] = root(item.nodeid)
    members: dict[Any, list[pytest.Item]] = {}
    for item in items:
        members.setdefault(root(item.nodeid), []).append(item)
    for group in members.values():
        if len(group) > 1:  # named after its first test, which every worker collects alike
            for item in group:
                item.add_marker(pytest.mark.xdist_group(group[0].nodeid))


def _wide_fixtures(item: pytest.Item) -> list[tuple[str, str, object]]:
    """The module-, package- and session-scoped fixtures of this project that `item` uses, each with the
    parameter it gets (a parametrized fixture has one value per parameter)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    callspec = getattr(item, "callspec", None)
    found = []
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if not definitions:
            continue
        fixture = definitions[-1]
        if fixture.scope in WIDE_SCOPES and fixture.baseid:  # builtin and plugin fixtures have no baseid
            index = callspec.indices.get(name) if callspec is not None else None
            found.append((fixture.baseid, name, index))
    return found


@pytest.fixture(scope="session")
def closed_form_reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference agent on the whole built-in closed-form suite, scored in strict mode."""
    out = tmp_path_factory.mktemp("closed-form") / "run"
    strict = ScoringSettings(modes={"closed-form": "strict"})
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


@pytest.fixture(scope="session")
def react_export_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A react run of four closed-form tasks (the first and the fourth answered wrong) against the scripted
    model server, plus a dialogue sample with user turns: read, never changed, by the exporters' tests."""
    from sample_runs import add_dialogue_sample, react_run

    out = react_run(tmp_path_factory.mktemp("react") / "run", count=4)
    add_dialogue_sample(out)
    return out
