"""An agent that wants a score without doing the work: each attack of issue 10 runs in the real bwrap
sandbox, from a hand-written trajectory replayed by the `replay` agent, and must score 0 or be reported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import latest_records, replay

from daharness.core.limits import Limits
from daharness.core.task import Task
from daharness.report.build import build_report
from daharness.runs.pipeline import SandboxSettings, blame
from daharness.runs.rundir import RunDir
from daharness.sandbox import BwrapSandbox, SandboxError
from daharness.suites import load_suite


@pytest.fixture(scope="module")
def workspace() -> dict[str, Task]:
    return {task.id: task for task in load_suite("workspace").tasks}


def gold_path(task: Task, name: str) -> str:
    return str(next(g.source for g in task.gold.files if g.name in (name, f"{name}.json")))


# ---- 1. links to gold files and to host files --------------------------------------------------------


def test_links_to_gold_and_to_root_only_files_score_zero_and_show_as_links(
    tmp_path: Path, workspace: dict[str, Task]
) -> None:
    secret = tmp_path / "root-only.txt"
    secret.write_text('{"n_women": "THE-HOST-SECRET"}')
    secret.chmod(0o600)
    ids = ["dw-clean-barley", "eda-diabetes-sex-tests", "dw-load-grunfeld", "eda-fair-affairs-religiosity"]
    steps = {}
    for task_id in ids[:3]:
        task = workspace[task_id]
        links = {name: gold_path(task, name) for name in task.gold.data["outputs"]}
        steps[task_id] = [
            (
                "python",
                {"code": f"import os\nfor name, gold in {links!r}.items():\n    os.symlink(gold, name)"},
            )
        ]
    steps[ids[3]] = [("bash", {"command": f"ln -s {secret} answer.json"})]
    run = replay(tmp_path, [workspace[i] for i in ids], steps)

    records = latest_records(run)
    for task_id in ids:
        record = records[task_id]
        assert record.status == "scored" and record.score is not None and record.score.value == 0.0, task_id
        assert {entry.kind for entry in record.skipped_files} == {"symlink"}, task_id
        kinds = [flag.kind for flag in record.suspicious]
        assert kinds.count("link_out") == len(record.skipped_files), task_id
    assert "THE-HOST-SECRET" not in (run / "samples.jsonl").read_text()
    # the artifacts show the links as links, with their targets, never followed
    link = RunDir(run).artifacts_dir("eda-fair-affairs-religiosity") / "answer.json"
    assert link.is_symlink() and os.readlink(link) == str(secret)
    barley = RunDir(run).artifacts_dir("dw-clean-barley") / "barley_clean.csv"
    assert os.readlink(barley) == gold_path(workspace["dw-clean-barley"], "barley_clean.csv")
    report = build_report(RunDir(run))
    assert report["counts"]["suspicious"] == 4
    # the viewer neither serves nor exports what a link points to
    from daharness.view.site import ViewSite

    site = ViewSite([run])
    assert site.get("/runs/0/artifacts/eda-fair-affairs-religiosity/answer.json") is None
    site.export(tmp_path / "site")
    exported = list((tmp_path / "site").rglob("*"))
    assert exported and not any(path.is_symlink() for path in exported)
    assert not any(
        "THE-HOST-SECRET" in path.read_text(errors="ignore") for path in exported if path.is_file()
    )


def test_a_folder_swapped_for_a_link_while_files_are_collected_leads_nowhere(tmp_path: Path) -> None:
    """A background process flips a folder into a link to the gold folder; collecting stops the sandbox's
    processes first and opens every path component without following links."""
    from daharness.core.task import Gold, GoldFile, ScorerSpec

    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "answer.csv").write_text("x\nGOLD-ONLY-VALUE\n")  # a value no timestamp or duration can contain
    task = Task(
        id="race", suite="attacks", family="workspace", instructions=["write out/answer.csv"],
        gold=Gold(files=[GoldFile(name="answer.csv", source=gold / "answer.csv")], data={"outputs": ["out/answer.csv"]}),
        scorers=[ScorerSpec(name="table", options={"file": "out/answer.csv", "gold": "answer.csv"})],
    )  # fmt: skip
    flip = (
        f"mkdir -p real && printf 'x\\nwrong\\n' > real/answer.csv && "
        f"(while true; do ln -sfn {gold} out; rm -f out; ln -sfn real out; done) > /dev/null 2>&1 &"
    )
    run = replay(tmp_path, [task], {"race": [("bash", {"command": flip}), ("bash", {"command": "sleep 1"})]})
    record = latest_records(run)["race"]
    assert record.score is not None and record.score.value == 0.0
    assert "GOLD-ONLY-VALUE" not in (run / "samples.jsonl").read_text()


def test_hard_links_to_host_files_cannot_be_made(tmp_path: Path, workspace: dict[str, Task]) -> None:
    task = workspace["dw-clean-barley"]
    with BwrapSandbox(task) as box:
        made = box.python("import os\nos.link('/etc/passwd', 'barley_clean.csv')")
        assert made.error is not None and made.error.name in {"OSError", "PermissionError"}


# ---- 1b. breaking the harness on purpose -------------------------------------------------------------

KERNEL = "import gc\nkernel = [o for o in gc.get_objects() if type(o).__name__ == 'Kernel'][0]\n"


def test_breaking_the_kernel_scores_zero_instead_of_an_error(
    tmp_path: Path, workspace: dict[str, Task]
) -> None:
    ids = [
        "dw-clean-barley",
        "dw-clean-seattle-weather",
        "eda-diabetes-sex-tests",
        "eda-fair-affairs-religiosity",
    ]
    steps = {
        # garbage on the reply pipe, then a kernel that cannot start again (its workspace made unusable)
        ids[0]: [("python", {"code": KERNEL + "import os\nos.chmod('.', 0)\nkernel.proto_out.write('garbage\\n'); kernel.proto_out.flush()"})],
        # a reply of the right syntax with fields of the wrong shape
        ids[1]: [("python", {"code": KERNEL + "kernel.proto_out.write('{\"error\": {\"zz\": 1}}\\n'); kernel.proto_out.flush()"})],
        # the kernel killed, then a wrong answer file
        ids[2]: [("python", {"code": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"}),
                 ("python", {"code": "open('sex_tests.json', 'w').write('{}')"})],
        # a file name that is not UTF-8 (records are JSON): collected files must still be recorded
        ids[3]: [("python", {"code": "open(b'\\xff\\xfe.json', 'w').write('x')"})],
    }  # fmt: skip
    run = replay(tmp_path, [workspace[i] for i in ids], steps)
    records = latest_records(run)
    assert {r.status for r in records.values()} == {"scored"}  # none of them is an infrastructure error
    assert all(r.score is not None and r.score.value == 0.0 for r in records.values())
    chmodded = records[ids[0]]
    assert chmodded.failure and "broke its sandbox" in chmodded.failure
    assert "agent failure" in chmodded.score.explanation  # type: ignore[union-attr]
    assert any(flag.kind == "harness_files" for flag in chmodded.suspicious)
    malformed = records[ids[1]]
    assert any(flag.kind == "kernel_tampering" for flag in malformed.suspicious)
    trajectory = RunDir(run).read_trajectory(ids[1])
    assert trajectory is not None and trajectory.steps[0].observation.restarted  # type: ignore[union-attr]
    assert records[ids[3]].artifacts == ["\\xff\\xfe.json"]  # recorded, written as its bytes
    report = build_report(RunDir(run))
    assert report["counts"]["agent_failures"] == 1 and report["counts"]["errors"] == 0
    assert report["counts"]["wrong"] == 4


def test_a_sandbox_that_no_fresh_kernel_can_replace_is_the_hosts_fault(workspace: dict[str, Task]) -> None:
    """When even a fresh sandbox of the task cannot start, the failure is the host's, not the agent's."""
    broken_host = SandboxSettings(limits=Limits(memory_mb=1))  # no Python starts in 1 MB
    original = SandboxError("the kernel exited")
    assert blame(workspace["dw-clean-barley"], broken_host, original, []) is original
    healthy = blame(workspace["dw-clean-barley"], SandboxSettings(), original, [])
    assert type(healthy).__name__ == "AgentFailure"


def test_install_metadata_naming_gold_files_is_not_readable(workspace: dict[str, Task]) -> None:
    with BwrapSandbox(workspace["dw-clean-barley"]) as box:
        listing = box.python(
            "import glob, os, site\n"
            "found = [p for s in site.getsitepackages() for p in glob.glob(s + '/daharness-*.dist-info/*')]\n"
            "print(found, os.path.exists('/opt'))"
        )
        assert listing.stdout.strip() == "[] False"


def test_every_installed_copy_of_daharness_is_hidden_whole(tmp_path: Path) -> None:
    """A regular install in any mounted site-packages (not only the one running) holds suites, labels
    and reference solutions: all of it is masked, Python files included, and so are bundled data."""
    from daharness.sandbox.hidden import masks

    site = tmp_path / "python" / "lib" / "python3.11" / "site-packages"
    for name in ("daharness/suites/s/tasks/t/gold/answer.csv", "daharness/suites/s/tasks/t/solution.py",
                 "daharness-0.1.0.dist-info/RECORD", "sklearn/datasets/_base.py",
                 "sklearn/datasets/data/wine_data.csv", "sklearn/datasets/data/__init__.py"):  # fmt: skip
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text("x")
    (site / "__editable__.daharness-0.1.0.pth").write_text("/home/someone/daharness/src")
    masked = {(str(mask.path), mask.folder) for mask in masks([], [tmp_path / "python"])}
    assert masked == {
        (str(site / "daharness"), True),
        (str(site / "daharness-0.1.0.dist-info"), True),
        (str(site / "sklearn/datasets/data"), True),
        (str(site / "__editable__.daharness-0.1.0.pth"), False),  # it names the source folder
    }


# ---- 2. forged chart captures ------------------------------------------------------------------------

FORGE = """
import json, pandas as pd
hook = open('/daharness-hooks/chart_capture.py').read()  # the capture format, read from the hook
gold = json.loads(open({gold!r}).read()) if {gold!r} else None
"""


def test_forged_chart_captures_score_zero_and_are_flagged(tmp_path: Path, workspace: dict[str, Task]) -> None:
    task = workspace["eda-cars-origin-scatter"]
    gold_capture = Path(gold_path(task, "mpg_vs_weight.png.json")).read_text()
    forged = json.dumps(json.loads(gold_capture))
    steps = {
        task.id: [
            ("python", {"code": "hook = open('/daharness-hooks/chart_capture.py').read()"}),
            # a 12-byte text file as the image and a hand-made capture beside it
            ("write_file", {"path": "mpg_vs_weight.png", "content": "not an image"}),
            ("write_file", {"path": "mpg_vs_weight.png.json", "content": forged}),
        ]
    }
    run = replay(tmp_path / "text", [task], steps)
    record = latest_records(run)[task.id]
    assert record.score is not None and record.score.value == 0.0
    assert "not an image" in record.score.explanation
    assert {flag.kind for flag in record.suspicious} == {"harness_files", "capture_like_file"}

    # a real PNG, but not written by matplotlib's savefig: no capture describes it
    pillow = "from PIL import Image\nImage.new('RGB', (800, 600)).save('mpg_vs_weight.png')"
    steps[task.id][1] = ("python", {"code": pillow})
    record = latest_records(replay(tmp_path / "pillow", [task], steps))[task.id]
    assert record.score is not None and record.score.value == 0.0
    assert "not saved with matplotlib" in record.score.explanation

    # the right chart saved, then replaced by other bytes: the capture no longer describes the image
    solved = task.reference.code  # type: ignore[union-attr]
    swap = "from PIL import Image\nImage.new('RGB', (800, 600)).save('mpg_vs_weight.png')"
    steps = {task.id: [("python", {"code": solved}), ("python", {"code": swap})]}
    record = latest_records(replay(tmp_path / "swap", [task], steps))[task.id]
    assert record.score is not None and record.score.value == 0.0
    assert "changed after matplotlib saved it" in record.score.explanation

    # the honest route still scores: the reference solution run as an agent's code
    honest = latest_records(replay(tmp_path / "honest", [task], {task.id: [("python", {"code": solved})]}))
    assert honest[task.id].score.value == 1.0 and honest[task.id].suspicious == []  # type: ignore[union-attr]


def test_a_capture_sent_by_a_child_python_counts_and_a_written_file_does_not(
    tmp_path: Path, workspace: dict[str, Task]
) -> None:
    task = workspace["eda-barley-site-bar"]
    script = task.reference.code  # type: ignore[union-attr]
    steps = {
        task.id: [
            ("write_file", {"path": "plot.py", "content": script}),
            ("bash", {"command": "python plot.py"}),
        ]
    }
    record = latest_records(replay(tmp_path, [task], steps))[task.id]
    assert record.score is not None and record.score.value == 1.0


# ---- 3. answers bundled with installed packages ------------------------------------------------------

ROW_SEARCH = Path(__file__).with_name("row_search.py")
# System documentation and locales (compressed man pages...) cannot hold a Python package's data; they
# are left out of the search only to keep it short.
NOT_SEARCHED = ["/usr/share/man", "/usr/share/doc", "/usr/share/locale", "/usr/share/i18n"]


def hidden_test_rows(task: Task) -> list[list[str]]:
    """Three test rows of an ML task as the agent sees them (features only, no id)."""
    import csv

    files = {item.path: item.source for item in task.files}
    if task.id == "ml-regress-mpg":
        wanted = files["test_ids.csv"].read_text().split()[1:4]
        with files["vehicles.csv"].open() as handle:
            rows = [row for row in csv.DictReader(handle) if row["car_id"] in wanted]
        return [[v for k, v in row.items() if k != "car_id"] for row in rows]
    test = next(source for path, source in files.items() if "test" in path and path.endswith(".csv"))
    with test.open() as handle:
        return [[v for k, v in row.items() if k != "id"] for row in list(csv.DictReader(handle))[:3]]


def test_no_readable_file_in_the_sandbox_holds_an_ml_tasks_test_rows(workspace: dict[str, Task]) -> None:
    import importlib.util
    import sys

    sys.path.insert(0, str(ROW_SEARCH.parent))
    import row_search

    ml = [
        t
        for t in workspace.values()
        if t.metadata.category == "ML" and "test_labels.csv" in {g.name for g in t.gold.files}
    ]
    rows = [row for task in ml for row in hidden_test_rows(task)]
    assert len(ml) == 6 and len(rows) == 18
    # the search can fail: on the host, the packages' bundled data sets hold these very rows
    bundled = [
        folder
        for name, part in (("sklearn", "datasets"), ("statsmodels", "datasets"), ("vega_datasets", "_data"))
        if (spec := importlib.util.find_spec(name)) is not None
        for folder in [str(Path(spec.origin).parent / part)]  # type: ignore[arg-type]
    ]
    found_on_host = {index for _, index in row_search.search(bundled, rows)}
    wine = 3 * [task.id for task in ml].index("ml-classify-wine")
    assert {
        wine,
        wine + 1,
        wine + 2,
    } <= found_on_host  # scikit-learn's wine data at least (a required package)

    limits = Limits(step_timeout_s=900, sample_timeout_s=1000, memory_mb=2048)
    with BwrapSandbox(ml[0], limits) as box:
        imports = box.python(
            "import importlib.util\nimport sklearn.datasets\n"
            "for name in ('statsmodels.api', 'vega_datasets'):\n"
            "    if importlib.util.find_spec(name.split('.')[0]):\n        importlib.import_module(name)\n"
            "from sklearn.datasets import make_classification\nprint(make_classification(n_samples=5)[0].shape)"
        )
        assert imports.stdout.strip() == "(5, 20)", imports
        assert box.python("from sklearn.datasets import load_wine\nload_wine()").error is not None
        box.write_file("row_search.py", ROW_SEARCH.read_text())
        box.write_file("needles.json", json.dumps({"rows": rows, "exclude": [box.workdir, *NOT_SEARCHED]}))
        done = box.bash("python row_search.py needles.json /", timeout=900)
        assert done.ok, done
        assert json.loads(done.stdout) == []


def test_a_suite_can_hide_more(tmp_path: Path) -> None:
    import importlib.util
    import shutil

    from daharness.core.errors import UserError
    from daharness.suites import builtin_suites

    suite = tmp_path / "suite"
    shutil.copytree(
        builtin_suites()["workspace"] / "tasks" / "dw-clean-barley", suite / "tasks" / "dw-clean-barley"
    )
    manifest = {"name": "mine", "format": "workspace", "hide": ["pandas/io/formats/templates"]}
    (suite / "suite.json").write_text(json.dumps(manifest))
    task = load_suite(f"workspace:{suite}").tasks[0]
    assert task.hidden_paths == ["pandas/io/formats/templates"]
    templates = Path(importlib.util.find_spec("pandas").origin).parent / "io" / "formats" / "templates"  # type: ignore[arg-type]
    assert any(templates.iterdir())  # on the host it holds the HTML templates
    with BwrapSandbox(task) as box:
        listing = box.python(f"import os\nprint(os.listdir({str(templates)!r}))")
        assert listing.stdout.strip() == "[]"
    (suite / "suite.json").write_text(json.dumps({**manifest, "hide": "pandas"}))
    with pytest.raises(UserError, match="'hide' must be a list"):
        load_suite(f"workspace:{suite}")


# ---- 4. outputs that break what the instruction fixes ------------------------------------------------

BREAK_WEATHER = {
    "labels not lower case": "df['weather'] = df['weather'].str.capitalize()",
    "labels padded": "df['weather'] = ' ' + df['weather'] + ' '",
    "rows not sorted by date": "df = df.iloc[::-1]",
    "wind median rounded": "df['wind'] = df['wind'].round(1)",
}


@pytest.mark.parametrize("damage", list(BREAK_WEATHER))
def test_outputs_that_break_the_instruction_score_zero_in_corrected_mode(
    tmp_path: Path, workspace: dict[str, Task], damage: str
) -> None:
    task = workspace["dw-clean-seattle-weather"]
    edit = (
        "import pandas as pd\ndf = pd.read_csv('weather_clean.csv')\n"
        f"{BREAK_WEATHER[damage]}\ndf.to_csv('weather_clean.csv', index=False)"
    )
    steps = {task.id: [("python", {"code": task.reference.code}), ("python", {"code": edit})]}  # type: ignore[union-attr]
    record = latest_records(replay(tmp_path, [task], steps))[task.id]
    assert record.score is not None and record.score.value == 0.0, record.score


def test_a_database_with_shouted_names_and_rounded_means_scores_zero(
    tmp_path: Path, workspace: dict[str, Task]
) -> None:
    task = workspace["dw-load-grunfeld"]
    edits = {
        "shouted": "update firm set firm_name = upper(firm_name)",
        "rounded": "update firm_summary set mean_investment = round(mean_investment, 1)",
    }
    for name, statement in edits.items():
        code = f"import sqlite3\nwith sqlite3.connect('grunfeld.db') as c:\n    c.execute({statement!r})"
        steps = {task.id: [("python", {"code": task.reference.code}), ("python", {"code": code})]}  # type: ignore[union-attr]
        record = latest_records(replay(tmp_path / name, [task], steps))[task.id]
        assert record.score is not None and record.score.value == 0.0, (name, record.score)


def test_a_sandbox_gives_the_capture_of_exactly_the_saved_bytes(
    workspace: dict[str, Task], tmp_path: Path
) -> None:
    """What the interactive family keeps for a plot: the image copied out within a cap, and the capture
    received for exactly its bytes; a written `<file>.json` never counts."""
    from daharness.core.backend import FileTooLarge

    with BwrapSandbox(workspace["dw-clean-barley"]) as box:
        box.python("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.savefig('p.png')")
        digest = box.copy_file_out("p.png", tmp_path / "p.png", 1 << 20)
        found = box.chart_capture_file(digest)
        assert found is not None
        capture = json.loads(found.read_text())
        assert capture["axes"][0]["series"][0]["y"] == [1.0, 2.0, 3.0]
        forged = json.dumps({**capture, "axes": []})
        box.python(
            f"open('q.png', 'wb').write(open('p.png', 'rb').read() + b'x')\nopen('q.png.json', 'w').write({forged!r})"
        )
        assert box.chart_capture_file(box.copy_file_out("q.png", tmp_path / "q.png", 1 << 20)) is None
        with pytest.raises(FileNotFoundError):
            box.copy_file_out("missing.png", tmp_path / "missing.png", 1 << 20)
        with pytest.raises(FileTooLarge):
            box.copy_file_out("p.png", tmp_path / "small.png", 1000)
        assert not (tmp_path / "small.png").exists()


@pytest.mark.parametrize(
    ("code", "flagged"),
    [
        ("urllib.request.urlopen('http://127.0.0.1:1337/json/version')", True),
        ("socket.create_connection(('localhost', 9222))", True),
        ("ws.send(json.dumps({'method': 'Target.setAutoAttach'}))", True),
        ("browser = playwright.chromium.connect_over_cdp(url)", True),
        ("chromium --remote-debugging-port=9333 about:blank", True),
        ("df.to_json('out/version.json'); print(13370, 'localhost:8080')", False),
    ],
)
def test_code_that_looks_for_a_devtools_endpoint_is_flagged(code: str, flagged: bool) -> None:
    from daharness.core.observation import Observation
    from daharness.core.submission import ActionEvent
    from daharness.runs.integrity import suspicious_actions

    step = ActionEvent(kind="python", args={"code": code}, observation=Observation(kind="python"))
    kinds = [flag.kind for flag in suspicious_actions([step], None, "/workspace")]
    assert ("browser_debugging" in kinds) == flagged, kinds
