"""The built-in `workspace` suite (DA-Code family): shape, reference runs, and `daharness validate`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from daharness.report.build import build_report
from daharness.runs.rundir import RunDir
from daharness.suites import load_suite

SUBCATEGORIES = {
    "DW": {"data cleaning", "data loading", "data transformation"},
    "ML": {"classification", "regression", "clustering", "competition"},
    "EDA": {"data manipulation", "data insights", "visualization", "statistical analysis"},
}


@pytest.fixture(scope="module")
def suite():  # type: ignore[no-untyped-def]
    return load_suite("workspace")


def test_suite_shape(suite) -> None:  # type: ignore[no-untyped-def]
    tasks = suite.tasks
    assert len(tasks) >= 30
    found = {(t.metadata.category, t.metadata.subcategory) for t in tasks}
    assert found == {(c, s) for c, subs in SUBCATEGORIES.items() for s in subs}
    assert set(Counter(t.metadata.level for t in tasks)) == {"easy", "medium", "hard"}
    for task in tasks:
        assert task.reference is not None, task.id
        assert len(task.files) >= 2, task.id  # the data and at least a distractor or a README
        assert task.gold.files, task.id
        assert task.scorers and task.warnings == [], task.id
    charts = [t for t in tasks if t.metadata.subcategory == "visualization"]
    assert {s.name for t in charts for s in t.scorers} == {"chart"}


def test_reference_solutions_reach_their_scores(suite, workspace_reference_run: Path) -> None:  # type: ignore[no-untyped-def]
    records = [
        json.loads(line) for line in (workspace_reference_run / "samples.jsonl").read_text().splitlines()
    ]
    by_id = {task.id: task for task in suite.tasks}
    short = {
        r["id"]: r["score"]["value"]
        for r in records
        if r["score"]["value"] < float(by_id[r["id"]].gold.data.get("threshold") or 1.0)
    }
    assert short == {}
    # honest solutions raise no integrity flag and leave nothing that cannot be collected
    assert [r["id"] for r in records if r["suspicious"] or r["skipped_files"] or r["failure"]] == []
    report = build_report(RunDir.open_for_reading(workspace_reference_run))
    assert set(report["families"]["workspace"]["by_category"]) == {"DW", "ML", "EDA"}
    assert set(report["families"]["workspace"]["by_level"]) == {"easy", "medium", "hard"}
    drawn = report["family_tables"]["workspace"]  # what the report draws: the same numbers, typed
    assert drawn["headline"] == [
        {"label": "mean score", "value": report["families"]["workspace"]["score"], "measure": "mean"}
    ]
    sections = {section["name"]: section for section in drawn["tables"][0]["sections"]}
    assert {row["group"] for row in sections["category"]["rows"]} == {"DW", "ML", "EDA"}
    assert (sections["sub-category"]["chart"], sections["difficulty"]["chart"]) == ("bars", "columns")


def test_validate_passes_on_the_builtin_suite() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "validate", "--suite", "workspace", "-j", "2"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    count = len(load_suite("workspace").tasks)
    assert f"{count} of {count} tasks pass" in done.stdout and count >= 32
    assert "workspace: validation (workspace corrected)" in done.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"instruction": 5}, "field 'instruction': Input should be a valid string"),
        ({"id": [1]}, "field 'id': Input should be a valid string"),
        ({"outputs": "result.csv"}, "field 'outputs': Input should be a valid list"),
        ({"outputs": ["a.csv", 7]}, "field 'outputs.1': Input should be a valid string"),
        ({"level": ["easy"]}, "field 'level': Input should be a valid string"),
        ({"threshold": "high"}, "field 'threshold': Input should be a valid number"),
        ({"threshold": True}, "field 'threshold': Input should be a valid number"),
        ({"scorers": "table"}, "field 'scorers': Input should be a valid list"),
        (
            {"scorers": [{"name": "table", "options": [1]}]},
            "field 'scorers.0.options': Input should be a valid dictionary",
        ),
        ({"scorers": [{"nme": "table"}]}, "field 'scorers.0.name': Field required"),
        (
            {"conjunction": "xor"},
            "field 'conjunction': Input should be 'avg', 'and', 'or', 'max', 'min' or 'all_mean'",
        ),
    ],
)
def test_fields_of_the_wrong_type_are_one_line_errors(tmp_path: Path, change: dict, message: str) -> None:
    from daharness.core.errors import UserError

    task = tmp_path / "tasks" / "t1"
    (task / "source").mkdir(parents=True)
    (tmp_path / "suite.json").write_text(json.dumps({"name": "mini", "format": "workspace"}))
    raw = {"instruction": "Say hi.", "scorers": [{"name": "text", "options": {"expected": "hi"}}], **change}
    (task / "task.json").write_text(json.dumps(raw))
    with pytest.raises(UserError, match=rf"t1/task\.json: {message}$"):
        load_suite(f"workspace:{tmp_path}")
