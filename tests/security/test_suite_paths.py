"""Every path a suite's data names is held inside the suite's folder (issue 40, items 1 and 4).

Two halves. The code: every module that loads a suite (each `@suite_format`, found by reading the
package) or reads a user's input folder builds no host path itself; each join, listing or glob goes
through `core/paths.py` (`SuiteFolder`), which the AST scan below checks. The data: per format, hostile
suites that name `/proc/self/environ`, climb out with `..`, hold a link pointing out, a FIFO, or a folder
where a file is wanted; each is refused with a one-line reason, and nothing of the target is read.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from daharness.core.errors import UserError
from daharness.core.paths import Refused, SuiteFolder
from daharness.suites import builtin_suites, load_suite

PACKAGE = Path(__file__).parents[2] / "src" / "daharness"
# modules that read input folders without registering a format: generated suites and a user's tables
INPUT_READERS = {
    "core/generated_suite.py",
    "families/closed_form/generate.py",
    "families/interactive/generate.py",
    "families/interactive/prompts.py",
    "suites/__init__.py",
    "suites/manifest.py",
    "suites/user_tables.py",
}
PATH_METHODS = {"joinpath", "glob", "rglob", "iterdir", "with_name"}
OS_CALLS = {"os.walk", "os.listdir", "os.scandir", "os.path.join", "glob.glob"}
# what these modules may still build: the files a generator writes into its own output folder
WRITES = {
    "core/generated_suite.py": {
        "out / settings_file", "out / 'suite.json'", "out / 'tables'", "out / 'tables' / name", "out.iterdir()",
    },
    "families/closed_form/generate.py": {
        "out / JOURNAL", "out / 'solutions'", "out / 'solutions' / f\"{entry['id']}.py\"",
        "out / 'questions.jsonl'", "out / 'labels.jsonl'", "out / 'review.html'",
    },
    "families/interactive/generate.py": {
        "settings.out / JOURNAL", "settings.out / 'dialogues'", "out / 'dialogues' / f\"{dialogue['id']}.json\"",
    },
}  # fmt: skip


def _loader_modules() -> set[str]:
    """Every module registering a suite format, found by its decorator: a new loader is scanned too."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if "suite" in path.relative_to(PACKAGE).parts[2:3]:
            continue  # a built-in suite's own solutions
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", None) == "suite_format"
                for d in node.decorator_list
            ):
                found.add(path.relative_to(PACKAGE).as_posix())
    return found


