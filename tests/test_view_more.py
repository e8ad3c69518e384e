"""`daharness view` in Chromium on real runs: a run that grows while it is shown, moving between samples,
the run's cards, and a sample's tables and charts against the gold (DA-Code's `da-agent` against the
fake OpenAI server, writing a table that differs from the gold and a chart of other data)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from sample_runs import SUITE, responder
from test_view import OLD_RUN, browser  # noqa: F401  (the Chromium fixture)

from daharness.agents import AgentSettings, make_agent
from daharness.core.runlog import ScoringSettings
from daharness.models import ModelSettings
from daharness.report.build import build_report
from daharness.runs.rundir import RunDir
from daharness.runs.runner import run_suite
from daharness.suites import load_suite
from daharness.view.site import ViewSite

TABLE_TASK, CHART_TASK = "eda-cars-origin-summary", "eda-barley-site-bar"
# the gold has Origin,n_models,avg_mpg,avg_horsepower,avg_weight_lbs for Japan, Europe and USA
WRONG_TABLE = "Origin,n_models,avg_mpg,avg_horsepower,note\nJapan,58,99.99,77.74,x\nEurope,44,29.57,82.02,y\n"
WRITE_TABLE = f"open('origin_summary.csv', 'w').write({WRONG_TABLE!r})"
OTHER_CHART = (
    "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
    "plt.bar(['a', 'b'], [1, 2])\nplt.title('not the sites')\nplt.savefig('site_yield.png')"
)


def _serve(*runs: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "daharness", "view", *map(str, runs), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    line = process.stdout.readline()  # type: ignore[union-attr]
    assert line.startswith("serving http://127.0.0.1:"), line + process.stderr.read()  # type: ignore[union-attr]
    return process, line.split()[1]


def _stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0


def _rows(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all(
        "#samples tbody tr td:nth-child(2)", "cells => cells.map(c => c.textContent)"
    )


def test_a_growing_run_shows_new_samples_without_a_reload(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    out = tmp_path / "run"
    ids = [task.id for task in SUITE.tasks[:3]]
    with FakeOpenAI() as server:
        server.responder = responder
        options = AgentSettings(
            model=ModelSettings(model="fake-model", base_url=server.base_url), cache_mode="off"
        )
        strict = ScoringSettings(modes={"closed-form": "strict"})
        run_suite(SUITE, make_agent("react", options), out, ids=ids[:1], scoring=strict)
        process, url = _serve(out)
        try:
            page = browser.new_page()
            page.goto(url)
            assert _rows(page) == ids[:1] and page.inner_text("#total") == "1"
            assert "accuracy · 1 sample" in page.inner_text("section.run")  # not "1 samples"
            page.select_option("select[name=family]", "closed-form")
            # the same run goes on (resumed with more tasks) while the page stays open
            run_suite(SUITE, make_agent("react", options), out, ids=ids, scoring=strict)
            page.wait_for_function(
                "document.querySelectorAll('#samples tbody tr').length === 3", timeout=30000
            )
            assert (
                _rows(page) == ids and page.inner_text("#shown") == "3" and page.inner_text("#total") == "3"
            )
            assert page.input_value("select[name=family]") == "closed-form"  # the filter is kept
            assert "accuracy · 3 samples" in page.inner_text("section.run")
            page.close()
        finally:
            _stop(process)


def test_samples_link_to_their_neighbours_and_the_run_shows_its_cards(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    out = tmp_path / "run"
    ids = [task.id for task in SUITE.tasks[:3]]
    with FakeOpenAI() as server:
        server.responder = responder
        options = AgentSettings(
            model=ModelSettings(model="fake-model", base_url=server.base_url), cache_mode="off"
        )
        run_suite(
            SUITE,
            make_agent("react", options),
            out,
            ids=ids,
            scoring=ScoringSettings(modes={"closed-form": "strict"}),
        )
    usage = build_report(RunDir.open_for_reading(out))["agent"]["usage"]
    process, url = _serve(out)
    try:
        page = browser.new_page()
        page.goto(url)
        header = page.inner_text("section.run p.sub")
        assert (
            "scoring closed-form strict" in header
            and "workspace" not in header
            and "interactive" not in header
        )
        cards = dict(
            page.eval_on_selector_all(
                "section.run .card",
                "cards => cards.map(c => [c.querySelector('.k').textContent, c.querySelector('.v').textContent])",
            )
        )
        assert cards["tokens in / out"] == f"{usage['prompt_tokens']:,} / {usage['completion_tokens']:,}"
        assert cards["cost"] == "$0.0000" and cards["model replies from the cache"] == f"0 / {usage['calls']}"
        assert cards["wall time"].endswith("s") and usage["calls"] == 6
        page.goto(f"{url}runs/0/samples/{ids[0]}.html")
        # the agent's steps, as its record counts them: two replies (the action between is part of the first)
        assert page.locator("nav.pager a[rel=prev]").count() == 0 and "(2 steps)" in page.inner_text(
            "h2 >> nth=1"
        )
        page.click("nav.pager a[rel=next]")
        page.wait_for_url(f"**/{ids[1]}.html")
        assert page.inner_text("h1").startswith(f"sample {ids[1]}")
        page.click("nav.pager a[rel=next]")
        page.wait_for_url(f"**/{ids[2]}.html")
        assert page.locator("nav.pager a[rel=next]").count() == 0
        page.click("nav.pager a[rel=prev]")
        page.wait_for_url(f"**/{ids[1]}.html")
        page.close()
    finally:
        _stop(process)


def test_one_step_is_one_step(tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(OLD_RUN, old)  # made by daharness 0.1: the reference agent, one step per sample
    _kind, page = ViewSite([old]).get("/runs/0/samples/3.html")  # type: ignore[misc]
    assert "(1 step)" in page.decode() and "1 steps" not in page.decode()


def _workspace_responder(request: dict) -> str:
    system = request["messages"][0]["content"]
    if not any(m["role"] == "assistant" for m in request["messages"]):
        code = WRITE_TABLE if "origin_summary.csv" in system else OTHER_CHART
        return f'Thought: write it\nAction: Python(file_path="make.py"):\n```python\n{code}\n```'
    return 'Thought: done\nAction: Terminate(output="done")'


@pytest.fixture(scope="module")
def workspace_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("workspace") / "run"
    with FakeOpenAI() as server:
        server.responder = _workspace_responder
        options = AgentSettings(
            model=ModelSettings(model="fake-model", base_url=server.base_url), cache_mode="off"
        )
        outcome = run_suite(
            load_suite("workspace"), make_agent("da-agent", options), out, ids=[TABLE_TASK, CHART_TASK]
        )
    assert outcome.errors == 0
    process, url = _serve(out)
    yield url
    _stop(process)


def test_a_table_is_diffed_cell_by_cell_against_the_gold(browser, workspace_run: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page = browser.new_page()
    page.goto(f"{workspace_run}runs/0/samples/{TABLE_TASK}.html")
    diff = page.locator(".table-diff[data-file='origin_summary.csv']")
    summary = " ".join(diff.locator("h3 .meta").inner_text().split())
    assert (
        summary == "2 of 3 gold rows · 1 cell differs · missing columns: avg_weight_lbs · extra columns: note"
    )
    assert diff.locator("td.differs del").all_inner_texts() == ["32.06"]
    assert diff.locator("td.differs ins").all_inner_texts() == ["99.99"]
    assert diff.locator("tbody tr.missing td").all_inner_texts()[:2] == [
        "3",
        "USA",
    ]  # the row the agent left out
    assert diff.locator("th.missing").all_inner_texts() == ["avg_weight_lbs"]
    assert diff.locator("th.extra").all_inner_texts() == ["note"]
    # the CSV the agent left, inline
    table = page.locator("details.csv-file table.csv")
    assert table.locator("th").all_inner_texts() == WRONG_TABLE.splitlines()[0].split(",")
    assert table.locator("tbody tr").count() == 2
    assert "/tmp/" not in page.inner_text("body")  # no scorer's working paths, gone after the run
    page.close()


def test_a_chart_is_shown_beside_the_gold_chart(browser, workspace_run: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page = browser.new_page()
    page.goto(f"{workspace_run}runs/0/samples/{CHART_TASK}.html")
    pair = page.locator(".chart-diff[data-file='site_yield.png']")
    assert pair.locator("figcaption").all_inner_texts() == ["gold", "agent"]
    for kind in ("gold", "predicted"):
        image = pair.locator(f"img.{kind}")
        image.scroll_into_view_if_needed()
        image.evaluate("img => img.decode()")
        assert image.evaluate("img => img.naturalWidth") > 100, kind
    gold = pair.locator("img.gold").get_attribute("src")
    assert gold == f"../gold/{CHART_TASK}/site_yield.png"
    page.close()
