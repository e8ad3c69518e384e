"""The package layering of DESIGN.md: contracts at the bottom, no package importing another in a loop."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "daharness"


def _import_graph() -> dict[str, set[str]]:
    """Top-level package (or module) of daharness -> the ones it imports, late imports included."""
    edges: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] == "families" and parts[2:3] == ("suite",):
            continue  # reference solutions of the built-in suites are benchmark content
        source = parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("daharness.") and name.split(".")[1] != source:
                    edges.setdefault(source, set()).add(name.split(".")[1])
    return edges


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for target in graph.get(stack.pop(), set()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def test_no_package_imports_itself_through_others() -> None:
    graph = _import_graph()
    cycles = sorted(name for name in graph if name in _reachable(graph, name))
    assert cycles == []


def test_the_contracts_import_nothing_of_daharness() -> None:
    assert _import_graph().get("core", set()) == set()


def test_scorers_and_agents_stay_below_runs() -> None:
    graph = _import_graph()
    assert _reachable(graph, "scoring") <= {"core"}
    assert "runs" not in _reachable(graph, "agents") and "sandbox" not in graph.get("agents", set())
    assert "sandbox" not in _reachable(graph, "scoring")  # scorers read the snapshot, not a live sandbox
