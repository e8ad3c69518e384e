"""The paper's soft metric on the official files (Appendix H.5): CSE's two similarities come from a real
OpenAI-compatible embeddings endpoint on 127.0.0.1 with vectors chosen so that each cosine is known, and
AccSE / AccSER per entry and in the report equal values worked out by hand."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI

from daharness.core.errors import UserError
from daharness.core.record import SampleRecord
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.families.interactive.cse import acc_se
from daharness.families.interactive.family import InteractiveFamily
from daharness.report.figures import DrawnFigures
from daharness.report.html import figures_html
from daharness.scoring import score_submission
from daharness.suites import load_suite

from .tapilot_release import _write, all_files

PASSING, CLOSE, PLAIN = "good = 1\n", "good = 2\n", "x = 1\n"  # the replies' code


def _unit(cos: float) -> list[float]:
    return [cos, math.sqrt(1 - cos * cos)]  # against the reference's [1, 0], the cosine is `cos`


# reply code -> (its CodeT5+ vector, its Ada vector); every reference code embeds as [1, 0]
VECTORS = {
    PASSING: ([1.0, 0.0], [0.0, 1.0]),
    CLOSE: (_unit(0.9), _unit(0.95)),
    PLAIN: (_unit(0.8), _unit(0.95)),
}


@pytest.mark.parametrize(
    ("passed", "s1", "s2", "expected"),
    [(True, 0.0, 0.0, 1.0), (False, 0.86, 0.91, 0.5), (False, 0.85, 0.91, 0.25), (False, 0.9, 0.9, 0.25),
     (False, 0.5, 0.95, 0.25), (False, 0.85, 0.9, 0.0)],
)  # fmt: skip
def test_acc_se_follows_equation_4(passed: bool, s1: float, s2: float, expected: float) -> None:
    assert acc_se(passed, s1, s2) == expected


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tapilot-cse")
    resource = folder / "data" / "resource"
    resource.mkdir(parents=True)
    from .tapilot_release import LIBRARY_RECORD, RESOURCE

    shutil.copytree(RESOURCE, resource, dirs_exist_ok=True)  # links out of a release are refused
    files = all_files()
    _write(folder / "data" / "dialogue_data" / "normal.jsonl", files["normal"][:3])
    _write(folder / "data" / "dialogue_data" / "private.jsonl", [LIBRARY_RECORD, files["private"][0]])
    return folder


def _evidence(code: str, output: str) -> dict[str, Any]:
    ran = {"ok": True, "timed_out": False, "stdout": "", "stderr": ""}
    return {"code": code, "ref": ran, "pred": ran, "eval": {**ran, "stdout": output}}


def test_accse_per_entry_and_in_the_report(release: Path) -> None:
    with FakeOpenAI() as server:
        server.embedder = lambda model, text: VECTORS[text][model == "ada"] if text in VECTORS else [1.0, 0.0]
        suite = load_suite(f"tapilot:{release}", cse_url=server.base_url, cse_models="codet5p,ada")
        tasks = {task.id: task for task in suite.tasks}
        replies = {"normal-1": (PASSING, "True"), "normal-2": (CLOSE, "False"), "private-1": (PLAIN, "False")}
        records = []
        for task_id, (code, output) in replies.items():
            submission = Submission(answers=[code], evidence={"tapilot": _evidence(code, output)})
            score = score_submission(tasks[task_id], submission, None, ScoringSettings())
            records.append(SampleRecord(id=task_id, status="scored", agent="a", score=score, started_at="",
                                        duration_s=0.0, tags=tasks[task_id].metadata.tags,
                                        category=tasks[task_id].metadata.category))  # fmt: skip
        models = [request["model"] for request in server.embedding_requests]
    assert models == ["codet5p", "ada"] * 3  # both models, once per entry, reference and reply together
    cse = {r.id: r.score.details["cse"] for r in records}  # type: ignore[union-attr]
    assert cse == {
        "normal-1": {"s1": 1.0, "s2": 0.0, "accse": 1.0, "accser": 1.0},  # it passes: 1 whatever S1, S2
        "normal-2": {"s1": 0.9, "s2": 0.95, "accse": 0.5, "accser": 0.5},  # both above their thresholds
        "private-1": {"s1": 0.8, "s2": 0.95, "accse": 0.25, "accser": 0.0},  # one; no library call: recall 0
    }
    drawn = InteractiveFamily().figures(records)
    assert drawn is not None
    assert drawn.data["release"]["cse"] == {
        "accse": round((1 + 0.5 + 0.25) / 3, 4), "accser": 0.5, "s1": 0.9, "s2": round(1.9 / 3, 4),
        "n": 3, "failed": 0,
    }  # fmt: skip
    html = figures_html(DrawnFigures.of(drawn, "interactive"))
    assert "AccSE (CSE)" in html and "58.3%" in html


def test_cse_needs_both_models(release: Path) -> None:
    with pytest.raises(UserError, match="--tapilot-cse-models CODET5P,ADA"):
        load_suite(f"tapilot:{release}", cse_url="http://127.0.0.1:9/v1", cse_models="codet5p")
    assert "cse" not in load_suite(f"tapilot:{release}").tasks[0].scorers[0].options
