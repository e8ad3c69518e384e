"""What the host does with an agent's files while scoring them (issue 19, items 2, 4 and 5): nothing the
agent left is unpickled or run on the host, the scoring worker is confined like a sandbox, any failure
of a scorer on the agent's output is a 0 with the reason (never an infrastructure error that the mean
would leave out), and what the harness reads of agent artifacts is capped and read outside it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import cli, latest_records
from hostile_answers import AFFAIRS, PICKLED_NPY, RESULTS_OF_100_MB
from matplotlib.figure import Figure

from daharness.agents import make_agent
from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScorerOptions, ScoringContext
from daharness.core.suite import Suite
from daharness.core.task import Gold, GoldFile, ScorerSpec, Task
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

# ---- helpers ---------------------------------------------------------------------------------------


def replay_answers(
    tmp_path: Path, tasks: list[Task], steps: dict[str, list[tuple[str, dict]]], answers: dict[str, str]
) -> Path:
    """Run hand-written trajectories and final answers with the `replay` agent, in the real sandbox,
    through the runner; the run directory."""
    source = tmp_path / "written" / "trajectories"
    source.mkdir(parents=True)
    for task in tasks:
        events = [
            {"type": "action", "kind": kind, "args": args, "observation": {"kind": kind}}
            for kind, args in steps.get(task.id, [])
        ]
        saved = {
            "id": task.id,
            "agent": "hand-written",
            "answer": answers.get(task.id, "done"),
            "steps": events,
        }
        (source / f"{task.id}.json").write_text(json.dumps(saved))
    out = tmp_path / "run"
    agent = make_agent("replay", options={"replay_from": source.parent})
    run_suite(Suite("attacks", tasks), agent, out)
    return out


def bar_chart(path: Path, heights: list[float], title: str) -> None:
    figure = Figure(figsize=(4, 3))
    axes = figure.subplots()
    axes.bar(["east", "north", "south"], heights)
    axes.set_title(title)
    figure.savefig(path)


# ---- item 2: a pickled result.npy ------------------------------------------------------------------


def dacode_plot_material(root: Path) -> Path:
    """A DA-Code folder of one chart task (the official layout): its gold image, plot.json, result.npy."""
    task_id = "plot-bar-001"
    (root / "gold" / task_id).mkdir(parents=True)
    (root / "source" / task_id).mkdir(parents=True)
    (root / "source" / task_id / "orders.csv").write_text("region,orders\neast,3\nnorth,5\nsouth,2\n")
    bar_chart(root / "gold" / task_id / "result.png", [3, 5, 2], "Orders per region")
    plot = {"type": "bar", "graph_title": "Orders per region", "figsize": [4.0, 3.0]}
    (root / "gold" / task_id / "plot.json").write_text(json.dumps(plot))
    np.save(root / "gold" / task_id / "result.npy", np.array([[3.0, 5.0, 2.0]]))
    task = {"id": task_id, "type": "Data Visualization", "hardness": "Easy", "post_process": ["plot_process"],
            "instruction": "Plot the orders per region as a bar chart titled 'Orders per region' in result.png."}  # fmt: skip
    evaluation = {
        "id": task_id, "config": {"task": "data visualization", "type": "bar", "hardness": "Easy"},
        "func": ["compare_image"], "options": [{"keys": ["figsize", "graph_title"]}],
        "result": [{"multi": True, "file": ["result.png", "dabench/plot.json", "dabench/result.npy"]}],
    }  # fmt: skip
    (root / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    (root / "eval.jsonl").write_text(json.dumps(evaluation) + "\n")
    return root


def test_a_pickled_result_npy_runs_nothing_on_the_host_and_scores_zero(tmp_path: Path) -> None:
    material = dacode_plot_material(tmp_path / "dacode")
    # a DA-Agent output folder, as `score --dacode-...` rescores it (the data decides: another image)
    marker = tmp_path / "MARKER-score"
    folder = tmp_path / "outputs" / "plot-bar-001"
    (folder / "dabench").mkdir(parents=True)
    bar_chart(folder / "result.png", [1, 1, 1], "Orders per region")
    (folder / "dabench" / "plot.json").write_text(
        (material / "gold" / "plot-bar-001" / "plot.json").read_text()
    )
    (folder / "dabench" / "result.json").write_text(json.dumps({"finished": True, "result": "result.png"}))
    subprocess.run([sys.executable, "-c", PICKLED_NPY.format(marker=marker)], cwd=folder, check=True)
    figures = tmp_path / "figures.json"
    done = subprocess.run(
        cli("score", "--dacode-tasks", str(material / "tasks.jsonl"), "--dacode-eval", str(material / "eval.jsonl"),
            "--gold", str(material / "gold"), "--outputs", str(tmp_path / "outputs"), "--workspace-mode", "compat",
            "--json", str(figures)),
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    scored = json.loads(figures.read_text())
    assert scored["scores"] == {"plot-bar-001": 0.0}
    assert "result.npy holds an object array" in scored["explanations"]["plot-bar-001"]

    # the same files left by an agent in the sandbox, scored by `daharness run` in both modes
    marker = tmp_path / "MARKER-run"
    code = PICKLED_NPY.format(marker=marker) + (
        "from matplotlib.figure import Figure\nfigure = Figure(figsize=(4, 3))\n"
        "figure.subplots().bar(['east', 'north', 'south'], [1, 1, 1])\nfigure.savefig('result.png')\n"
        f"open('dabench/plot.json', 'w').write({json.dumps(json.dumps({'type': 'bar'}))})\n"
    )
    tasks = load_suite(f"dacode:{material}").tasks
    for mode in ("compat", "corrected"):
        run = tmp_path / mode
        run.mkdir()
        source = run / "written" / "trajectories"
        source.mkdir(parents=True)
        step = {"type": "action", "kind": "python", "args": {"code": code}, "observation": {"kind": "python"}}
        saved = {"id": "plot-bar-001", "agent": "hand-written", "answer": "result.png", "steps": [step]}
        (source / "plot-bar-001.json").write_text(json.dumps(saved))
        from daharness.core.runlog import ScoringSettings

        agent = make_agent("replay", options={"replay_from": source.parent})
        run_suite(
            Suite("dacode", tasks), agent, run / "run", scoring=ScoringSettings(modes={"workspace": mode})
        )
        record = latest_records(run / "run")["plot-bar-001"]
        assert record.status == "scored" and record.score is not None and record.score.value == 0.0, mode
        assert record.score.explanation, mode
        assert "dabench/result.npy" in record.artifacts  # the file was there to be read
    assert not marker.exists()


# ---- item 2: SQL the agent wrote, run when its database is read --------------------------------------


def test_a_duckdb_view_reading_a_host_file_scores_zero(tmp_path: Path) -> None:
    """A view over a host file (here one holding exactly the gold rows) is SQL the agent wrote: reading
    the agent's database must not run it against the host's files."""
    import sqlite3

    gold = tmp_path / "gold" / "orders.db"
    gold.parent.mkdir()
    with sqlite3.connect(gold) as connection:
        connection.execute("CREATE TABLE orders (region TEXT, total INTEGER)")
        connection.executemany("INSERT INTO orders VALUES (?, ?)", [("east", 3), ("north", 5)])
    connection.close()
    host_file = tmp_path / "host-only" / "orders.csv"
    host_file.parent.mkdir()
    host_file.write_text("region,total\neast,3\nnorth,5\n")
    task = Task(
        id="view", suite="attacks", family="workspace", instructions=["load orders into orders.duckdb"],
        gold=Gold(files=[GoldFile(name="orders.db", source=gold)], data={"outputs": ["orders.duckdb"]}),
        scorers=[ScorerSpec(name="database", options={"file": "orders.duckdb", "gold": "orders.db"})],
    )  # fmt: skip
    # DuckDB checks the file when the view is made: a stand-in at the same path in the sandbox's /tmp
    code = (
        f"import duckdb, os\nos.makedirs({str(host_file.parent)!r})\n"
        f"open({str(host_file)!r}, 'w').write('region,total\\nwest,0\\n')\n"
        "connection = duckdb.connect('orders.duckdb')\n"
        f"connection.execute(\"CREATE VIEW orders AS SELECT * FROM read_csv('{host_file}')\")\n"
        f"connection.close()\nos.remove({str(host_file)!r})\n"
    )
    run = replay_answers(tmp_path, [task], {"view": [("python", {"code": code})]}, {"view": "orders.duckdb"})
    record = latest_records(run)["view"]
    assert record.status == "scored" and record.score is not None
    assert record.score.value == 0.0
    assert "disabled by configuration" in json.dumps(record.score.model_dump())


# ---- item 2: the scoring worker is confined like a sandbox -------------------------------------------


class PryOptions(ScorerOptions):
    port: int
    secret: str


@scorer("test-pries", options=PryOptions)
def pries(context: ScoringContext, options: PryOptions) -> Score:
    """A scorer that tries what a subverted one would: the network, a host file, writing its inputs."""
    seen: dict[str, Any] = {"uid": os.getuid()}
    try:
        with socket.create_connection(("127.0.0.1", options.port), timeout=3):
            seen["network"] = "connected"
    except OSError as exc:
        seen["network"] = type(exc).__name__
    try:
        seen["host_file"] = Path(options.secret).read_text()
    except OSError as exc:
        seen["host_file"] = type(exc).__name__
    own = context.output("out.txt")
    seen["own_file"] = own.read_text() if own is not None else None
    try:
        own.write_text("changed") if own is not None else None
        seen["write_input"] = "written"
    except OSError as exc:
        seen["write_input"] = type(exc).__name__
    gold = context.gold("answer.txt")
    seen["gold"] = gold.read_text()
    return Score(value=1.0, details=seen)


def test_the_scoring_worker_has_no_network_and_sees_only_its_inputs(tmp_path: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[Any] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    secret = tmp_path / "host-secret.txt"
    secret.write_text("THE-HOST-SECRET")
    secret.chmod(0o644)  # readable by anyone who can see it
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "answer.txt").write_text("the gold")
    task = Task(
        id="pry", suite="attacks", family="workspace", instructions=["write out.txt"],
        gold=Gold(files=[GoldFile(name="answer.txt", source=tmp_path / "gold" / "answer.txt")]),
        scorers=[ScorerSpec(name="test-pries", options={"port": listener.getsockname()[1], "secret": str(secret)})],
    )  # fmt: skip
    run = replay_answers(tmp_path, [task], {"pry": [("bash", {"command": "echo mine > out.txt"})]}, {})
    listener.close()
    record = latest_records(run)["pry"]
    assert record.status == "scored" and record.score is not None, record.error
    seen = record.score.details
    assert seen["own_file"] == "mine\n" and seen["gold"] == "the gold"  # it did read its inputs
    assert seen["network"] in ("OSError", "ConnectionRefusedError") and not accepted  # no loopback either
    assert seen["host_file"] == "FileNotFoundError"  # the host's files are not there at all
    assert seen["write_input"] in ("OSError", "PermissionError")  # its inputs are read-only
    if os.getuid() == 0:
        assert seen["uid"] != 0  # a sandbox user of its own, as the sandbox
    assert "THE-HOST-SECRET" not in (run / "samples.jsonl").read_text()


# ---- item 4: every scorer on hostile outputs ---------------------------------------------------------

HOSTILE: dict[str, bytes | None] = {
    "deep": b"[" * 100_000 + b"]" * 100_000,  # past any recursion limit
    "huge": b'{"a": "' + b"x" * (24 << 20) + b'"}',  # 24 MB, under the scorers' file cap
    "binary": bytes(range(128, 256)) * 4096 + b"\0" * 1024,  # not UTF-8, NUL bytes
    "wrong type": b"[1, 2, 3]",  # a list where an object (or a table, a notebook...) is expected
    "directory": None,  # a folder where a file is expected
}
# the same as answers and check-script outputs (text: the binary kind as the odd code points it decodes to)
HOSTILE_TEXT = {
    kind: (data or b"[1, 2, 3]").decode("utf-8", "surrogateescape") for kind, data in HOSTILE.items()
}
BUILT_IN = ("workspace", "closed-form", "interactive", "workflow")
WRITTEN_HERE = {  # scorers no built-in task uses: a result file against a gold file (or a rule)
    "spider2v.check_file_existence": {"result": {"kind": "file", "path": "Desktop/out.txt"}},
    "spider2v.compare_ipynb_files": {"result": {"kind": "file", "path": "Desktop/out.txt"}, "expected": {"kind": "gold", "path": "gold.txt"}},
    "spider2v.compare_json_file": {"result": {"kind": "file", "path": "Desktop/out.txt"}, "expected": {"kind": "gold", "path": "gold.txt"}},
    "spider2v.compare_text_file": {"result": {"kind": "file", "path": "Desktop/out.txt"}, "expected": {"kind": "gold", "path": "gold.txt"}},
    "spider2v.diff_text_file": {"result": {"kind": "file", "path": "Desktop/out.txt"}, "expected": {"kind": "gold", "path": "gold.txt"}},
    "spider2v.exact_match": {"result": {"kind": "script_output", "path": "eval.sh"}, "expected": {"kind": "rule", "value": {"expected": "42"}}},
    "spider2v.compare_jupyterlab_images": {"result": {"kind": "file", "path": "Desktop/out.png"}, "expected": {"kind": "gold", "path": "gold.png"}},
    "spider2v.is_expected_url_pattern_match": {"result": {"kind": "file", "path": "Desktop/out.txt"}, "expected": {"kind": "rule", "value": {"expected": ["^http://localhost:1036/lab"]}}},
    "spider2v.infeasible": {},  # only the desktop agent's last action counts: FAIL is never the agent's files
    "spider2v.is_not_in_list": {"result": {"kind": "script_output", "path": "eval.sh"}, "expected": {"kind": "rule", "value": {"exclude": ["customer_orders"]}}},
    "spider2v.literal_match": {"result": {"kind": "script_output", "path": "eval.sh"}, "expected": {"kind": "rule", "value": "42"}},
    "spider2v.check_snowflake_log_message": {"result": {"kind": "script_output", "path": "eval.sh"}, "expected": {"kind": "rule", "value": {"severity": "INFO", "message": "done"}}},
    "tapilot_choice": {"answer": "B", "choices": ["one", "two", "three"]},
    "tapilot_code": {"result_types": ["dataframe", "plot"]},
}  # fmt: skip


def _registered_scorers() -> list[str]:
    import daharness.scoring  # noqa: F401  (the built-in scorers)
    from daharness.core.registry import scorers

    return sorted(name for name, entry in scorers.items() if entry.fn.__module__.startswith("daharness."))


def _task_for(name: str, tmp_path: Path) -> Task:
    """A task scored by `name` alone: the first built-in task using it, else one written here."""
    if name in WRITTEN_HERE:
        from PIL import Image

        (tmp_path / "gold.txt").write_text('{"n": 42}\n')
        Image.new("RGB", (8, 6), (10, 200, 30)).save(tmp_path / "gold.png")
        gold = [
            GoldFile(name=path.name, source=path) for path in (tmp_path / "gold.txt", tmp_path / "gold.png")
        ]
        return Task(
            id=name, suite="hostile", family="workflow", instructions=["q"], workdir="/home/user",
            gold=Gold(files=gold),
            scorers=[ScorerSpec(name=name, options=WRITTEN_HERE[name])],
        )  # fmt: skip
    for suite in BUILT_IN:
        for task in load_suite(suite).tasks:
            for spec in task.scorers:
                if spec.name == name:
                    return task.model_copy(update={"scorers": [spec]})
    raise AssertionError(f"no task to try scorer {name} on: add one to WRITTEN_HERE")


def _agent_paths(task: Task) -> tuple[set[str], set[str]]:
    """The workspace files and check scripts whose output the task's scorer reads."""
    files, scripts = set(task.gold.data.get("outputs") or []), set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("kind") == "file" and value.get("path"):
                files.add(value["path"])
            elif value.get("kind") == "script_output" and value.get("path"):
                scripts.add(value["path"])
            elif isinstance(value.get("file"), str):
                files.add(value["file"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk([spec.options for spec in task.scorers])
    if any(spec.name == "chart" for spec in task.scorers):  # DA-Agent's files and a capture beside it
        files |= {"dabench/plot.json", "dabench/result.npy", *(f"{name}.json" for name in list(files))}
    return files, scripts


def _interactive_evidence(task: Task, folder: Path, content: bytes | None) -> dict[str, Any]:
    """A right reference record, and the agent's results file holding `content` (a folder for None)."""
    from daharness.families.interactive.probe import encode

    intents = task.scorers[0].options["intents"]
    reference = folder / "reference.json"
    reference.write_text(
        json.dumps({"results": [{"type": i["type"], "value": encode(0.25)} for i in intents]})
    )
    agent = folder / "results.json"
    if content is None:
        agent.mkdir()
        (agent / "x").write_text("x")
    else:
        agent.write_bytes(content)
    raw = {"error": None, "plots": []}
    return {"code": "", "reference": {**raw, "file": reference}, "agent": {**raw, "file": agent}}


@pytest.mark.parametrize("name", _registered_scorers())
def test_every_scorer_scores_hostile_outputs_zero_with_the_reason(name: str, tmp_path: Path) -> None:
    """Deep nesting, a huge file, binary bytes, a value of the wrong type and a folder in place of a
    file, as the agent's files, answer, check-script output and interactive results, through the real
    scoring path (the confined worker where there are files): each is a scored 0 with a reason."""
    from daharness.core.limits import Limits
    from daharness.core.runlog import ScoringSettings
    from daharness.core.submission import Submission
    from daharness.runs.bounded_scoring import score_within_limits
    from daharness.sandbox.workspace import folder_snapshot

    task = _task_for(name, tmp_path)
    files, scripts = _agent_paths(task)
    for kind, content in HOSTILE.items():
        root = tmp_path / kind.replace(" ", "-") / "files"
        root.mkdir(parents=True)
        for path in files:
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if content is None:
                target.mkdir()
                (target / "x").write_text("x")
            else:
                target.write_bytes(content)
        evidence: dict[str, Any] = {"script_outputs": dict.fromkeys(scripts, HOSTILE_TEXT[kind])}
        if name == "interactive_code":
            evidence["interactive"] = _interactive_evidence(task, root.parent, content)
        if name == "tapilot_code":  # every step ran; what eval_metrics printed is the agent's to shape
            ran = {"ok": True, "timed_out": False, "stdout": "", "stderr": ""}
            evidence["tapilot"] = {"ref": ran, "pred": ran, "eval": {**ran, "stdout": HOSTILE_TEXT[kind]},
                                   "code": HOSTILE_TEXT[kind]}  # fmt: skip
        collected = folder_snapshot(root)
        snapshot = folder_snapshot(root, tuple(sorted(collected.files)))
        submission = Submission(answers=[HOSTILE_TEXT[kind]], evidence=evidence)
        score = score_within_limits(task, submission, snapshot, ScoringSettings(), Limits(score_seconds=120))
        exists = name == "spider2v.check_file_existence" and content is not None
        assert score.value == (1.0 if exists else 0.0), (kind, score.explanation)  # a file is a file
        assert score.explanation.strip(), kind
        json.dumps(score.model_dump(mode="json"))  # recordable as it is


def dacode_text_material(root: Path, ids: list[str]) -> Path:
    """DA-Code text tasks (the official layout), all expecting the same JSON answer."""
    tasks, evaluations = [], []
    for task_id in ids:
        (root / "source" / task_id).mkdir(parents=True)
        (root / "source" / task_id / "data.csv").write_text("country,share\nMonaco,1\n")
        tasks.append({"id": task_id, "type": "Data Insight", "hardness": "Medium", "post_process": [],
                      "instruction": 'Which country? Answer {"country": [...]}.'})  # fmt: skip
        evaluations.append({"id": task_id, "config": {"task": "data insight", "type": "text", "hardness": "Medium"},
                            "func": ["compare_text"], "result": [{"number": [{"country": ["Monaco"]}]}], "options": [{}]})  # fmt: skip
    (root / "gold").mkdir()
    (root / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in tasks))
    (root / "eval.jsonl").write_text("".join(json.dumps(row) + "\n" for row in evaluations))
    return root


def test_one_right_and_one_deeply_nested_answer_score_fifty_percent(tmp_path: Path) -> None:
    """Before: the nested answer's score could not be recorded, the sample became an error that the
    mean left out, and the headline read 100%."""
    from daharness.report.build import build_report
    from daharness.runs.rundir import RunDir

    material = dacode_text_material(tmp_path / "dacode", ["di-text-001", "di-text-002"])
    answers = {"di-text-001": json.dumps({"country": ["Monaco"]}), "di-text-002": "[" * 950 + "]" * 950}
    run = replay_answers(tmp_path, load_suite(f"dacode:{material}").tasks, {}, answers)
    records = latest_records(run)
    assert [records[i].status for i in answers] == ["scored", "scored"]
    assert records["di-text-001"].score.value == 1.0  # type: ignore[union-attr]
    nested = records["di-text-002"].score
    assert nested is not None and nested.value == 0.0 and "nested too deeply" in nested.explanation
    report = build_report(RunDir(run))
    assert report["counts"]["errors"] == 0 and report["counts"]["correct"] == 1
    assert report["mean_score"] == 0.5


# ---- item 5: agent artifacts are capped, read outside the harness, and not kept ------------------------

HARNESS = """
import json, resource, sys
from pathlib import Path
from daharness.agents import make_agent
from daharness.core.suite import Suite
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

source, out = Path(sys.argv[1]), Path(sys.argv[2])
tasks = [task for task in load_suite("interactive").tasks if task.id == "affairs-01"]
run_suite(Suite("interactive", tasks), make_agent("replay", options={"replay_from": source}), out)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)  # MB, this process alone
"""


def _harness_run(folder: Path, code: str) -> tuple[int, Any]:
    """`daharness run` of affairs-01 answered with `code`, in a child: its own peak RSS (MB), the record."""
    (folder / "written" / "trajectories").mkdir(parents=True)
    saved = {"id": "affairs-01", "agent": "hand-written", "answer": f"```python\n{code}```", "steps": []}
    (folder / "written" / "trajectories" / "affairs-01.json").write_text(json.dumps(saved))
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, str(folder / "written"), str(folder / "run")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout.split()[-1]), latest_records(folder / "run")["affairs-01"]


