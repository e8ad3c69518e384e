"""`daharness view` of several runs in Chromium: a compact runs table first (suite, agent, model, tags,
accuracy with its interval, errors, cost, date), sorted by clicking a header; a run picked in it shows its
own section and samples; closed-form rows show the start of their question, not a bare number."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sample_runs import SUITE, react_run
from test_view import OLD_RUN, browser  # noqa: F401  (the Chromium fixture)
from test_view_more import _serve, _stop

from daharness.report.build import build_report
from daharness.runs.rundir import RunDir


@pytest.fixture(scope="module")
def four_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three react runs of other sizes, models and tags (every third task answered wrong) and a 0.1 run."""
    folder = tmp_path_factory.mktemp("runs")
    old = folder / "old"
    shutil.copytree(OLD_RUN, old)
    return [
        react_run(folder / "a", count=5),
        react_run(folder / "b", count=3, model="fake-small", tags=["nightly"]),
        react_run(folder / "c", count=2, model="fake-large", tags=["v2", "long"]),
        old,
    ]


@pytest.fixture(scope="module")
def served(four_runs: list[Path]) -> Iterator[str]:
    process, url = _serve(*four_runs)
    yield url
    _stop(process)


def _table(page) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all(
        "#runs-table tbody tr", "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText))"
    )


def test_the_runs_table_comes_first_and_sorts(browser, served: str, four_runs: list[Path]) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    reports = [build_report(RunDir.open_for_reading(run)) for run in four_runs]
    accuracy = {chr(ord("A") + i): r["intervals"]["accuracy"]["value"] for i, r in enumerate(reports)}
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(served)
    header = page.eval_on_selector_all("#runs-table th", "cells => cells.map(c => c.textContent)")
    assert header == ["run", "suite", "agent", "model", "tags", "accuracy [95% CI]", "samples", "errors",
                      "cost", "date"]  # fmt: skip
    rows = _table(page)
    assert [row[0] for row in rows] == ["A", "B", "C", "D"]
    a, b, c = rows[0], rows[1], rows[2]
    assert a[1:4] == ["closed-form", "react", "fake-model"] and a[6:9] == ["5", "0", "$0.0000"]
    assert a[5].startswith("60.0% [") and "%, " in a[5]  # 3 of 5 right, with its interval
    assert b[3:5] == ["fake-small", "nightly"] and c[3:5] == ["fake-large", "v2, long"]
    assert a[9].startswith(reports[0]["run"]["created_at"][:10])
    # compact: the samples start on the first screen, not below every run's cards and figures
    assert page.locator("#samples").bounding_box()["y"] < 900
    assert page.locator(".run-details.chosen").count() == 0
    page.click("#runs-table th >> text='accuracy [95% CI]'")
    ascending = [row[0] for row in _table(page)]
    assert ascending == sorted(accuracy, key=lambda label: accuracy[label])
    page.click("#runs-table th >> text='accuracy [95% CI]'")
    assert [row[0] for row in _table(page)] == ascending[::-1]
    page.click("#runs-table th >> text='samples'")
    assert [row[6] for row in _table(page)] == sorted((row[6] for row in rows), key=int)
    # a run picked in the table: its own section, and only its samples
    page.click("#runs-table tbody tr[data-run=B] td:nth-child(2)")
    assert page.input_value("select[name=run]") == "B"
    assert page.locator(".run-details.chosen").count() == 1
    assert page.locator(".run-details.chosen").get_attribute("data-run") == "B"
    assert "accuracy · 3 samples" in page.inner_text(".run-details.chosen section.run")
    shown = page.eval_on_selector_all(
        "#samples tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.run)"
    )
    assert shown == ["B"] * 3
    page.close()


def test_closed_form_rows_show_their_question(browser, served: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page = browser.new_page()
    page.goto(served)
    page.select_option("select[name=run]", "A")
    cells = page.eval_on_selector_all(
        "#samples tbody tr:not([hidden])",
        "rows => rows.map(r => [r.cells[1].innerText, r.cells[2].innerText, r.cells[2].firstChild.title])",
    )
    assert len(cells) == 5  # run A's five samples (an empty table would check nothing below)
    for task, (shown_id, start, whole) in zip(SUITE.tasks[:5], cells, strict=True):
        words = " ".join(task.instruction.split())
        assert shown_id == task.id and start.rstrip("…") and words.startswith(start.rstrip("…"))
        assert len(start) <= 71 and whole == words
    page.fill("#search", " ".join(SUITE.tasks[1].instruction.split()[:6]).lower())
    assert page.eval_on_selector_all(
        "#samples tbody tr:not([hidden]) td:nth-child(2)", "cells => cells.map(c => c.textContent)"
    ) == [SUITE.tasks[1].id]  # the question is searched too
    page.close()
