"""Host-side scoring of what the agent left behind runs within limits: oversized files are not read,
a scorer that runs out of memory or time on them scores 0 with the reason, and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import records_of

from daharness.agents import make_agent
from daharness.core.limits import Limits
from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.runs.pipeline import SandboxSettings
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

WIDE_CSV = (
    "import csv\nwith open('out.csv', 'w', newline='') as handle:\n    rows = csv.writer(handle)\n"
    "    rows.writerow(['c%d' % i for i in range(20)])\n    rows.writerows([[1.2345] * 20] * {rows})\n"
)


@scorer("test-reads-everything")
def reads_everything(context: ScoringContext, options: object) -> Score:
    """Reads out.csv into memory many times over (a scorer that is careless with a big output)."""
    path = context.files.path("out.csv") if context.files else None
    if path is None:
        return Score(value=0.0, explanation="no out.csv")
    copies = [path.read_bytes() * 8 for _ in range(8)]
    return Score(value=1.0, explanation=f"read {sum(map(len, copies))} bytes")


@scorer("test-never-ends")
def never_ends(context: ScoringContext, options: object) -> Score:
    """Loops forever (a scorer stuck on a pathological output)."""
    while True:
        pass


def _suite(root: Path, tasks: dict[str, tuple[str, str]]) -> str:
    """A workspace suite of tasks named after their scorer, each solved by writing out.csv."""
    root.mkdir()
    (root / "suite.json").write_text(json.dumps({"name": "bounded", "format": "workspace"}))
    for task_id, (scorer_name, solution) in tasks.items():
        folder = root / "tasks" / task_id
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(solution)
        spec = {"id": task_id, "instruction": "write out.csv", "scorers": [{"name": scorer_name}]}
        (folder / "task.json").write_text(json.dumps(spec))
    return f"workspace:{root}"


def test_scoring_of_agent_files_is_bounded_in_size_memory_and_time(tmp_path: Path) -> None:
    suite = _suite(
        tmp_path / "suite",
        {
            "oversized": ("test-reads-everything", WIDE_CSV.format(rows=40_000)),  # 5 MB
            "hungry": ("test-reads-everything", WIDE_CSV.format(rows=20_000)),  # 2 MB, x64 in memory
            "endless": ("test-never-ends", WIDE_CSV.format(rows=10)),
            "fine": ("test-reads-everything", WIDE_CSV.format(rows=10)),
        },
    )
    limits = Limits(score_file_mb=3, score_memory_mb=64, score_seconds=5)
    out = tmp_path / "run"
    outcome = run_suite(
        load_suite(suite), make_agent("reference"), out, sandbox=SandboxSettings(limits=limits)
    )
    assert outcome.errors == 0
    scores = {r["id"]: r["score"] for r in records_of(out)}
    assert scores["oversized"]["value"] == 0.0
    assert scores["oversized"]["explanation"].startswith(
        "not read by the scorers, larger than the 3 MB cap: out.csv (5 MB); no out.csv"
    )
    assert scores["oversized"]["details"]["withheld_files"] == ["out.csv"]
    assert scores["hungry"] == {**scores["hungry"], "value": 0.0}
    assert scores["hungry"]["explanation"].startswith("scoring stopped: it needed more than 64 MB of memory")
    assert "largest agent file: out.csv" in scores["hungry"]["explanation"]
    assert scores["endless"]["value"] == 0.0
    assert scores["endless"]["explanation"].startswith("scoring stopped: it took longer than 5 s")
    assert scores["fine"]["value"] == 1.0 and scores["fine"]["explanation"].startswith("read ")


def test_only_families_that_read_no_file_are_scored_in_the_harness_process() -> None:
    from helpers import closed_task

    from daharness.runs.bounded_scoring import _reads_files

    workspace = load_suite("workspace").tasks[0]
    unknown = closed_task([("n", "1")]).model_copy(update={"family": "from-a-plugin-not-installed"})
    assert not _reads_files(closed_task([("n", "1")]))  # @name[value] answers only
    assert _reads_files(workspace) and _reads_files(unknown)  # files, or nothing known: bounded


def test_a_worker_unpickles_daharness_objects_and_refuses_a_job_that_names_anything_else(
    tmp_path: Path,
) -> None:
    import io
    import os
    import pickle
    import struct

    import pytest

    from daharness.core.runlog import ScoringSettings
    from daharness.runs.score_worker import _receive

    def framed(data: bytes) -> io.BytesIO:
        return io.BytesIO(struct.pack("!Q", len(data)) + data)

    task = load_suite("closed-form").tasks[0]
    job = ([str(tmp_path)], "m:f", [], (task, ScoringSettings(modes={"closed-form": "strict"})), 1, 2)
    assert _receive(framed(pickle.dumps(job))) == job

    class Forged:  # what a pickle that runs a command on loading looks like
        def __reduce__(self) -> tuple:
            return (os.system, (f"touch {tmp_path / 'ran'}",))

    with pytest.raises(pickle.UnpicklingError, match=r"may not name posix\.system"):
        _receive(framed(pickle.dumps(Forged())))
    assert not (tmp_path / "ran").exists()


def test_staging_a_job_leaves_the_originals_as_they_were(tmp_path: Path) -> None:
    """Two rescorings of one outputs folder at once: the staging of one must not make the other leave a
    file out as a hard link to outside the tree (it linked the files; CI caught scores of 0)."""
    from daharness.core.submission import Submission
    from daharness.core.task import GoldFile, Task
    from daharness.runs.scoring_inputs import stage
    from daharness.sandbox.workspace import folder_snapshot

    outputs = tmp_path / "outputs"
    (outputs / "dabench").mkdir(parents=True)
    (outputs / "dabench" / "result.json").write_text('{"result": 1}')
    (tmp_path / "gold.csv").write_text("a\n1\n")
    task = Task(
        id="t", suite="s", family="workspace", instructions=["x"],
        gold={"files": [GoldFile(name="gold.csv", source=tmp_path / "gold.csv")]},
    )  # fmt: skip
    before = folder_snapshot(outputs)
    assert before.files == {"dabench/result.json"}
    staged_task, _, staged = stage(task, Submission(), before, tmp_path / "staged", "/daharness-scoring/job")
    assert folder_snapshot(outputs).files == before.files  # still there for a second scorer
    assert (outputs / "dabench" / "result.json").stat().st_nlink == 1
    assert (tmp_path / "gold.csv").stat().st_nlink == 1
    assert staged is not None and staged.files == before.files
    assert (tmp_path / "staged" / "files" / "dabench" / "result.json").read_text() == '{"result": 1}'
    assert str(staged_task.gold.files[0].source).startswith("/daharness-scoring/job/gold/")
