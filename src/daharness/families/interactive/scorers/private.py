"""Which functions of a private library a piece of code calls, read from its syntax tree (AccR).

Tapilot-Crossing's AccR multiplies a right answer by the recall of the private functions the reference
code uses among those the agent's code uses (equations 2-3; Appendix H.4 parses code with ``ast`` because
models import many functions they never use). A function counts when it is called, not when it is
imported: ``f(...)`` after ``from lib import f`` (or ``import f as g`` then ``g(...)``), ``lib.f(...)``
after ``import lib`` (or ``import lib as alias``), and any call of a library name after
``from lib import *``. A local function or variable of the same name that shadows nothing imported from
the library does not count.

The released evaluator differs in two ways that this module does not copy: it takes the reference's
functions from its ``from decision_company import ...`` line (imported, not used) and counts every
attribute chain of the agent's code, called or not.
"""

from __future__ import annotations

import ast


def called_functions(code: str, library: str, functions: list[str] | set[str]) -> set[str]:
    """Names of `library`'s `functions` that `code` calls; code that does not parse calls none."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    known = set(functions)
    direct: dict[str, str] = {}  # local name -> library function
    modules: set[str] = set()  # local names bound to the library module
    star = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == library and node.level == 0:
            for alias in node.names:
                if alias.name == "*":
                    star = True
                elif alias.name in known:
                    direct[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == library:
                    modules.add(alias.asname or alias.name)
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target = node.func
        if isinstance(target, ast.Name):
            if target.id in direct:
                found.add(direct[target.id])
            elif star and target.id in known:
                found.add(target.id)
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id in modules
            and target.attr in known
        ):
            found.add(target.attr)
    return found


def recall(reference: set[str], agent: set[str]) -> float:
    """|reference ∩ agent| / |reference|; 1 when the reference uses no private function."""
    return len(reference & agent) / len(reference) if reference else 1.0
