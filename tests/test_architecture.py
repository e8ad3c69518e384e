"""The layout of docs/design.md, checked on the package's imports (late imports included).

Families over shared layers: the contracts (`core`) import nothing of daharness; the shared layers
name no family; no family imports another; no family imports the layers that draw its figures (it hands
them typed figures, `core/figures.py`); the sandbox does not ask the family registry (the pipeline
hands it a family's additions); a family's scorers reach only the contracts, the shared scoring
helpers and the family's own modules; no package imports itself through others; outside the sandbox,
nothing probes a sandbox for what it can do (`getattr`/`hasattr`): the seam declares it (`desktop`). The command
line (`cli/`) names no family either (it loops over what the families register) and keeps its functions
short. Each rule is checked on the real package and, so that it can fail, on a small made-up one that
breaks it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "daharness"
SHARED = ("core", "sandbox", "runs", "models", "report", "view", "export", "scoring", "agents", "suites")
DRAWING = ("report", "view", "export")  # what turns runs into tables, pages and logs
LONGEST_CLI_FUNCTION = 80  # lines, decorators included

# ---- the import graph ---------------------------------------------------------------------------------


def module_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module of daharness (dotted, without `daharness.`) -> the daharness modules it names in imports.
    A family's built-in suite is benchmark content, not code of the package, and is left out."""
    graph: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        if parts[0] == "families" and parts[2:3] == ("suite",):
            continue
        name = ".".join(parts).removesuffix(".__init__").removesuffix("__init__") or "__init__"
        targets = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            else:
                continue
            targets.update(n.removeprefix("daharness.") for n in found if n.startswith("daharness."))
    return {source: {_module_of(target, graph) for target in targets} for source, targets in graph.items()}


def _module_of(name: str, modules: dict[str, set[str]]) -> str:
    """`core.registry.scorer` (a name imported from a module) -> `core.registry`."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def unit(module: str) -> str:
    """The part of the layout a module belongs to: a family (`families.workflow`) or a top-level
    package or module (`runs`, `cli`)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "families" and len(parts) > 1 else parts[0]


