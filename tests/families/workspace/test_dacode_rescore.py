"""compat equals DA-Code's official evaluator on real DA-Code outputs (../shared/dacode-public).

The four output sets (gold / shuffled / scaled / missing) are built by the material's own
make_outputs.py; official_scores.json holds the official evaluator's per-task scores on them
(yiyihum/da-code at b211daf). corrected must give every gold output 1, except the gold defects that
the workspace family's README lists.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import shared_folder

from daharness.families.workspace.rescore import rescore_dacode

MATERIAL = shared_folder() / "dacode-public"
EXPERIMENTS = ("gold", "shuffled", "scaled", "missing")
# Gold outputs that a correct evaluator cannot score 1 (the workspace family's README, "Unsupported").
GOLD_DEFECTS = {
    "ml-cluster-010": "the gold clustering has a single cluster; silhouette is undefined",
}

pytestmark = pytest.mark.skipif(
    not (MATERIAL / "official_scores.json").is_file(),
    reason=f"DA-Code material not found at {MATERIAL} (set DAHARNESS_SHARED to the shared folder)",
)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dacode-outputs")
    subprocess.run(
        [sys.executable, str(MATERIAL / "make_outputs.py"), str(root), *EXPERIMENTS],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return root


@pytest.fixture(scope="module")
def official() -> dict[str, dict[str, float]]:
    return json.loads((MATERIAL / "official_scores.json").read_text())


def rescore(outputs: Path, experiment: str, mode: str) -> dict[str, float]:
    figures, _ = rescore_dacode(
        MATERIAL / "tasks.jsonl", MATERIAL / "eval.jsonl", gold_dir=MATERIAL / "gold",
        outputs_dir=outputs / experiment, source_dir=None, mode=mode,
    )  # fmt: skip
    return figures["scores"]


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_compat_gives_every_official_score(outputs: Path, official: dict, experiment: str) -> None:
    scores = rescore(outputs, experiment, "compat")
    assert set(scores) == set(official[experiment])
    mismatches = {
        task: (scores[task], expected)
        for task, expected in official[experiment].items()
        if abs(scores[task] - expected) > 1e-6
    }
    assert mismatches == {}


def test_the_command_line_writes_unrounded_official_scores(outputs: Path, official: dict) -> None:
    target = outputs / "scaled-compat.json"
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--dacode-tasks", str(MATERIAL / "tasks.jsonl"),
         "--dacode-eval", str(MATERIAL / "eval.jsonl"), "--gold", str(MATERIAL / "gold"),
         "--outputs", str(outputs / "scaled"), "--workspace-mode", "compat", "--json", str(target)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    figures = json.loads(target.read_text())
    assert figures["scores"]["dm-csv-050"] == pytest.approx(1 / 3, abs=1e-12)  # not rounded to 0.3333
    assert figures["scores"]["ml-cluster-009"] == pytest.approx(
        official["scaled"]["ml-cluster-009"], abs=1e-9
    )
    assert "gold image missing" in figures["explanations"]["plot-line-015"]


def test_corrected_scores_gold_outputs_one_except_gold_defects(outputs: Path) -> None:
    scores = rescore(outputs, "gold", "corrected")
    below_one = {task for task, value in scores.items() if value < 1.0}
    assert below_one == set(GOLD_DEFECTS)
    assert scores["plot-line-015"] == 1.0  # scored from plot.json and result.npy; the image is not needed
    assert scores["ml-competition-003"] == 1.0  # a perfect log loss is the best, not the worst


def test_broken_outputs_score_zero_with_the_reason(tmp_path: Path, outputs: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(outputs / "gold", broken)
    (broken / "dm-csv-001" / "dabench" / "result.json").write_text("{not json", encoding="utf-8")
    (broken / "di-text-001" / "dabench" / "result.json").write_text('{"finished": true}', encoding="utf-8")
    (broken / "plot-bar-007" / "dabench" / "plot.json").write_text("[1, 2", encoding="utf-8")
    (broken / "plot-bar-007" / "result.png").unlink()
    unfinished = json.loads((broken / "dm-csv-043" / "dabench" / "result.json").read_text())
    (broken / "dm-csv-043" / "dabench" / "result.json").write_text(
        json.dumps({**unfinished, "finished": False})
    )
    shutil.rmtree(broken / "data-sa-001")
    # only the damaged tasks are scored (the others are what test_compat_gives_every_official_score scores)
    damaged = {"dm-csv-001", "di-text-001", "plot-bar-007", "dm-csv-043", "data-sa-001"}
    for name in ("tasks.jsonl", "eval.jsonl"):
        lines = (MATERIAL / name).read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line.strip() and json.loads(line)["id"] in damaged]
        assert len(kept) == len(damaged), name
        (tmp_path / name).write_text("\n".join(kept) + "\n", encoding="utf-8")
    for mode in ("compat", "corrected"):
        figures, _ = rescore_dacode(
            tmp_path / "tasks.jsonl", tmp_path / "eval.jsonl", gold_dir=MATERIAL / "gold",
            outputs_dir=broken, source_dir=None, mode=mode,
        )  # fmt: skip
        assert set(figures["scores"]) == damaged
        scores, reasons = figures["scores"], figures["explanations"]
        for task in ("dm-csv-001", "di-text-001", "plot-bar-007", "data-sa-001"):
            assert scores[task] == 0.0, (mode, task)
        assert "not valid JSON" in reasons["dm-csv-001"]
        assert "no 'result' field" in reasons["di-text-001"]
        assert "plot.json" in reasons["plot-bar-007"]
        assert figures["missing_outputs"] == ["data-sa-001"]
        # an unfinished run scores 0 officially; corrected scores what it left
        assert scores["dm-csv-043"] == (0.0 if mode == "compat" else 1.0)
