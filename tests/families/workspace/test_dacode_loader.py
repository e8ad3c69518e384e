"""Official DA-Code files: the loader, and rescoring DA-Agent outputs in both modes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daharness.core.errors import UserError
from daharness.families.workspace.dacode import load_dacode

MINI = Path(__file__).parent / "fixtures" / "dacode_mini"


def test_loader_maps_official_fields_and_flags_unknown_options() -> None:
    tasks = {t.id: t for t in load_dacode(MINI / "tasks.jsonl", MINI / "eval.jsonl", source_dir=MINI / "source",
                                          gold_dir=MINI / "gold", suite="mini")}  # fmt: skip
    assert list(tasks) == ["dm-csv-001", "di-text-001", "ml-binary-001", "dm-csv-002"]
    csv = tasks["dm-csv-001"]
    assert csv.family == "workspace" and csv.metadata.category == "EDA"
    assert csv.metadata.subcategory == "data manipulation" and csv.metadata.level == "easy"
    assert csv.scorers[0].name == "table" and csv.scorers[0].options == {
        "ignore_order": True,
        "file": "result.csv",
        "gold": "result.csv",
    }
    assert [f.path for f in csv.files] == ["orders.csv"] and [g.name for g in csv.gold.files] == [
        "result.csv"
    ]
    assert tasks["di-text-001"].scorers[0].options["expected"] == {"answer": ["Yes"], "rising": [True]}
    ml = tasks["ml-binary-001"].scorers[0].options
    assert ml["metric"] == "accuracy" and (ml["lower_bound"], ml["upper_bound"]) == (0.5, 1.0)
    assert tasks["dm-csv-002"].warnings == [
        "task dm-csv-002: unknown option 'ignore_orde' for compare_csv (ignored)"
    ]


def test_eval_config_for_an_unknown_task_is_a_one_line_error(tmp_path: Path) -> None:
    evals = tmp_path / "eval.jsonl"
    evals.write_text(
        json.dumps({"id": "nope", "func": ["compare_csv"], "result": [{"file": ["a.csv"]}]}) + "\n"
    )
    with pytest.raises(UserError, match=r"eval.jsonl:1: eval config for 'nope'"):
        load_dacode(
            MINI / "tasks.jsonl", evals, source_dir=MINI / "source", gold_dir=MINI / "gold", suite="x"
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"config": "x"}, "field 'config' must be an object"),
        ({"options": ["abc"]}, "field 'options' must be a list of objects"),
        ({"result": [{"file": []}]}, "field 'result': 'file' must be a file name or a non-empty list"),
        ({"result": [{"number": 5}]}, "field 'result': 'number' must be a non-empty list"),
        ({"result": ["a.csv"]}, "field 'result' must be a list of objects"),
        ({"func": [["compare_csv"]]}, "field 'func' must be a list of metric names"),
        ({"conj": ["and"]}, "field 'conj' must be a string"),
    ],
)
def test_a_malformed_eval_line_is_a_one_line_error(tmp_path: Path, change: dict, message: str) -> None:
    evals = tmp_path / "eval.jsonl"
    line = {"id": "dm-csv-001", "func": ["compare_csv"], "result": [{"file": ["result.csv"]}], **change}
    evals.write_text(json.dumps(line) + "\n")
    with pytest.raises(UserError, match=rf"eval.jsonl:1: task dm-csv-001: {message}"):
        load_dacode(
            MINI / "tasks.jsonl", evals, source_dir=MINI / "source", gold_dir=MINI / "gold", suite="x"
        )


def test_an_instruction_that_is_not_text_is_a_one_line_error(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "dm-csv-001", "instruction": 5}) + "\n")
    with pytest.raises(
        UserError, match=r"tasks.jsonl:1: task dm-csv-001: field 'instruction' must be a string"
    ):
        load_dacode(tasks, MINI / "eval.jsonl", source_dir=MINI / "source", gold_dir=MINI / "gold", suite="x")


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # corrected: scrambled rows fail, a boolean answer is compared, wrong string labels score 0
        ("corrected", {"dm-csv-001": 0.0, "di-text-001": 1.0, "ml-binary-001": 0.0, "dm-csv-002": 0.0}),
        # compat: the official defects — per-column sorting, booleans crash, string labels always right
        ("compat", {"dm-csv-001": 1.0, "di-text-001": 0.0, "ml-binary-001": 1.0, "dm-csv-002": 0.0}),
    ],
)
def test_rescoring_dagent_outputs_in_both_modes(
    tmp_path: Path, mode: str, expected: dict[str, float]
) -> None:
    target = tmp_path / "scores.json"
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "score", "--dacode-tasks", str(MINI / "tasks.jsonl"),
         "--dacode-eval", str(MINI / "eval.jsonl"), "--gold", str(MINI / "gold"), "--outputs", str(MINI / "outputs"),
         "--workspace-mode", mode, "--json", str(target)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(target.read_text())
    assert figures["scores"] == expected
    assert figures["missing_outputs"] == ["dm-csv-002"]
    assert set(figures["by_level"]) == {"easy", "medium", "hard"}
    if mode == "compat":
        assert figures["official_average_without_missing"] == pytest.approx(2 / 3, abs=1e-12)
    assert "unknown option 'ignore_orde'" in done.stderr


def test_rescoring_unconfined_is_asked_for_and_warned_about(tmp_path: Path) -> None:
    """`--sandbox unsafe-local` reads the output folders without the confined worker, with the same
    scores; another value is refused in one line."""
    common = ["score", "--dacode-tasks", str(MINI / "tasks.jsonl"), "--dacode-eval", str(MINI / "eval.jsonl"),
              "--gold", str(MINI / "gold"), "--outputs", str(MINI / "outputs")]  # fmt: skip
    target = tmp_path / "scores.json"
    done = subprocess.run(
        [sys.executable, "-m", "daharness", *common, "--sandbox", "unsafe-local", "--json", str(target)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "reads the agents' files unconfined" in done.stderr
    assert json.loads(target.read_text())["scores"]["di-text-001"] == 1.0
    refused = subprocess.run(
        [sys.executable, "-m", "daharness", *common, "--sandbox", "docker"], capture_output=True, text=True
    )
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        "error: --sandbox: choose 'bwrap' or 'unsafe-local', not 'docker'"
    ]


def test_dacode_suite_in_both_layouts(tmp_path: Path) -> None:
    from daharness.suites import load_suite

    flat = load_suite(f"dacode:{MINI}")
    assert [t.id for t in flat.tasks] == ["dm-csv-001", "di-text-001", "ml-binary-001", "dm-csv-002"]
    official = tmp_path / "repo" / "da_code"
    for kind, source in (("task", "tasks.jsonl"), ("eval", "eval.jsonl")):
        (official / "configs" / kind).mkdir(parents=True)
        lines = (MINI / source).read_text().splitlines()
        (official / "configs" / kind / "one.jsonl").write_text("\n".join(lines[:2]) + "\n")
        (official / "configs" / kind / "two.jsonl").write_text("\n".join(lines[1:]) + "\n")  # one line twice
    for folder in ("source", "gold"):
        shutil.copytree(MINI / folder, official / folder)
    suite = load_suite(f"dacode:{official.parent}")  # the repository root works too
    assert [t.id for t in suite.tasks] == [t.id for t in flat.tasks]
    assert suite.name == "dacode:repo" and suite.tasks[0].metadata.category == "EDA"
    (official / "configs" / "eval" / "eval_all.jsonl").write_text(
        (MINI / "eval.jsonl").read_text().splitlines()[0]
    )
    assert [t.id for t in load_suite(f"dacode:{official}").tasks] == ["dm-csv-001"]  # what evaluate.py reads
    shutil.rmtree(official / "gold")
    (official / "gold").symlink_to(MINI / "gold")  # data beside the suite is not the suite's
    with pytest.raises(UserError, match=r"folder 'gold' is a link to .*, outside the suite folder"):
        load_suite(f"dacode:{official}")
    with pytest.raises(UserError, match="no gold/ folder"):
        (official / "gold").unlink()
        load_suite(f"dacode:{official}")


def test_chart_and_ml_configs_map_to_scorer_options(tmp_path: Path) -> None:
    rows = [
        {"id": "plot-1", "type": "Data Visualization", "instruction": "Draw.", "hardness": "Easy"},
        {"id": "ml-1", "type": "ML", "instruction": "Predict.", "hardness": "Hard"},
    ]
    evals = [
        {"id": "plot-1", "config": {"task": "data visualization", "type": "bar"}, "func": ["compare_image"],
         "result": [{"multi": True, "file": ["result.png", "dabench/plot.json", "dabench/result.npy"]}],
         "options": [{"keys": ["figsize", "graph_title", "title_font"]}]},
        {"id": "ml-1", "config": {"task": "machine learning", "type": "regression", "metric": "r2",
         "upper_bound": 0.9, "lower_bound": 0.5}, "func": ["compare_ml"], "result": [{"file": "result.csv"}]},
    ]  # fmt: skip
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in evals))
    tasks = {t.id: t for t in load_dacode(tmp_path / "tasks.jsonl", tmp_path / "eval.jsonl",
                                          source_dir=tmp_path, gold_dir=tmp_path, suite="x")}  # fmt: skip
    chart = tasks["plot-1"].scorers[0]
    assert (
        chart.name == "chart"
        and chart.options["file"] == "result.png"
        and chart.options["gold"] == "result.png"
    )
    assert chart.options["keys"] == ["figsize", "graph_title", "title_font"]
    assert tasks["plot-1"].warnings == [
        "task plot-1: unknown chart key 'title_font' (compat scores 0, as the official evaluator fails; "
        "corrected ignores it)"
    ]
    assert tasks["ml-1"].metadata.subcategory == "regression"


def test_suites_check_exits_0_when_it_finds_only_ignored_option_names(tmp_path: Path) -> None:
    """dm-csv-002 misspells `ignore_order`; the official compare_csv never reads the misspelt name either."""

    def check(folder: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "daharness", "suites", "check", f"dacode:{folder}"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    done = check(MINI)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unknown option 'ignore_orde' for compare_csv (ignored)" in done.stdout
    assert "4 tasks, 0 with defects" in done.stdout
    assert "1 tasks name options that are ignored, as officially (not defects)" in done.stdout
    # a metric no scorer has is a defect: exit 1
    copy = tmp_path / "mini"
    for name in ("tasks.jsonl", "source", "gold"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        copy_entry = shutil.copytree if (MINI / name).is_dir() else shutil.copyfile
        copy_entry(MINI / name, copy / name)  # a copy: a link out of the suite folder is refused
    lines = (MINI / "eval.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"compare_csv"', '"compare_nothing"')
    (copy / "eval.jsonl").write_text("\n".join(lines) + "\n")
    done = check(copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "4 tasks, 1 with defects" in done.stdout