def unit_graph(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    units: dict[str, set[str]] = {}
    for source, targets in modules.items():
        edges = units.setdefault(unit(source), set())
        edges.update(unit(target) for target in targets if unit(target) != unit(source))
    return units


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for target in graph.get(stack.pop(), set()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def is_family(name: str) -> bool:
    return name.startswith("families.")


# ---- the rules: each returns what breaks it -----------------------------------------------------------


def contracts_importing_others(units: dict[str, set[str]]) -> set[str]:
    return units.get("core", set())


def families_importing_families(units: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(s, t) for s, targets in units.items() if is_family(s) for t in targets if is_family(t)}


def families_importing_drawing(units: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(s, t) for s, targets in units.items() if is_family(s) for t in targets if t in DRAWING}


def shared_layers_naming_families(units: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {
        (s, t)
        for s, targets in units.items()
        if s in SHARED
        for t in targets
        if is_family(t) or t == "families"
    }


def scorers_reaching_beyond(modules: dict[str, set[str]]) -> set[tuple[str, str]]:
    """A family's scorer module (`scorers/` or `scorer.py`) and a module it reaches, directly or through
    the modules it imports, outside `core`, `scoring` and its own family."""
    found = set()
    for module in modules:
        parts = module.split(".")
        if not (is_family(module) and ("scorers" in parts[2:3] or parts[2:] == ["scorer"])):
            continue
        own = unit(module)
        for target in reachable(modules, module):
            if target in modules and unit(target) not in ("core", "scoring", own):
                found.add((module, target))
    return found


def sandbox_asking_families(package: Path = PACKAGE) -> set[str]:
    """Modules of the sandbox that import the family registry (or a family's hooks from it): the one
    way a lower floor would call up to the families."""
    found = set()
    for path in (package / "sandbox").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "daharness.core.registry"
                and {alias.name for alias in node.names} & {"families", "family", "FamilyEntry"}
            ):
                found.add(str(path.relative_to(package)))
    return found


# what the sandbox seam declares (and the names of the side doors it replaced), by file and class
SEAM = {
    "core/backend.py": "SandboxBackend",
    "core/desktop.py": "Desktop",
    "sandbox/kernel_client.py": "KernelSandbox",
}
FORMER_SIDE_DOORS = {"has_desktop", "observe_desktop", "act_on_desktop", "desktop_request"}
TOO_COMMON = {"name", "check", "start", "close", "release", "launch"}  # say nothing of a sandbox


def seam_members(package: Path = PACKAGE) -> set[str]:
    """The public methods and attributes of the sandbox seam's classes, and the former side doors."""
    found = set(FORMER_SIDE_DOORS)
    for file, cls in SEAM.items():
        path = package / file
        if not path.is_file():
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        found.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        found.add(item.target.id)
    return {name for name in found if not name.startswith("_")} - TOO_COMMON


def sandbox_probes(package: Path = PACKAGE) -> set[str]:
    """`module:line` of each `getattr`/`hasattr` outside the sandbox package that asks a sandbox what it
    has: one on a value named as a sandbox (`box`, `sandbox`, `*_box`), or one asking for a member of the
    seam by name. Callers use the declared interface (`box.desktop` is a Desktop or None)."""
    members = seam_members(package)
    found = set()
    for path in package.rglob("*.py"):
        relative = path.relative_to(package)
        if relative.parts[0] == "sandbox":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
            ):
                continue
            held = ast.unparse(node.args[0]).rsplit(".", 1)[-1].lower()
            asked = node.args[1]
            if held.endswith(("box", "sandbox")) or (
                isinstance(asked, ast.Constant) and asked.value in members
            ):
                found.add(f"{relative.with_suffix('')}:{node.lineno}")
    return found


def cycles(units: dict[str, set[str]]) -> set[str]:
    return {name for name in units if name in reachable(units, name)}


def cli_naming_families(units: dict[str, set[str]]) -> set[str]:
    """The families (or the list that registers them) that the command line imports."""
    return {t for t in units.get("cli", set()) if is_family(t) or t == "families"}


def long_cli_functions(package: Path = PACKAGE) -> dict[str, int]:
    """`module:function` -> its lines, for each function of `cli/` longer than LONGEST_CLI_FUNCTION."""
    found = {}
    for path in (package / "cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = (node.end_lineno or node.lineno) - first + 1
                if lines > LONGEST_CLI_FUNCTION:
                    found[f"{path.relative_to(package).with_suffix('')}:{node.name}"] = lines
    return found


# ---- the rules hold -------------------------------------------------------------------------------------

MODULES = module_graph()
UNITS = unit_graph(MODULES)


def test_the_graph_sees_every_family_and_layer() -> None:
    families = {name for name in UNITS if is_family(name)}
    assert families == {f"families.{n}" for n in ("closed_form", "workspace", "interactive", "workflow")}
    assert set(SHARED) <= set(UNITS) and "cli" in UNITS
    assert "families.workspace" in UNITS["families"] and "core" in UNITS["families.workflow"]


def test_the_contracts_import_nothing_of_daharness() -> None:
    assert contracts_importing_others(UNITS) == set()


def test_no_family_imports_another() -> None:
    assert families_importing_families(UNITS) == set()


def test_no_family_imports_the_report_the_viewer_or_the_export() -> None:
    assert families_importing_drawing(UNITS) == set()


def test_shared_layers_import_no_family() -> None:
    assert shared_layers_naming_families(UNITS) == set()


def test_a_familys_scorers_reach_only_core_scoring_and_their_family() -> None:
    assert scorers_reaching_beyond(MODULES) == set()


def test_the_sandbox_is_handed_what_a_family_adds() -> None:
    assert sandbox_asking_families() == set()


def test_nothing_outside_the_sandbox_probes_a_sandbox_for_what_it_can_do() -> None:
    assert {"desktop", "history", "resource_usage", "observe", "act", "tabs"} <= seam_members()
    assert sandbox_probes() == set()


def test_no_package_imports_itself_through_others() -> None:
    assert cycles(UNITS) == set()


def test_the_command_line_imports_no_family() -> None:
    assert cli_naming_families(UNITS) == set()


def test_no_function_of_the_command_line_is_over_80_lines() -> None:
    assert long_cli_functions() == {}


def test_scorers_and_agents_stay_below_runs() -> None:
    assert reachable(UNITS, "scoring") <= {"core"}
    assert "runs" not in reachable(UNITS, "agents") and "sandbox" not in UNITS.get("agents", set())
    assert "sandbox" not in reachable(UNITS, "scoring")  # scorers read the snapshot, not a live sandbox


# ---- and each can fail ------------------------------------------------------------------------------------


def _made_up(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return module_graph(tmp_path)


def test_each_rule_finds_what_breaks_it(tmp_path: Path) -> None:
    modules = _made_up(
        tmp_path,
        {
            "core/task.py": "from daharness.runs import pipeline\n",
            "runs/pipeline.py": "def late():\n    from daharness.core import task\n",
            "report/build.py": "from daharness.families.workflow.family import WorkflowFamily\n",
            "families/__init__.py": "from daharness.families import workflow, workspace\n",
            "families/workflow/family.py": "import daharness.families.workspace.modes\n",
            "families/workflow/scorers/dbt.py": "from daharness.families.workflow import helper\n",
            "families/workflow/helper.py": "from daharness.report import build\n",
            "families/workflow/suite/solution.py": "from daharness.runs import pipeline\n",
            "families/workspace/modes.py": "from daharness.core import task\n",
            "sandbox/support.py": "def late():\n    from daharness.core.registry import backends, families\n",
            "cli/score.py": "def score():\n    from daharness.families.workspace import modes\n",
            "cli/run.py": "from daharness.families import closed_form\n",
        },
    )
    units = unit_graph(modules)
    assert contracts_importing_others(units) == {"runs"}
    assert families_importing_families(units) == {("families.workflow", "families.workspace")}
    assert families_importing_drawing(units) == {("families.workflow", "report")}
    assert sandbox_asking_families(tmp_path) == {"sandbox/support.py"}
    assert shared_layers_naming_families(units) == {("report", "families.workflow")}
    # through its own helper, the scorer reaches the report (and all the report reaches)
    assert ("families.workflow.scorers.dbt", "report.build") in scorers_reaching_beyond(modules)
    assert {"core", "runs"} <= cycles(units)
    assert cli_naming_families(units) == {"families.workspace", "families"}
    assert "families.workflow.suite.solution" not in modules  # suite content is not code of the package


def test_the_length_rule_finds_a_long_command(tmp_path: Path) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(LONGEST_CLI_FUNCTION - 2))
    short = "@app.command()\ndef short():\n" + body  # 80 lines with its decorator
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "run.py").write_text(f"{short}\n\n@app.command()\n@other\ndef run():\n{body}")
    assert long_cli_functions(tmp_path) == {"cli/run:run": LONGEST_CLI_FUNCTION + 1}


def test_the_probe_rule_finds_a_probe_of_a_sandbox(tmp_path: Path) -> None:
    _made_up(
        tmp_path,
        {
            "core/backend.py": "class SandboxBackend:\n    def snapshot(self): ...\n    history: list = []\n",
            "core/desktop.py": "class Desktop:\n    def observe(self): ...\n",
            "runs/screens.py": "def note(box):\n    if getattr(box, 'has_desktop', False):\n        pass\n",
            "runs/pipeline.py": "def usage(prepared):\n    return hasattr(prepared, 'snapshot')\n",
            "families/workflow/screen.py": "def f(env):\n    return getattr(env.sandbox, 'kind', None)\n",
            "families/workflow/agent.py": "def g(screen):\n    return getattr(screen, 'observe')\n",
            "agents/llm.py": "def h(settings):\n    return getattr(settings, 'temperature')\n",
            "sandbox/kernel_client.py": "def i(box):\n    return hasattr(box, 'history')\n",
        },
    )
    assert {"snapshot", "history", "observe", "has_desktop"} <= seam_members(tmp_path)
    assert sandbox_probes(tmp_path) == {
        "runs/screens:2",  # a sandbox by its name, asked for a former side door
        "runs/pipeline:2",  # any value, asked for a member of the seam
        "families/workflow/screen:2",  # a sandbox by its name, whatever it is asked
        "families/workflow/agent:2",  # a member of the desktop
    }  # the settings are no sandbox, and the sandbox package may look at itself
