"""The official browser getters `validate_correct_url` and `html_check`: their result texts, the corrected
and compat modes, the loader's translation, and (with a desktop) two tasks made here solved on the screen
and left untouched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from browser_tasks import LINKS, PAGE_OK, PORT, page_check_task, write_task
from desktop_helpers import DESKTOP_LIMITS, needs_desktop

from daharness.agents.reference import ReferenceAgent
from daharness.core.agent import Agent
from daharness.core.registry import scorers
from daharness.core.runlog import ScoringSettings
from daharness.core.scoring import ScoringContext
from daharness.core.submission import Note, Submission
from daharness.core.task import ReferenceSolution, ScorerSpec, Task
from daharness.families.workflow import getters
from daharness.families.workflow.validate import IdleAgent
from daharness.runs.pipeline import SandboxSettings, solve_and_collect
from daharness.scoring import score_submission
from daharness.suites import load_suite

SUPERSET_TAB = "http://localhost:8088/superset/dashboard/1/?standalone=2&show_filters=0"
RUN_ID = "manual__2024-05-01T10:00:00+00:00"
AIRFLOW_TAB = (
    "http://localhost:8080/dags/workFlow_Echo/grid?dag_run_id=manual__2024-05-01T10%3A00%3A00%2B00%3A00"
    "&task_id=processing&tab=logs"
)


# ---- result texts --------------------------------------------------------------------------------------


def test_validate_correct_url_texts() -> None:
    # the address bar's text has no scheme: goto_prefix goes before it, whatever the tab's scheme
    assert getters.address_bar("https://a.b/c?d=1") == "a.b/c?d=1"
    assert getters.address_bar("http://localhost:8080/home") == "localhost:8080/home"
    assert getters.address_bar("file:///tmp/x.html") == "file:///tmp/x.html"
    text = getters.validate_correct_url(
        "standalone=2, show_filters=0\n", SUPERSET_TAB, "https://", corrected=True
    )
    assert text == "standalone=2 check succeed； show_filters=0\n check succeed；"
    # a run id's ':' and '+' are looked for as the URL's %3A and %2B
    output = f"workFlow_Echo, {RUN_ID}, processing, logs\n"
    assert "failed" not in getters.validate_correct_url(output, AIRFLOW_TAB, "https://", corrected=True)
    text = getters.validate_correct_url(
        output, AIRFLOW_TAB.replace("logs", "graph"), "https://", corrected=True
    )
    assert text.count("succeed") == 3 and text.endswith(" logs\n check failed；")
    # the prefix counts (an element with ':' never matches one: it is looked for as %3A)
    assert "failed" not in getters.validate_correct_url("https", SUPERSET_TAB, "https://", corrected=True)
    assert "failed" in getters.validate_correct_url("https", SUPERSET_TAB, "http://", corrected=True)
    assert "failed" in getters.validate_correct_url("localhost:8088", SUPERSET_TAB, "http://", corrected=True)


@pytest.mark.parametrize("output", ["", "\n", "workFlow_Echo, , processing"])
def test_an_empty_element_succeeds_only_in_compat(output: str) -> None:
    """Officially '' is in every URL: a script that prints nothing (or an empty id between two commas)
    succeeds on any tab. Corrected, an empty element fails."""
    tab = "http://localhost:8080/dags/workFlow_Echo/grid?task_id=processing"
    assert "failed" not in getters.validate_correct_url(output, tab, "https://", corrected=False)
    assert "failed" in getters.validate_correct_url(output, tab, "https://", corrected=True)


def test_a_login_page_that_names_the_wanted_page_succeeds_only_in_compat() -> None:
    """Typing the wanted address without logging in lands on the login page, whose `next=` names it:
    officially a success; corrected, a query value that is a URL or a path is not searched."""
    login = "http://localhost:8080/login/?next=http%3A%2F%2Flocalhost%3A8080%2Fdag-dependencies"
    assert "failed" not in getters.validate_correct_url(
        "dag-dependencies", login, "https://", corrected=False
    )
    assert "failed" in getters.validate_correct_url("dag-dependencies", login, "https://", corrected=True)
    path_only = "http://localhost:8088/login/?next=%2Fsuperset%2Fdashboard%2F1%2F"
    assert "failed" in getters.validate_correct_url("dashboard/1", path_only, "https://", corrected=True)
    # the page itself, and its ordinary query values, still count
    shown = "http://localhost:8080/dag-dependencies?root=&tab=x"
    assert "failed" not in getters.validate_correct_url(
        "dag-dependencies, tab=x", shown, "https://", corrected=True
    )
    assert getters.without_redirect_targets(AIRFLOW_TAB) == AIRFLOW_TAB


def _live(**changes: Any) -> dict[str, Any]:
    found = {
        "output": "http://localhost:8080/x\n", "url": "http://localhost:8080/x", "css_paths": ["a", "b"],
        "error": None, "selectors": [{"selector": "a", "matches": 1, "visible": 1},
                                     {"selector": "b", "matches": 1, "visible": 1}],
    }  # fmt: skip
    return {**found, **changes}


def test_html_check_texts() -> None:
    both = {"corrected": True}, {"corrected": False}
    for mode in both:
        assert getters.html_check(None, None, **mode) == "Link check failed"
        assert getters.html_check(_live(output=None), None, **mode) == "Link check failed"
        assert getters.html_check(_live(), "http://localhost:8080/x\n", **mode) == "Checking elements succeed"
        assert getters.html_check(_live(error="net::ERR"), "http://localhost:8080/x", **mode) == (
            "Checking elements failed"
        )
        hidden = _live(selectors=[{"selector": "a", "matches": 1, "visible": 1},
                                  {"selector": "b", "matches": 1, "visible": 0}])  # fmt: skip
        assert getters.html_check(hidden, "http://localhost:8080/x", **mode) == "Checking elements failed"
        stopped = _live(selectors=[{"selector": "a", "matches": 0, "visible": 0}])
        assert getters.html_check(stopped, "http://localhost:8080/x", **mode) == "Checking elements failed"
    # Playwright's locator is strict: two visible matches fail officially; corrected, they pass
    twice = _live(selectors=[{"selector": "a", "matches": 2, "visible": 2},
                             {"selector": "b", "matches": 1, "visible": 1}])  # fmt: skip
    assert getters.html_check(twice, "http://localhost:8080/x", corrected=False) == "Checking elements failed"
    assert getters.html_check(twice, "http://localhost:8080/x", corrected=True) == "Checking elements succeed"
    # the live run's URL must be the checks' run's, corrected; compat takes the live run alone
    assert (
        getters.html_check(_live(), "http://localhost:8080/y", corrected=True) == "Checking elements failed"
    )
    assert getters.html_check(_live(), None, corrected=True) == "Checking elements failed"
    assert getters.html_check(_live(), None, corrected=False) == "Checking elements succeed"


# ---- through the scorer ------------------------------------------------------------------------------

INCLUDE = {"kind": "rule", "value": {"include": ["succeed"], "exclude": ["failed"]}}


def _scored(result: dict[str, Any], evidence: dict[str, Any], mode: str) -> float:
    spec = {"result": result, "expected": INCLUDE}
    task = Task(id="t", suite="s", family="workflow", instructions=["x"], workdir="/home/user",
                scorers=[ScorerSpec(name="spider2v.check_include_exclude", options=spec)])  # fmt: skip
    entry = scorers.get("spider2v.check_include_exclude")
    context = ScoringContext(task, Submission(evidence=evidence), None, mode)
    return entry.fn(context, entry.parse_options(spec, "test")).value


def test_the_scorer_reads_both_getters_in_the_run_mode() -> None:
    url = {"kind": "validate_correct_url", "path": "eval.sh", "value": {"goto_prefix": "https://"}}
    tab = {"screen_states": {"active_tab_url": {"url": SUPERSET_TAB, "title": "Superset"}}}
    assert _scored(url, {**tab, "script_outputs": {"eval.sh": "standalone=2, show_filters=0\n"}}, "") == 1.0
    assert _scored(url, {**tab, "script_outputs": {"eval.sh": "standalone=1\n"}}, "corrected") == 0.0
    # the free score of an empty output: official in compat only
    empty = {**tab, "script_outputs": {"eval.sh": ""}}
    assert (_scored(url, empty, "compat"), _scored(url, empty, "corrected")) == (1.0, 0.0)
    # no tab read (no desktop, no browser) or no script output: 0 in both modes
    for mode in ("compat", "corrected"):
        assert _scored(url, {"script_outputs": {"eval.sh": ""}}, mode) == 0.0
        assert _scored(url, tab, mode) == 0.0
    page = {"kind": "html_check", "path": "eval.sh", "value": {"css_paths": ["a", "b"], "timeout": 5000.0}}
    live = {"page_checks": {"eval.sh": _live()}}
    assert (
        _scored(page, {**live, "script_outputs": {"eval.sh": "http://localhost:8080/x"}}, "corrected") == 1.0
    )
    assert _scored(page, {**live, "script_outputs": {"eval.sh": "http://evil/"}}, "corrected") == 0.0
    assert _scored(page, {**live, "script_outputs": {"eval.sh": "http://evil/"}}, "compat") == 1.0
    assert _scored(page, {"script_outputs": {"eval.sh": "http://localhost:8080/x"}}, "compat") == 0.0


def _superset(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"tabs": [], "checks": list(checks)}


def _link(matches: int, visible: int, **changes: Any) -> dict[str, Any]:
    selector = {"selector": getters.SUPERSET_HOME_LINK, "matches": matches, "visible": visible}
    return {"output": "x", "url": "x", "error": None, "selectors": [selector], **changes}


def test_superset_localhost_page_texts() -> None:
    succeed, failed = getters.SUPERSET_SUCCEED, getters.SUPERSET_FAILED
    # official: `url.startswith(target_url) and target_title in page.title().lower()`, 127.0.0.1 as localhost
    tab = {"url": "http://127.0.0.1:8088/superset/welcome/", "title": "Superset"}
    assert getters.superset_candidate(tab, "http://localhost:8088", "superset")
    assert getters.superset_candidate(tab, "http://localhost:8088/superset/welcome", "SUPERSET")
    assert not getters.superset_candidate({**tab, "title": "Login"}, "http://localhost:8088", "superset")
    assert not getters.superset_candidate(tab, "http://localhost:8080", "superset")
    for corrected in (True, False):
        assert getters.superset_localhost_page(None, corrected=corrected) == failed
        assert getters.superset_localhost_page(_superset(), corrected=corrected) == failed
        assert getters.superset_localhost_page(_superset(_link(1, 1)), corrected=corrected) == succeed
        assert getters.superset_localhost_page(_superset(_link(1, 0)), corrected=corrected) == failed
        assert (
            getters.superset_localhost_page(_superset(_link(1, 1, error="gone")), corrected=corrected)
            == failed
        )
        # the first page that shows the link succeeds
        assert (
            getters.superset_localhost_page(_superset(_link(0, 0), _link(1, 1)), corrected=corrected)
            == succeed
        )
    # `expect(locator).to_be_visible()` is strict: two matches fail officially
    assert getters.superset_localhost_page(_superset(_link(2, 2)), corrected=False) == failed
    assert getters.superset_localhost_page(_superset(_link(2, 2)), corrected=True) == succeed
    page = {"kind": "superset_localhost_page", "value": {"url": "http://localhost:8088", "title": "superset"}}
    shown = {"screen_states": {"superset_localhost_page": _superset(_link(1, 1))}}
    assert (_scored(page, shown, "compat"), _scored(page, shown, "corrected")) == (1.0, 1.0)
    assert _scored(page, {}, "corrected") == 0.0


# ---- tasks made here -------------------------------------------------------------------------------------

# the second link is there, but not shown
PAGE_HIDDEN = (
    '<html><body><a href="https://example.org/a">A</a> '
    '<a style="display:none" href="https://example.org/b">B</a></body></html>'
)


def _make_tasks(root: Path) -> None:
    url = write_task(root, "url", {"type": "validate_correct_url", "goto_prefix": "http://"},
                      "echo 'report.html, id=7'")  # fmt: skip
    (url / "solution.actions.json").write_text(json.dumps([
        {"action_type": "HOTKEY", "keys": ["ctrl", "l"]},
        {"action_type": "TYPING", "text": f"localhost:{PORT}/report.html?id=7\n"},
    ]))  # fmt: skip
    page = page_check_task(root)
    (page / "solution.sh").write_text(f"cat > ~/site/links.html <<'EOF'\n{PAGE_OK}\nEOF\n")


SUPERSET_PORT = 8766
# a stand-in of Superset's welcome page: its title and the home link the official getter looks for
WELCOME = (
    '<html><head><title>Superset</title></head><body><a href="/superset/welcome/">Home</a></body></html>'
)


def _superset_task(root: Path) -> Path:
    folder = write_task(root, "superset", {"type": "superset_localhost_page", "url": f"http://localhost:{SUPERSET_PORT}",
                         "title": "superset"}, "true")  # fmt: skip
    raw = json.loads((folder / "superset.json").read_text())
    raw["config"] = [
        json.loads(json.dumps(step).replace(str(PORT), str(SUPERSET_PORT))) for step in raw["config"]
    ]
    raw["config"].insert(1, {"type": "copyfile_from_host_to_guest", "parameters": {
        "src": "evaluation_examples/examples/chromium/superset/welcome.html",
        "dest": "/home/user/site/superset/welcome/index.html"}})  # fmt: skip
    (folder / "superset.json").write_text(json.dumps(raw))
    (folder / "welcome.html").write_text(WELCOME)
    (folder / "solution.actions.json").write_text(json.dumps([
        {"action_type": "HOTKEY", "keys": ["ctrl", "l"]},
        {"action_type": "TYPING", "text": f"localhost:{SUPERSET_PORT}/superset/welcome/\n"},
    ]))  # fmt: skip
    return folder


def test_the_loader_translates_both_getters(tmp_path: Path) -> None:
    from daharness.sandbox.desktop import desktop_problem

    _make_tasks(tmp_path)
    _superset_task(tmp_path)
    suite = load_suite(f"spider2v:{tmp_path}")
    if desktop_problem() is not None:
        assert "on a screen, and there is none here" in suite.unsupported["url"]
        assert "'superset_localhost_page' on a screen" in suite.unsupported["superset"]
        return
    tasks = {task.id: task for task in suite.tasks}
    assert tasks["superset"].desktop
    assert tasks["superset"].scorers[0].options["result"] == {
        "kind": "superset_localhost_page", "value": {"url": f"http://localhost:{SUPERSET_PORT}", "title": "superset"}}  # fmt: skip
    assert tasks["url"].desktop and tasks["page"].desktop
    assert tasks["url"].scorers[0].options["result"] == {
        "kind": "validate_correct_url", "path": "eval.sh", "value": {"goto_prefix": "http://"}}  # fmt: skip
    assert tasks["page"].scorers[0].options["result"] == {
        "kind": "html_check", "path": "eval.sh", "value": {"css_paths": LINKS, "timeout": 1000.0}}  # fmt: skip
    assert [s["dest"] for s in tasks["page"].gold.data["scripts"]] == ["eval.sh"]


def test_a_page_check_whose_timeout_is_not_a_number_is_unsupported_with_the_reason(tmp_path: Path) -> None:
    from daharness.sandbox.desktop import desktop_problem

    write_task(tmp_path, "bad", {"type": "html_check", "css_paths": LINKS, "timeout": "soon"}, "echo x")
    reason = load_suite(f"spider2v:{tmp_path}").unsupported["bad"]
    if desktop_problem() is None:
        assert reason == "html_check's timeout is not a number of milliseconds: 'soon'"
    else:
        assert "on a screen, and there is none here" in reason


def _run(task: Task, agent: Agent) -> tuple[float, list[str]]:
    submission, snapshot = solve_and_collect(
        task, agent, SandboxSettings(limits=DESKTOP_LIMITS, desktop=True)
    )
    try:
        score = score_submission(task, submission, snapshot, ScoringSettings())
    finally:
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
    notes = [
        f"{event.text} {getattr(event, 'data', '')}"
        for event in submission.trajectory
        if isinstance(event, Note)
    ]
    return score.value, [*notes, score.explanation, str(submission.evidence)[:600]]


@needs_desktop
def test_both_getters_on_the_screen(tmp_path: Path) -> None:
    """The URL task solved with the address bar (1) and untouched (0); the page task with the page its
    check opens written with both links (1), with one of them hidden (0), and not written (0)."""
    _make_tasks(tmp_path)
    tasks = {task.id: task for task in load_suite(f"spider2v:{tmp_path}").tasks}
    hidden = tasks["page"].model_copy(update={"reference": ReferenceSolution(
        language="bash", code=f"cat > ~/site/links.html <<'EOF'\n{PAGE_HIDDEN}\nEOF\n")})  # fmt: skip
    samples = [
        (tasks["url"], ReferenceAgent(), 1.0),
        (tasks["url"], IdleAgent(), 0.0),
        (tasks["page"], ReferenceAgent(), 1.0),
        (hidden, ReferenceAgent(), 0.0),
        (tasks["page"], IdleAgent(), 0.0),
    ]
    for task, agent, expected in samples:
        score, notes = _run(task, agent)
        assert score == expected, (task.id, agent.name, notes)


@needs_desktop
def test_superset_localhost_page_on_the_screen(tmp_path: Path) -> None:
    """Superset's welcome page (a stand-in served on localhost) opened in the address bar: 1; the browser
    left on another page of the same site: 0."""
    _superset_task(tmp_path)
    task = load_suite(f"spider2v:{tmp_path}").tasks[0]
    for agent, expected in ((ReferenceAgent(), 1.0), (IdleAgent(), 0.0)):
        score, notes = _run(task, agent)
        assert score == expected, (agent.name, notes)
