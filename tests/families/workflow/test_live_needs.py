"""What the workflow family collects live after the agent is what the task's evaluators say they read, asked
of their typed options (`EvaluatorOptions.live_needs`), not read from raw option dicts."""

from __future__ import annotations

from typing import Any

from daharness.core.task import ScorerSpec, Task
from daharness.families.workflow.family import live_needs
from daharness.families.workflow.getters import SUPERSET_DEFAULTS, TAB_URL
from daharness.families.workflow.scorers.inputs import LiveNeeds, PageCheckNeed


def _task(*specs: tuple[str, dict[str, Any]]) -> Task:
    return Task(
        id="t", suite="s", family="workflow", instructions=["x"],
        scorers=[ScorerSpec(name=name, options=options) for name, options in specs],
    )  # fmt: skip


def test_the_sources_of_every_evaluator_say_what_is_read_live() -> None:
    task = _task(
        ("spider2v.check_include_exclude", {
            "result": {"kind": "screen", "path": "active_tab_info"},
            "expected": {"kind": "rule", "value": {"include": ["x"]}},
        }),
        ("spider2v.check_include_exclude", {
            "result": {"kind": "validate_correct_url", "path": "eval.sh", "value": {"goto_prefix": "http://"}},
        }),
        ("spider2v.check_include_exclude", {
            "result": {"kind": "html_check", "path": "check.sh", "value": {"css_paths": ["#a", "#b"], "timeout": 2000}},
        }),
        ("spider2v.check_include_exclude", {"result": {"kind": "superset_localhost_page"}}),
        ("spider2v.check_file_existence", {"result": {"kind": "file", "path": "out.json", "value": {"made_by_checks": True}}}),
        ("spider2v.check_file_existence", {"result": {"kind": "file", "path": "mine.csv"}}),
    )  # fmt: skip
    assert live_needs(task) == LiveNeeds(
        screen=frozenset({"active_tab_info", TAB_URL}),
        superset_page=(SUPERSET_DEFAULTS["url"], SUPERSET_DEFAULTS["title"]),
        page_checks={"check.sh": PageCheckNeed(("#a", "#b"), 2000.0)},
        made_by_checks=("out.json",),
    )


def test_a_task_that_reads_only_files_needs_nothing_live() -> None:
    task = _task(("spider2v.check_file_existence", {"result": {"kind": "file", "path": "mine.csv"}}))
    needs = live_needs(task)
    assert needs == LiveNeeds() and not (needs.screen or needs.superset_page or needs.page_checks)
    page = {"kind": "superset_localhost_page", "value": {"url": "http://localhost:8088/x", "title": "X"}}
    assert live_needs(_task(("spider2v.check_include_exclude", {"result": page}))).superset_page == (
        "http://localhost:8088/x",
        "X",
    )
