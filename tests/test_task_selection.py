"""Subsets of a suite (issue 43, item 6): `--limit A-B` runs tasks A to B (counted from 1, both included)
and `--sample-shuffle SEED` a seeded random subset, written in run.json and kept on resume; and what a
run's figures are over (item 7): the task set, a hash of the tasks it ran and of those the machine left
out, in the report and in `compare`, which warns when two runs' task sets differ."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import cli, records_of

from daharness.core.errors import UserError

RUNNABLE = Path(__file__).parent / "fixtures" / "runnable"
SUITE = f"dabench:{RUNNABLE / 'questions.jsonl'}"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli("run", "--agent", "reference", *args), capture_output=True, text=True, timeout=300
    )


def test_limit_takes_a_range_counted_from_one_with_both_ends(tmp_path: Path) -> None:
    done = _run("--suite", SUITE, "--ids", "1,2,4", "--limit", "2-3", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert sorted(r["id"] for r in records_of(tmp_path / "run")) == ["2", "4"]
    from daharness.runs.selection import TaskRange

    assert TaskRange.parse("10") == TaskRange(1, 10) and TaskRange.parse(" 10 - 20 ") == TaskRange(10, 20)
    for bad in ("0", "3-2", "0-4", "a-b", "-3", "1-"):
        with pytest.raises(UserError, match=r"--limit: give N \(the first N tasks\) or A-B"):
            TaskRange.parse(bad)
    refused = _run("--suite", SUITE, "--limit", "5-2", "--out", str(tmp_path / "other"))
    assert (
        refused.returncode == 2
        and "error: --limit: give N" in refused.stderr
        and "not '5-2'" in refused.stderr
    )
    assert not (tmp_path / "other").exists()


def test_sample_shuffle_is_a_seeded_subset_kept_in_run_json_and_on_resume(tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    done = _run("--suite", SUITE, "--sample-shuffle", "8", "--limit", "2", "--out", out)
    assert done.returncode == 0, done.stderr
    order = ["1", "2", "3", "4", "5"]
    random.Random(8).shuffle(order)
    assert [r["id"] for r in records_of(tmp_path / "run")] == order[:2] == ["4", "1"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["sample_shuffle"] == 8
    again = _run("--suite", SUITE, "--sample-shuffle", "8", "--limit", "2", "--out", out)
    assert again.returncode == 0 and "2 of 2 samples already done" in again.stderr
    other = _run("--suite", SUITE, "--sample-shuffle", "11", "--limit", "2", "--out", out)
    assert other.returncode == 2 and "sample_shuffle: 8, now 11" in other.stderr
    unshuffled = _run("--suite", SUITE, "--limit", "2", "--out", out)
    assert unshuffled.returncode == 2 and "sample_shuffle: 8, now not set" in unshuffled.stderr
    assert len(records_of(tmp_path / "run")) == 2


def test_select_tasks_names_what_cannot_run_here_with_its_reason() -> None:
    from helpers import closed_task

    from daharness.runs.selection import select_tasks

    tasks = [closed_task([("x", "1")], task_id=i) for i in ("a", "b")]
    with pytest.raises(UserError) as caught:
        select_tasks(tasks, ids=["a", "dagster-x", "zz"], limit=None, unsupported={"dagster-x": "needs the dagster environment: run scripts/setup-apps.sh"})  # fmt: skip
    assert str(caught.value) == (
        "--ids: task dagster-x cannot run here: needs the dagster environment: run scripts/setup-apps.sh; "
        "no task with id zz in this suite"
    )


def _suite_copy(folder: Path, table_of_4: str) -> str:
    """The runnable fixture, its question 4 reading `table_of_4` (a link leading out of the suite's
    folder makes it a task that cannot run, as a missing application does on another machine)."""
    shutil.copytree(RUNNABLE, folder)
    lines = (folder / "questions.jsonl").read_text().splitlines()
    row = json.loads(lines[3])
    row["file_name"] = table_of_4
    lines[3] = json.dumps(row)
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    return f"dabench:{folder / 'questions.jsonl'}"


def test_reports_and_compare_name_the_task_set_and_compare_warns_when_they_differ(tmp_path: Path) -> None:
    here = _suite_copy(tmp_path / "here", "outside.csv")
    (tmp_path / "here" / "tables" / "outside.csv").symlink_to(tmp_path / "elsewhere.csv")
    (tmp_path / "elsewhere.csv").write_text((RUNNABLE / "tables" / "points.csv").read_text())
    there = _suite_copy(tmp_path / "there", "points.csv")
    a = _run("--suite", here, "--limit", "2", "--out", str(tmp_path / "a"))
    b = _run("--suite", there, "--limit", "2", "--out", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    spec = json.loads((tmp_path / "a" / "run.json").read_text())
    assert list(spec["left_out"]) == ["4"] and "outside the suite folder" in spec["left_out"]["4"]
    found = [json.loads((tmp_path / run / "report.json").read_text())["run"]["task_set"] for run in "ab"]
    assert [(f["tasks"], f["left_out"]) for f in found] == [(2, ["4"]), (2, [])]
    assert found[0]["hash"] != found[1]["hash"] and len(found[0]["hash"]) == 12
    assert f"task set {found[0]['hash']}: 2 tasks, 1 left out where it ran (cannot run there: 4)" in a.stdout
    assert f"task set {found[1]['hash']}: 2 tasks" in b.stdout
    html = (tmp_path / "a" / "report.html").read_text()
    assert f"task set {found[0]['hash']}" in html
    viewed = subprocess.run(
        cli("view", str(tmp_path / "a"), "--export", str(tmp_path / "site")), capture_output=True, text=True
    )
    assert (
        viewed.returncode == 0
        and f"task set {found[0]['hash']}" in (tmp_path / "site" / "index.html").read_text()
    )

    compared = subprocess.run(
        cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", str(tmp_path / "c.json")),
        capture_output=True, text=True,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert "warning: the runs' task sets differ" in compared.stdout
    figures = json.loads((tmp_path / "c.json").read_text())
    assert figures["comparisons"][0]["same_task_set"] is False
    assert [run["figures"]["accuracy"]["value"] for run in figures["runs"]] == [1.0, 1.0]
    same = subprocess.run(
        cli("compare", str(tmp_path / "b"), str(tmp_path / "b")), capture_output=True, text=True
    )
    assert same.returncode == 0 and "task sets differ" not in same.stdout