def test_a_100_mb_results_file_scores_zero_and_never_enters_the_harness(tmp_path: Path) -> None:
    """Before: the same score (1.0), and the harness grew from 214 MB to 562 MB (its own peak RSS)."""
    plain_peak, plain = _harness_run(tmp_path / "plain", AFFAIRS)
    padded_peak, padded = _harness_run(tmp_path / "padded", RESULTS_OF_100_MB)
    assert plain.score.value == 1.0
    assert padded.status == "scored" and padded.score.value == 0.0
    assert "more than the 32 MB read of it" in padded.score.explanation
    assert padded_peak < plain_peak + 64, (plain_peak, padded_peak)


def test_nothing_of_the_agents_results_outlives_its_sample(tmp_path: Path) -> None:
    from daharness.families.interactive import run as interactive_run
    from daharness.sandbox.scratch import process_scratch

    task = next(task for task in load_suite("interactive").tasks if task.id == "affairs-01")
    wrong = AFFAIRS.replace('affairs["had_affair"].mean()', "0.3141592653")
    run = replay_answers(tmp_path, [task], {}, {"affairs-01": f"```python\n{wrong}```"})
    record = latest_records(run)["affairs-01"]
    assert record.score is not None and record.score.value == 0.0 and "0.314159" in record.score.explanation
    kept = [*process_scratch().rglob("*"), *interactive_run._cache_root().rglob("*")]
    assert not [path for path in kept if path.is_file() and b"0.3141592653" in path.read_bytes()]
    assert "0.3141592653" not in json.dumps(interactive_run._cache, default=str)