def path_building(source: str) -> list[str]:
    """The expressions of `source` that build or list a host path: `a / b`, `.joinpath`, `.glob`,
    `.rglob`, `.iterdir`, `.with_name`, `os.walk`/`listdir`/`scandir`/`path.join`, `Path(a, b)`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if (
                called in OS_CALLS
                or (method in PATH_METHODS and not called.startswith("os."))
                or (called in ("Path", "PurePath") and len(node.args) > 1)
            ):
                found.append(ast.unparse(node))
    # an inner division of a path being built is the same path: keep the outermost
    return [expr for expr in found if not any(expr != other and expr in other for other in found)]


def test_the_scan_sees_every_loader() -> None:
    loaders = _loader_modules()
    assert {
        "families/workflow/loader.py",
        "families/workspace/loader.py",
        "families/workspace/dacode.py",
        "families/closed_form/loader.py",
        "families/interactive/loader.py",
        "families/interactive/tapilot.py",
    } <= loaders
    assert all((PACKAGE / name).is_file() for name in INPUT_READERS)


@pytest.mark.parametrize("module", sorted(_loader_modules() | INPUT_READERS))
def test_loaders_build_no_host_path_but_through_the_suite_folder(module: str) -> None:
    built = set(path_building((PACKAGE / module).read_text()))
    assert built - WRITES.get(module, set()) == set()


def test_the_scan_finds_paths_built_by_hand() -> None:
    hand_made = (
        "def load(folder, row):\n"
        "    table = folder / row['file_name']\n"
        "    more = folder.joinpath('a', 'b')\n"
        "    listed = sorted(folder.glob('*.csv'))\n"
        "    walked = os.walk(folder)\n"
        "    joined = os.path.join(folder, row['name'])\n"
        "    built = Path(folder, 'x')\n"
        "    fine = suite.file(row['file_name'], within=folder)\n"
    )
    assert sorted(path_building(hand_made)) == sorted(
        [
            "folder / row['file_name']",
            "folder.joinpath('a', 'b')",
            "folder.glob('*.csv')",
            "os.walk(folder)",
            "os.path.join(folder, row['name'])",
            "Path(folder, 'x')",
        ]
    )


# ---- the function itself ----------------------------------------------------------------------------


@pytest.fixture
def hostile(tmp_path: Path) -> SuiteFolder:
    """A suite folder holding one of each thing a suite may not name, and a good file and folder."""
    root = tmp_path / "suite"
    (root / "sub").mkdir(parents=True)
    (root / "good.csv").write_text("a\n1\n")
    (tmp_path / "beside.csv").write_text("secret\n")
    (root / "leak.csv").symlink_to("/proc/self/environ")
    (root / "beside-link.csv").symlink_to(tmp_path / "beside.csv")
    (root / "inner-link.csv").symlink_to("good.csv")
    (root / "broken.csv").symlink_to(root / "gone.csv")
    (root / "two-lines.csv").symlink_to("/tmp/first\nsecond")  # a reason stays one line
    os.mkfifo(root / "pipe.csv")
    return SuiteFolder.at(root)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("/proc/self/environ", "file '/proc/self/environ' is an absolute path"),
        ("../../../../../../../../etc/hostname", "leads outside the suite folder"),
        ("../beside.csv", "leads outside the suite folder"),
        ("leak.csv", "file 'leak.csv' is a link to /proc/"),
        ("beside-link.csv", "is a link to "),
        ("sub/../beside-link.csv", "is a link to "),
        ("broken.csv", "is a broken link"),
        ("two-lines.csv", "is a link to /tmp/first\\nsecond, outside"),
        ("pipe.csv", "file 'pipe.csv' is a FIFO, not a regular file"),
        ("sub", "file 'sub' is a folder, not a file"),
        ("nothing.csv", "file 'nothing.csv' is not in the suite folder"),
    ],
)
def test_what_a_suite_may_not_name_is_refused_with_one_line(
    hostile: SuiteFolder, name: str, reason: str
) -> None:
    with pytest.raises(Refused) as refused:
        hostile.file(name)
    assert reason in str(refused.value) and "\n" not in str(refused.value)


def test_what_stays_inside_is_its_real_path(hostile: SuiteFolder) -> None:
    assert hostile.file("good.csv") == hostile.root / "good.csv"
    assert hostile.file("inner-link.csv") == hostile.root / "good.csv"  # a link inside is followed
    assert hostile.file("sub/../good.csv") == hostile.root / "good.csv"
    assert hostile.folder("sub") == hostile.root / "sub"
    assert hostile.optional_file("nothing.csv") is None
    with pytest.raises(Refused, match="is a file, not a folder"):
        hostile.folder("good.csv")
    with pytest.raises(Refused, match="broken link"):
        hostile.optional_file("broken.csv")  # something is there: not absent


def test_a_tree_with_a_link_out_or_a_fifo_is_refused_whole(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    (root / "source" / "deep").mkdir(parents=True)
    (root / "source" / "a.csv").write_text("a\n")
    (root / "source" / "deep" / "b.csv").write_text("b\n")
    (root / "source" / "deep" / "same.csv").symlink_to(root / "source" / "a.csv")
    folder = SuiteFolder.at(root)
    assert folder.tree(root / "source") == [
        ("a.csv", root / "source" / "a.csv"),
        ("deep/b.csv", root / "source" / "deep" / "b.csv"),
        ("deep/same.csv", root / "source" / "a.csv"),
    ]
    (root / "source" / "deep" / "up").symlink_to(root / "source")
    with pytest.raises(Refused, match="'deep/up' in source/ is a link back into a folder it is in"):
        folder.tree(root / "source")
    (root / "source" / "deep" / "up").unlink()
    (root / "source" / "deep" / "home").symlink_to(Path.home())
    with pytest.raises(Refused, match="'deep/home' in source/ is a link to"):
        folder.tree(root / "source")
    (root / "source" / "deep" / "home").unlink()
    os.mkfifo(root / "source" / "deep" / "pipe")
    with pytest.raises(Refused, match="'deep/pipe' in source/ is a FIFO"):
        folder.tree(root / "source")


def test_a_built_in_suite_may_name_the_packages_files_only() -> None:
    folder = SuiteFolder.at(builtin_suites()["interactive"])
    assert folder.folder("../../closed_form/suite/tables").name == "tables"  # the shared tables
    with pytest.raises(Refused, match="leads outside the suite folder"):
        folder.file("../../../../pyproject.toml")


# ---- hostile suites, per format -------------------------------------------------------------------------

ENVIRON = "/proc/self/environ"


def _attacks(root: Path, place: Callable[[Path, str, str], None]) -> None:
    """Lay out the five attacks in `root`: `place(root, case, how)` writes the case's task so that it
    names `how`: an absolute path, a climb, a link out, a FIFO, a folder."""
    (root / "outside.csv").parent.mkdir(parents=True, exist_ok=True)
    for case, how in (
        ("absolute", ENVIRON),
        ("climb", "../../../../../../../../../etc/hostname"),
        ("link", "link"),
        ("fifo", "fifo"),
        ("folder", "folder"),
    ):
        place(root, case, how)


def _plant(folder: Path, name: str, how: str) -> str:
    """Make `folder/name` what the attack `how` needs (or a plain file); the name the suite's data
    should give (an absolute path or a climb is given as it is)."""
    folder.mkdir(parents=True, exist_ok=True)
    if how == "file":
        (folder / name).write_text("a\n1\n")
    elif how == "link":
        (folder / name).symlink_to(ENVIRON)
    elif how == "fifo":
        os.mkfifo(folder / name)
    elif how == "folder":
        (folder / name).mkdir()
    else:
        return how
    return name


REASONS = {
    "absolute": f"'{ENVIRON}' is an absolute path",
    "climb": "leads outside the suite folder",
    "link": "is a link to /proc/",
    "fifo": "is a FIFO, not a regular file",
    "folder": "is a folder, not a file",
}


def _assert_refused(unsupported: dict[str, str], key: Callable[[str], str]) -> None:
    for case, reason in REASONS.items():
        assert reason in unsupported.get(key(case), ""), (case, unsupported)
        assert "refused" in unsupported[key(case)]


def test_spider2v_refuses_every_kind_of_path_out(tmp_path: Path) -> None:
    def place(root: Path, case: str, how: str) -> None:
        folder = root / "examples" / "x" / case
        named = _plant(folder, "data.csv", how)
        official = (
            named
            if named.startswith("/") or named.startswith("..")
            else f"evaluation_examples/examples/x/{case}/{named}"
        )
        (folder / "eval.sh").write_text("echo ok\n")
        raw = {
            "id": case, "instruction": "x",
            "config": [{"type": "copyfile_from_host_to_guest", "parameters": {"src": official, "dest": "/home/user/d.csv"}}],
            "evaluator": {"func": "check_include_exclude", "result": {"type": "vm_script_output",
                          "src": f"evaluation_examples/examples/x/{case}/eval.sh", "dest": "/home/user/eval.sh"},
                          "expected": {"type": "rule", "rules": {"include": ["ok"]}}},
        }  # fmt: skip
        (folder / f"{case}.json").write_text(json.dumps(raw))

    _attacks(tmp_path / "suite", place)
    # the task folder itself holds the FIFO, the link: refused before any of its files is read
    suite = load_suite(f"spider2v:{tmp_path / 'suite'}")
    assert suite.tasks == []
    _assert_refused(suite.unsupported, lambda case: case)


def test_spider2v_gold_and_check_scripts_and_solutions_are_held_too(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    folder = root / "examples" / "x" / "t"
    folder.mkdir(parents=True)
    (folder / "eval.sh").write_text("echo ok\n")
    (folder / "gold.csv").write_text("a\n")
    raw = {"id": "t", "instruction": "x", "evaluator": {
        "func": "compare_csv", "result": {"type": "vm_file", "path": "/home/user/out.csv"},
        "expected": {"type": "local_file", "path": "evaluation_examples/examples/x/t/gold.csv"}}}  # fmt: skip
    (folder / "t.json").write_text(json.dumps(raw))
    assert [t.id for t in load_suite(f"spider2v:{root}").tasks] == ["t"]
    for field, value in (("expected", {"type": "local_file", "path": ENVIRON}),
                         ("result", {"type": "vm_script_output", "src": "../../../../../../../etc/passwd"})):  # fmt: skip
        (folder / "t.json").write_text(json.dumps({**raw, "evaluator": {**raw["evaluator"], field: value}}))
        assert "refused" in load_suite(f"spider2v:{root}").unsupported["t"]
    (folder / "t.json").write_text(json.dumps(raw))
    (folder / "solution.sh").symlink_to("/etc/hostname")  # a reference that would print a host file
    assert "'solution.sh' in t/ is a link to /etc/hostname" in load_suite(f"spider2v:{root}").unsupported["t"]
    (folder / "solution.sh").unlink()
    (tmp_path / "elsewhere.json").write_text(json.dumps(raw))
    (folder / "t.json").unlink()
    (folder / "t.json").symlink_to(tmp_path / "elsewhere.json")  # the task's own JSON
    assert "is a link to" in load_suite(f"spider2v:{root}").unsupported["t"]


def test_dacode_refuses_sources_and_gold_that_lead_out(tmp_path: Path) -> None:
    root = tmp_path / "dacode"
    # task id -> (what its source/<id>/data.csv is, what its gold/<id>/result.csv is)
    cases = {"fine": ("file", "file"), "source-link": ("link", "file"), "source-fifo": ("fifo", "file"),
             "gold-link": ("file", "link"), "../../../etc": (None, None)}  # fmt: skip
    for task_id, (source, gold) in cases.items():
        for folder, name, how in (("source", "data.csv", source), ("gold", "result.csv", gold)):
            if how is not None:
                _plant(root / folder / task_id, name, how)
    rows = [{"id": task_id, "type": "data manipulation", "instruction": "x"} for task_id in cases]
    evals = [{"id": row["id"], "func": ["compare_csv"], "result": [{"file": ["result.csv"]}]} for row in rows]
    (root / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in evals))
    suite = load_suite(f"dacode:{root}")
    assert [t.id for t in suite.tasks] == ["fine"]
    assert "source folder '../../../etc' leads outside the suite folder" in suite.unsupported["../../../etc"]
    assert "'data.csv' in source-link/ is a link to /proc/" in suite.unsupported["source-link"]
    assert "'data.csv' in source-fifo/ is a FIFO" in suite.unsupported["source-fifo"]
    assert "'result.csv' in gold-link/ is a link to /proc/" in suite.unsupported["gold-link"]


def test_workspace_refuses_task_folders_and_files_that_lead_out(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "tasks").mkdir(parents=True)
    (root / "suite.json").write_text(json.dumps({"name": "ws", "format": "workspace"}))
    task = {"instruction": "x", "scorers": [{"name": "text", "options": {"expected": "a"}}]}
    for case in ("fine", "link", "fifo", "solution", "outside"):
        (root / "tasks" / case / "source").mkdir(parents=True)
        (root / "tasks" / case / "task.json").write_text(json.dumps(task))
    _plant(root / "tasks" / "link" / "source", "data.csv", "link")
    _plant(root / "tasks" / "fifo" / "source", "data.csv", "fifo")
    (root / "tasks" / "solution" / "solution.py").symlink_to("/etc/hostname")
    shutil.move(root / "tasks" / "outside", tmp_path / "outside")
    (root / "tasks" / "outside").symlink_to(tmp_path / "outside")  # a whole task folder from elsewhere
    suite = load_suite(f"workspace:{root}")
    assert [t.id for t in suite.tasks] == ["fine"]
    assert "'data.csv' in source/ is a link to /proc/" in suite.unsupported["link"]
    assert "is a FIFO" in suite.unsupported["fifo"]
    assert "reference solution 'solution.py' is a link to /etc/hostname" in suite.unsupported["solution"]
    assert "task folder 'outside' is a link to" in suite.unsupported["outside"]
    (root / "tasks" / "fine" / "task.json").unlink()  # a task folder without its task is a mistake
    with pytest.raises(UserError, match=re.escape(f"{root / 'tasks' / 'fine'}/task.json: file not found")):
        load_suite(f"workspace:{root}")


def _dabench(root: Path, cases: dict[str, str]) -> Path:
    """A DABench folder with one question per case, its table named as the case says."""
    (root / "tables").mkdir(parents=True)
    (root / "tables" / "good.csv").write_text("a\n1\n")
    questions = [
        {"id": case, "question": "q", "format": "@a[x]", "file_name": name, "constraints": "", "level": "easy"}
        for case, name in cases.items()
    ]  # fmt: skip
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (root / "labels.jsonl").write_text(
        "".join(json.dumps({"id": case, "common_answers": [["a", "1"]]}) + "\n" for case in cases)
    )
    return root / "questions.jsonl"


def test_dabench_refuses_tables_that_lead_out(tmp_path: Path) -> None:
    root = tmp_path / "dabench"
    cases = {"fine": "good.csv", "absolute": ENVIRON, "climb": "../../../../../../../../etc/hostname"}
    questions = _dabench(root, {**cases, "link": "link.csv", "fifo": "fifo.csv", "folder": "folder.csv"})
    for case in ("link", "fifo", "folder"):
        _plant(root / "tables", f"{case}.csv", case)
    suite = load_suite(f"dabench:{questions}")
    assert [t.id for t in suite.tasks] == ["fine"]
    _assert_refused(suite.unsupported, lambda case: case)
    (root / "solutions").mkdir()
    (root / "solutions" / "fine.py").symlink_to("/etc/hostname")  # a reference solution is read too
    assert "is a link to /etc/hostname" in load_suite(f"dabench:{questions}").unsupported["fine"]


def test_a_built_in_style_dabench_folder_names_its_files_inside(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    _dabench(root, {"fine": "good.csv"})
    manifest = {"name": "s", "format": "dabench", "questions": "questions.jsonl", "labels": "labels.jsonl"}
    (root / "suite.json").write_text(json.dumps({**manifest, "tables": "/etc"}))
    with pytest.raises(UserError, match="tables folder '/etc' is an absolute path"):
        load_suite(f"dabench:{root}")
    (root / "suite.json").write_text(json.dumps({**manifest, "tables": "tables", "labels": "../../x.jsonl"}))
    with pytest.raises(
        UserError, match=re.escape("labels file '../../x.jsonl' leads outside the suite folder")
    ):
        load_suite(f"dabench:{root}")
    (root / "suite.json").unlink()
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "tables": "tables"}))
    (root / "suite.json").symlink_to(tmp_path / "manifest.json")
    with pytest.raises(UserError, match=re.escape("manifest 'suite.json' is a link to")):
        load_suite(f"dabench:{root}")


def _interactive(root: Path, tables: dict[str, str]) -> None:
    (root / "tables").mkdir(parents=True)
    (root / "dialogues").mkdir()
    (root / "tables" / "good.csv").write_text("a\n1\n")
    (root / "suite.json").write_text(json.dumps({"name": "i", "format": "interactive", "tables": "tables"}))
    turn = {"query": "q", "code": "x = 1", "results": [{"type": "scalar", "name": "x"}]}
    for dialogue, table in tables.items():
        body = {"id": dialogue, "tables": [table], "turns": [turn]}
        (root / "dialogues" / f"{dialogue}.json").write_text(json.dumps(body))


def test_interactive_refuses_tables_and_libraries_that_lead_out(tmp_path: Path) -> None:
    root = tmp_path / "interactive"
    cases = {"fine": "good.csv", "absolute": ENVIRON, "climb": "../../../../../../../../etc/hostname"}
    _interactive(root, {**cases, "link": "link.csv", "fifo": "fifo.csv", "folder": "folder.csv"})
    for case in ("link", "fifo", "folder"):
        _plant(root / "tables", f"{case}.csv", case)
    suite = load_suite(f"interactive:{root}")
    assert [t.id for t in suite.tasks] == ["fine-01"]
    _assert_refused(suite.unsupported, lambda case: case)
    (root / "lib" / "kit").mkdir(parents=True)
    (root / "lib" / "kit" / "__init__.py").write_text("def f():\n    pass\n")
    (root / "lib" / "kit" / "keys").symlink_to(Path.home())  # mounted in every sandbox if allowed
    manifest = json.loads((root / "suite.json").read_text())
    (root / "suite.json").write_text(json.dumps({**manifest, "library": {"name": "kit", "folder": "lib"}}))
    with pytest.raises(UserError, match="library file 'kit/keys' in lib/ is a link to"):
        load_suite(f"interactive:{root}")


def test_tapilot_refuses_resources_that_lead_out(tmp_path: Path) -> None:
    from families.interactive.tapilot_release import build

    root = build(tmp_path / "release")
    assert load_suite(f"tapilot:{root}").tasks
    table = root / "data" / "resource" / "fastfood.csv"
    table.unlink()
    table.symlink_to(ENVIRON)
    with pytest.raises(UserError, match=re.escape("resource 'fastfood.csv' is a link to /proc/")):
        load_suite(f"tapilot:{root}")
    table.unlink()
    os.mkfifo(table)
    with pytest.raises(UserError, match=re.escape("resource 'fastfood.csv' is a FIFO")):
        load_suite(f"tapilot:{root}")


def test_a_generated_suite_copies_no_table_that_leads_out(tmp_path: Path) -> None:
    from daharness.core.generated_suite import prepare_generated_suite

    (tmp_path / "tables").mkdir()
    leak = tmp_path / "tables" / "leak.csv"
    leak.symlink_to(ENVIRON)
    manifest = {"family": "closed-form", "format": "dabench"}
    with pytest.raises(Refused, match=re.escape("table 'leak.csv' is a link to /proc/")):
        prepare_generated_suite(tmp_path / "out", "generation.json", {}, "m", {"leak.csv": leak}, manifest)
    assert not (tmp_path / "out" / "tables" / "leak.csv").exists()
