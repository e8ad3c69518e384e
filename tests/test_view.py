"""`daharness view`: the viewer in a real headless Chromium (Debian's chromium driven by Playwright), its
static export, and the pages' paths (no file outside a run's artifacts is served)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sample_runs import SUITE, WRONG_EVERY, add_dialogue_sample, react_run

from daharness.view.site import ViewSite

OLD_RUN = Path(__file__).parent / "fixtures" / "old_run_v01"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SAMPLES = 6
WRONG_IDS = [task.id for index, task in enumerate(SUITE.tasks[:SAMPLES]) if index % WRONG_EVERY == 0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A react run (figures, right and wrong answers, a dialogue sample) and a run from daharness 0.1."""
    folder = tmp_path_factory.mktemp("view")
    react = react_run(folder / "react", count=SAMPLES)
    add_dialogue_sample(react)
    old = folder / "old"
    shutil.copytree(OLD_RUN, old)
    return react, old


# ---- without a browser ------------------------------------------------------------------------------


def test_paths_outside_a_runs_artifacts_are_not_served(runs: tuple[Path, Path]) -> None:
    site = ViewSite(list(runs))
    sample = SUITE.tasks[0].id
    kind, body = site.get(f"/runs/0/artifacts/{sample}/chart.png")  # type: ignore[misc]
    assert kind == "image/png" and body.startswith(b"\x89PNG")
    for path in (
        f"/runs/0/artifacts/{sample}/../../run.json",
        "/runs/0/artifacts/../run.json",
        "/runs/0/artifacts/%2e%2e/samples.jsonl",
        "/runs/5/samples/1.html",
        "/runs/0/samples/nope.html",
        "/etc/passwd",
    ):
        assert site.get(path) is None, path
    kind, page = site.get("/runs/1/samples/3.html")  # type: ignore[misc]
    assert kind.startswith("text/html") and b"@sum_y[13]" in page and b"sleep" in page  # the 0.1 run


def test_a_damaged_trajectory_is_named_on_its_page(runs: tuple[Path, Path], tmp_path: Path) -> None:
    copy = tmp_path / "damaged"
    shutil.copytree(runs[1], copy)
    (copy / "trajectories" / "3.json").write_text("{not json")
    _kind, page = ViewSite([copy]).get("/runs/0/samples/3.html")  # type: ignore[misc]
    text = page.decode()
    assert "The trajectory could not be read" in text and "3.json: not a trajectory" in text
    assert "No trajectory saved" not in text and "@sum_y[13]" in text  # the rest of the page is shown


