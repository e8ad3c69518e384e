"""The spider2v suite format on the 40 shared official tasks and on folders made here."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daharness.core.errors import UserError
from daharness.families.workflow import apps
from daharness.suites import load_suite

SHARED = Path(os.environ.get("DAHARNESS_SHARED") or Path(__file__).parents[4] / "shared") / "spider2v-public"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason="the shared Spider2-V tasks (../shared/spider2v-public) are not here"
)
DBT_TASK = "8ff98608-8e0e-526e-9413-d744554ba708"


@needs_shared
def test_official_tasks_load_or_say_why_not() -> None:
    suite = load_suite(f"spider2v:{SHARED}")
    assert len(suite.tasks) + len(suite.unsupported) == 40
    assert len(suite.unsupported) <= 4
    assert all(reason for reason in suite.unsupported.values())
    assert "moves the system clock" in suite.unsupported["4b7c0a4c-0a3d-450d-878f-61d517ef66f5"]
    assert "reads from the internet" in suite.unsupported["20030405-417c-425b-ab3f-6506b265ec85"]
    task = next(t for t in suite.tasks if t.id == DBT_TASK)
    assert task.workdir == "/home/user"
    assert [f.path for f in task.files] == ["jaffle_shop.zip"]
    assert [s.args["dest"] for s in task.setup] == ["init.sh"]
    assert [s.name for s in task.scorers] == [
        "spider2v.check_include_exclude",
        "spider2v.check_local_database",
    ]
    assert task.conjunction.value == "all_mean"
    assert task.metadata.category == "data_transformation" and task.metadata.subcategory == "dbt"
    assert {"cli", "abstract", "app:dbt", "app:duckdb"} <= set(task.metadata.tags)
    assert task.gold.data["scripts"][0]["dest"] == "eval.sh"
    # a script named by another task's folder that is not shared is found beside the task
    tensor = next(t for t in suite.tasks if t.id == "1f16fbd5-cdf3-4cb2-b02b-9c31f11cc77d")
    (script,) = [step.args["script"] for step in tensor.setup if "script" in step.args]
    assert Path(script).parent.name == "1f16fbd5-cdf3-4cb2-b02b-9c31f11cc77d"


@needs_shared
def test_verbose_instruction_and_retrieved_documents() -> None:
    plain = {t.id: t for t in load_suite(f"spider2v:{SHARED}").tasks}[DBT_TASK]
    verbose = {t.id: t for t in load_suite(f"spider2v:{SHARED}", instruction="verbose").tasks}[DBT_TASK]
    rag = {t.id: t for t in load_suite(f"spider2v:{SHARED}", rag=True).tasks}[DBT_TASK]
    assert "step-by-step tutorial" not in plain.instruction
    assert "Run ``dbt seed``" in verbose.instruction and "verbose" in verbose.metadata.tags
    assert "abstract" not in verbose.metadata.tags
    assert "Documentation Source:" in rag.instruction and rag.instruction.startswith(plain.instruction)
    with pytest.raises(UserError, match="--instruction"):
        load_suite(f"spider2v:{SHARED}", instruction="chatty")


def _task_folder(root: Path, task_id: str, **changes: object) -> Path:
    folder = root / "examples" / "dbt" / task_id
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text("a\n1\n")
    (folder / "eval.sh").write_text("#!/bin/bash\necho ok\n")
    raw = {
        "id": task_id, "snapshot": "dbt", "instruction": "do it", "related_apps": ["dbt"], "tags": ["cli", "abstract"],
        "config": [{"type": "copyfile_from_host_to_guest", "parameters": {
            "src": f"evaluation_examples/examples/dbt/{task_id}/data.csv", "dest": "/home/user/data.csv"}}],
        "evaluator": {"func": "check_include_exclude", "result": {"type": "vm_script_output",
                      "src": f"evaluation_examples/examples/dbt/{task_id}/eval.sh", "dest": "/home/user/eval.sh"},
                      "expected": {"type": "rule", "rules": {"include": ["ok"]}}},
        **changes,
    }  # fmt: skip
    (folder / f"{task_id}.json").write_text(json.dumps(raw))
    return folder


def test_what_cannot_run_here_is_listed_with_its_reason(tmp_path: Path) -> None:
    _task_folder(tmp_path, "fine")
    _task_folder(tmp_path, "cloud", config=[{"type": "bigquery_init", "parameters": {}}])
    _task_folder(
        tmp_path,
        "browser",
        evaluator={"func": "check_include_exclude", "result": {"type": "active_url_from_accessTree"}},
    )
    _task_folder(
        tmp_path,
        "unknown-func",
        evaluator={"func": "compare_pptx_files", "result": {"type": "vm_file", "path": "/home/user/a"}},
    )
    _task_folder(
        tmp_path,
        "bad-option",
        evaluator={
            "func": "compare_csv",
            "result": {"type": "vm_file", "path": "/home/user/a.csv"},
            "expected": {"type": "rule", "rules": {}},
            "options": {"fuzzy": True},
        },
    )
    _task_folder(tmp_path, "outside", config=[{"type": "copyfile_from_host_to_guest", "parameters": {
        "src": "evaluation_examples/examples/dbt/outside/data.csv", "dest": "/opt/data.csv"}}])  # fmt: skip
    suite = load_suite(f"spider2v:{tmp_path}")
    assert [t.id for t in suite.tasks] == ["fine"]
    assert "bigquery_init" in suite.unsupported["cloud"]
    assert "active_url_from_accessTree" in suite.unsupported["browser"]
    assert "compare_pptx_files" in suite.unsupported["unknown-func"]
    assert "fuzzy" in suite.unsupported["bad-option"]
    assert "/opt/data.csv" in suite.unsupported["outside"]


def test_airbyte_and_metabase_tasks_say_they_need_the_application(tmp_path: Path) -> None:
    # as the official airbyte tasks begin: init.sh starts Airbyte's containers and waits on localhost:8000
    # (whose own reasons, Docker and a server on localhost, would hide the one that matters)
    for task_id, app, port in (("airbyte", "airbyte", 8000), ("metabase", "metabase", 3000)):
        folder = _task_folder(tmp_path, task_id, snapshot=app, config=[
            {"type": "script_and_execute", "parameters": {
                "src": f"evaluation_examples/examples/dbt/{task_id}/init.sh", "dest": "/home/user/init.sh"}},
            {"type": f"{app}_webui_init", "parameters": {"listening_port": 9222, "url": f"http://localhost:{port}"}},
        ])  # fmt: skip
        (folder / "init.sh").write_text(f"docker compose up -d\ncurl -s http://localhost:{port}/health\n")
    unsupported = load_suite(f"spider2v:{tmp_path}").unsupported
    assert unsupported["airbyte"].startswith(
        "setup step 'airbyte_webui_init' needs Airbyte, which the harness"
    )
    assert unsupported["metabase"].startswith("setup step 'metabase_webui_init' needs Metabase, which the")


def test_bad_files_are_one_line_errors(tmp_path: Path) -> None:
    _task_folder(
        tmp_path,
        "x",
        evaluator={"func": ["check_include_exclude"] * 2, "conj": "xor", "result": [None, None]},
    )
    with pytest.raises(UserError, match="conj"):
        load_suite(f"spider2v:{tmp_path}")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no Spider2-V task"):
        load_suite(f"spider2v:{empty}")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"evaluator": "check it"}, "'evaluator' must be an object"),
        ({"tags": 5}, "'tags' must be a list"),
        ({"config": {"type": "execute"}}, "'config' must be a list"),
        ({"config": [{"type": "execute", "parameters": "ls"}]}, r"'config\[0\].parameters' must be an object"),
        ({"evaluator": {"func": "check_include_exclude", "postconfig": 5}}, "'evaluator.postconfig' must be a list"),
        ({"evaluator": {"func": "check_include_exclude", "result": ["a"]}}, "'evaluator.result' must be an object"),
        ({"evaluator": {"func": ["check_include_exclude"], "options": ["x"]}}, r"'evaluator.options\[0\]' must be"),
    ],
)  # fmt: skip
def test_fields_of_the_wrong_type_are_one_line_errors(tmp_path: Path, changes: dict, field: str) -> None:
    folder = _task_folder(tmp_path, "x", **changes)
    with pytest.raises(UserError, match=rf"^{re.escape(str(folder / 'x.json'))}: field {field}"):
        load_suite(f"spider2v:{tmp_path}")


def test_a_manifest_that_is_not_an_object_is_a_one_line_error(tmp_path: Path) -> None:
    _task_folder(tmp_path, "x")
    (tmp_path / "suite.json").write_text("[1]")
    with pytest.raises(UserError, match=r"suite\.json: expected a JSON object"):
        load_suite(f"spider2v:{tmp_path}")


@needs_shared
def test_suites_check_prints_the_unsupported_table(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "suites", "check", f"spider2v:{SHARED}"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "unsupported tasks" in done.stdout and "moves the system clock" in done.stdout
    assert "36 supported, 4 unsupported" in done.stdout


def test_builtin_workflow_suite_has_references_and_every_app() -> None:
    suite = load_suite("workflow")
    assert len(suite.tasks) >= 20
    # the application tasks need scripts/setup-apps.sh's environments, the warehouse tasks the local emulators
    # (issue 44); the others only a desktop
    applications = {
        task_id for task_id in suite.unsupported if task_id.split("-")[0] in (*apps.APPS, "bq", "sf")
    }
    assert all(
        reason.startswith("needs a desktop")
        for task_id, reason in suite.unsupported.items()
        if task_id not in applications
    )
    desktop = [task for task in suite.tasks if task.desktop] + list(set(suite.unsupported) - applications)
    assert len(desktop) >= 6
    assert all(task.reference is not None for task in suite.tasks)
    warehouses = {"bq": "bigquery", "sf": "snowflake"}
    subcategories = {task.metadata.subcategory for task in suite.tasks} | {
        warehouses.get(i.split("-")[0], i.split("-")[0]) for i in applications
    }
    assert subcategories == {
        "excel",
        "dbt",
        "jupyter",
        "dagster",
        "airflow",
        "superset",
        "bigquery",
        "snowflake",
    }
    assert shutil.which("dbt") or Path(sys.executable).with_name("dbt").exists()


def test_validating_a_suite_where_nothing_can_run_is_an_error_not_a_pass(tmp_path: Path) -> None:
    _task_folder(tmp_path, "cloud", config=[{"type": "bigquery_init", "parameters": {}}])
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "validate", "--suite", f"spider2v:{tmp_path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no task to check (1 unsupported" in done.stderr and "0 of 0" not in done.stdout


def test_dbt_profiles_images_and_seaborn_tasks_are_supported(tmp_path: Path) -> None:
    from daharness.families.workflow.limits import executed_code_need

    profiles = {"type": "dbt_profiles", "dirs": ["/home/user/.dbt", "/home/user/projects/shop", "$DBT_PROFILES_DIR"],
                "dest": "profiles.yml"}  # fmt: skip
    rules = {"type": "rule", "rules": [["match", ["shop", "target"], "dev"]]}
    _task_folder(
        tmp_path, "profiles", evaluator={"func": "check_yaml_file", "result": profiles, "expected": rules}
    )
    folder = _task_folder(tmp_path, "images", evaluator={
        "func": "compare_jupyterlab_images", "result": {"type": "vm_file", "path": "/home/user/result.png"},
        "expected": {"type": "local_file", "path": "evaluation_examples/examples/dbt/images/gold.png"}})  # fmt: skip
    (folder / "gold.png").write_bytes(b"png")
    _task_folder(tmp_path, "localhost", evaluator={"func": "check_include_exclude", "result": {
        "type": "vm_script_output", "src": "evaluation_examples/examples/dbt/localhost/docs.sh"},
        "expected": {"type": "rule", "rules": {"include": ["ok"]}}})  # fmt: skip
    (tmp_path / "examples/dbt/localhost/docs.sh").write_text("curl -s -o index.html http://localhost:8020\n")
    suite = load_suite(f"spider2v:{tmp_path}")
    assert sorted(t.id for t in suite.tasks) == ["images", "profiles"]
    (profile_task,) = [t for t in suite.tasks if t.id == "profiles"]
    assert profile_task.scorers[0].options["result"] == {
        "kind": "first_file", "paths": [".dbt/profiles.yml", "projects/shop/profiles.yml"],
    }  # fmt: skip
    assert "server on localhost" in suite.unsupported["localhost"]  # not "the internet"
    assert executed_code_need("import seaborn as sns\nsns.set_theme()", "notebook") is None


def test_tasks_that_read_the_screen_need_a_desktop(tmp_path: Path) -> None:
    from daharness.sandbox.desktop import desktop_problem

    _task_folder(tmp_path, "declared", desktop=True)
    _task_folder(tmp_path, "files")
    _task_folder(
        tmp_path,
        "tab",
        evaluator={
            "func": "is_expected_url_pattern_match",
            "result": {"type": "active_tab_info"},
            "expected": {"type": "rule", "rules": {"expected": ["localhost:1036"]}},
        },
    )
    suite = load_suite(f"spider2v:{tmp_path}")
    if desktop_problem() is None:
        needs = {task.id: task.desktop for task in suite.tasks}
        assert needs == {"declared": True, "files": False, "tab": True}
        tab = next(task for task in suite.tasks if task.id == "tab")
        assert tab.scorers[0].options["result"] == {"kind": "screen", "path": "active_tab_info"}
    else:
        assert [task.id for task in suite.tasks] == ["files"]
        assert suite.unsupported["declared"].startswith("needs a desktop: ")
    _task_folder(tmp_path / "bad", "wrong", desktop="yes")
    with pytest.raises(UserError, match=r"wrong\.json: field 'desktop' must be true or false"):
        load_suite(f"spider2v:{tmp_path / 'bad'}")