def test_a_reply_the_agent_writes_on_the_kernels_pipe_is_read_within_a_bound(tmp_path: Path) -> None:
    """Chart captures reach the harness in the kernel's replies, on a pipe the agent's code can write
    to: a 200 MB line is not read whole (before: all of it, into the harness's memory)."""
    import resource

    from daharness.sandbox import BwrapSandbox
    from daharness.sandbox.kernel_client import MAX_REPLY_BYTES

    (tmp_path / "data.csv").write_text("a\n1\n")
    task = Task(id="pipe", suite="attacks", family="workspace", instructions=["x"])
    kernel = "import gc\nkernel = [o for o in gc.get_objects() if type(o).__name__ == 'Kernel'][0]\n"
    with BwrapSandbox(task) as box:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
        flood = box.python(kernel + "kernel.proto_out.write('x' * (200 << 20)); kernel.proto_out.flush()")
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10) - before
        assert flood.restarted and flood.error is not None
        assert f"larger than {MAX_REPLY_BYTES >> 20} MB" in flood.error.value
        assert grown < 2 * (MAX_REPLY_BYTES >> 20) + 64, grown  # never the whole 200 MB line and its copies
        assert box.python("print(6 * 7)").stdout == "42\n"  # a fresh kernel took over


def test_a_long_answer_is_scored_within_the_time_limit(tmp_path: Path) -> None:
    """The official DABench pattern takes time growing with the square of an answer that opens many
    `@name[` and closes none (16,000 of them: 10 s); a long answer is scored in the worker, within its
    limits, never in the harness without one."""
    from helpers import closed_task

    from daharness.core.limits import Limits
    from daharness.core.runlog import ScoringSettings
    from daharness.core.submission import Submission
    from daharness.runs.bounded_scoring import score_within_limits

    task = closed_task([("n", "1")])
    strict = ScoringSettings(modes={"closed-form": "strict"})
    score = score_within_limits(
        task, Submission(answers=["@n[" * 100_000]), None, strict, Limits(score_seconds=5)
    )
    assert score.value == 0.0 and "took longer than 5 s" in score.explanation
    assert score_within_limits(task, Submission(answers=["@n[1]"]), None, strict, Limits()).value == 1.0