def test_export_writes_every_page_and_refuses_a_foreign_folder(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "view", *map(str, runs), "--export", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"wrote {1 + SAMPLES + 1 + 5} pages" in done.stdout
    assert (out / "runs" / "0" / "artifacts" / SUITE.tasks[0].id / "chart.png").is_file()
    assert (out / "runs" / "1" / "samples" / "5.html").read_text().count("reference solution is broken") >= 1
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    refused = subprocess.run(
        [sys.executable, "-m", "daharness", "view", str(runs[1]), "--export", str(foreign)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "holds no exported view" in refused.stderr
    for target, message in (
        (foreign / "notes.txt", "not a folder"),
        (foreign / "notes.txt" / "site", "cannot write"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "daharness", "view", str(runs[1]), "--export", str(target)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2 and f"{target}: {message}" in done.stderr, done.stderr


# ---- in Chromium ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed: run scripts/setup-browser.sh (apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')"
    )
    profile = tempfile.mkdtemp(prefix="daharness-chromium-")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def served(runs: tuple[Path, Path]) -> Iterator[str]:
    """`daharness view` serving both runs on a free port of 127.0.0.1."""
    process = subprocess.Popen(
        [sys.executable, "-m", "daharness", "view", *map(str, runs), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()  # type: ignore[union-attr]
    assert line.startswith("serving http://127.0.0.1:"), line + process.stderr.read()  # type: ignore[union-attr]
    yield line.split()[1]
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0


def _visible_ids(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all(
        "#samples tbody tr:not([hidden]) td:nth-child(2)", "cells => cells.map(c => c.textContent)"
    )


def test_the_table_filters_and_searches(browser, served: str) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto(served)
    total = SAMPLES + 1 + 5
    assert page.inner_text("#shown") == str(total) and len(_visible_ids(page)) == total
    assert (
        page.locator("section.run").count() == 2 and page.locator("section.run svg").count() >= 4
    )  # figures
    page.select_option("select[name=verdict]", "wrong")
    assert _visible_ids(page) == WRONG_IDS and page.inner_text("#shown") == str(len(WRONG_IDS))
    page.select_option("select[name=verdict]", "")
    page.select_option("select[name=errors]", "harness")
    assert _visible_ids(page) == ["5"]  # the 0.1 run's broken reference solution
    page.select_option("select[name=errors]", "")
    page.select_option("select[name=family]", "interactive")
    assert _visible_ids(page) == ["dialogue-1"]
    page.select_option("select[name=family]", "")
    page.select_option("select[name=stop_reason]", "reference")
    assert _visible_ids(page) == ["1", "2", "3", "4"]
    page.select_option("select[name=stop_reason]", "")
    page.select_option("select[name=level]", "hard")
    page.select_option("select[name=run]", "A")
    shown = page.eval_on_selector_all(
        "#samples tbody tr:not([hidden])", "rows => rows.map(r => [r.dataset.run, r.dataset.level])"
    )
    assert shown and all(row == ["A", "hard"] for row in shown)  # both filters hold, and rows remain
    page.select_option("select[name=level]", "")
    page.select_option("select[name=run]", "")
    page.fill("#search", "sub-answers right")
    assert (
        len(_visible_ids(page)) == SAMPLES + 4
    )  # every closed-form sample scored; not the dialogue nor the error
    page.fill("#search", "income")
    assert _visible_ids(page) == ["dialogue-1"]
    page.close()


def test_a_sample_page_shows_the_trajectory_and_its_figure(browser, served: str) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto(served)
    page.select_option("select[name=verdict]", "wrong")
    page.click(f"#samples tbody tr:not([hidden]) a >> text='{WRONG_IDS[0]}'")
    page.wait_for_selector("#steps")
    task = SUITE.tasks[0]
    assert task.instruction in page.inner_text("pre.request")
    kinds = page.eval_on_selector_all("#steps .step", "steps => steps.map(s => s.dataset.kind)")
    assert kinds == ["model", "action", "model"]
    assert page.inner_text("#steps .step.model pre.reply").startswith("Thought: plot the data first")
    code = page.locator("#steps .step.action .hl")
    assert (
        "plt.savefig" in code.inner_text() and code.locator("span.kn").first.inner_text() == "import"
    )  # highlighted
    # the printed shape (on a busy machine matplotlib adds a notice on stderr: its font cache is slow to build)
    assert page.inner_text("#steps .step.action pre.observation").splitlines()[0] == "(150, 5)"
    image = page.locator("#steps .step.action img.figure")
    assert image.count() == 1
    image.scroll_into_view_if_needed()
    width = image.evaluate("img => img.complete ? img.naturalWidth : 0")
    assert width > 100  # the PNG the agent saved, loaded from the run's artifacts
    assert "Score 0.000" in page.inner_text("body") and "999" in page.inner_text("table.checks")
    page.close()


def test_user_turns_and_checks_on_a_dialogue_sample(browser, served: str) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto(served + "runs/0/samples/dialogue-1.html")
    users = page.locator("#steps .step.user")
    assert users.count() == 2
    assert (
        "user simulator" in users.nth(1).inner_text()
        and "answering: Do you mean in the raw file?" in users.nth(1).inner_text()
    )
    assert page.inner_text("#steps .step.user >> nth=1 >> pre.user-text") == "Yes, the raw file."
    rows = page.eval_on_selector_all("table.checks tr", "rows => rows.slice(1).map(r => r.innerText)")
    assert [row.split("\t")[:2] for row in rows] == [["names the column", "✓"], ["gives the count", "✗"]]
    page.close()


def test_the_static_export_works_from_files(browser, runs: tuple[Path, Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "site"
    ViewSite(list(runs)).export(out)
    page = browser.new_page()
    page.goto((out / "index.html").as_uri())
    page.select_option("select[name=verdict]", "error")
    assert _visible_ids(page) == ["5"]
    page.select_option("select[name=verdict]", "")
    page.select_option("select[name=run]", "B")
    page.click("#samples tbody tr:not([hidden]) a >> text='3'")
    page.wait_for_selector("#steps")
    assert "time.sleep(3)" in page.inner_text("#steps .step.action .hl")
    assert page.inner_text("#steps .step.action pre.observation").startswith("@sum_y[13]")
    page.goto((out / "runs" / "0" / "samples" / f"{WRONG_IDS[0]}.html").as_uri())
    assert page.locator("img.figure").evaluate("img => img.naturalWidth") > 100
    page.close()
