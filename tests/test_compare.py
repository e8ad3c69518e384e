"""Intervals, paired tests and `daharness compare` on run directories (synthetic, and one from 0.1)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daharness.core.record import SampleRecord
from daharness.core.runlog import RunSpec, ScoringSettings
from daharness.core.score import Score
from daharness.report.build import build_report
from daharness.report.compare import compare_runs
from daharness.report.stats import mcnemar, mean_interval, paired_difference
from daharness.runs.rundir import RunDir

OLD_RUN = Path(__file__).parent / "fixtures" / "old_run_v01"


def write_run(
    root: Path, values: dict[str, float], *, agent: str = "agent", errors: tuple[str, ...] = ()
) -> Path:
    """A run directory written through RunDir, one record per sample id."""
    spec = RunSpec(
        suite={"name": "synthetic"},
        agent={"name": agent},
        scoring=ScoringSettings(modes={"closed-form": "strict"}),
    )
    run = RunDir.open_for_writing(root, spec)
    for index, (sample_id, value) in enumerate(values.items()):
        common = {
            "id": sample_id, "agent": agent, "family": "closed-form", "level": ["easy", "hard"][index % 2],
            "concepts": ["Summary Statistics"], "started_at": "2026-01-01T00:00:00+00:00", "duration_s": 1.0,
        }  # fmt: skip
        if sample_id in errors:
            run.append(SampleRecord(status="error", error="sandbox: gone", **common))
        else:
            run.append(
                SampleRecord(status="scored", score=Score(value=value), answer=f"@x[{value}]", **common)
            )
    return root


def test_mean_interval_matches_the_normal_approximation_for_a_proportion() -> None:
    values = [1.0] * 60 + [0.0] * 40
    figure = mean_interval(values)
    half_width = 1.96 * math.sqrt(0.6 * 0.4 / 100)
    assert figure["value"] == 0.6 and figure["n"] == 100
    assert figure["low"] == pytest.approx(0.6 - half_width, abs=0.02)
    assert figure["high"] == pytest.approx(0.6 + half_width, abs=0.02)
    assert figure["method"] == "Wilson score"
    assert mean_interval([])["value"] is None


def test_intervals_and_tests_hold_at_the_extremes_and_for_few_samples() -> None:
    # Wilson at 48/48: n / (n + z^2) = 48 / 51.84; a percentile bootstrap gave [100%, 100%]
    assert mean_interval([1.0] * 48) == pytest.approx(
        {"value": 1.0, "low": 0.9259, "high": 1.0, "n": 48, "method": "Wilson score"}
    )
    assert mean_interval([0.0] * 48)["high"] == pytest.approx(0.0741)
    assert mean_interval([1.0])["low"] == pytest.approx(0.2065)  # one sample: wide, not undefined
    # 3 pairs that all went 0 -> 1: of the 2^3 sign patterns 2 are as extreme; exact McNemar agrees
    three = paired_difference([0.0] * 3, [1.0] * 3)
    assert (three["p"], three["test"]) == (0.25, "sign-flip permutation (exact)")
    assert three["low"] is None and three["method"] is None  # too few pairs for a bootstrap interval
    assert mcnemar([False] * 3, [True] * 3)["p"] == 0.25
    assert paired_difference([0.0, 0.0], [1.0, 1.0])["p"] == 0.5


def test_mcnemar_counts_only_the_discordant_pairs() -> None:
    a = [True] * 20 + [True] * 2 + [False] * 10 + [False] * 8
    b = [True] * 20 + [False] * 2 + [True] * 10 + [False] * 8
    test = mcnemar(a, b)
    assert (test["only_a_right"], test["only_b_right"]) == (2, 10)
    assert test["p"] == pytest.approx(2 * 79 / 4096, abs=1e-4)  # exact binomial, two-sided
    assert mcnemar([True, False], [True, False])["p"] == 1.0
    assert mcnemar([], [])["p"] is None  # no pairs: no test, not p = 1


def test_paired_difference_is_tighter_than_unpaired_when_samples_correlate() -> None:
    a = [0.1 * (i % 10) for i in range(50)]
    b = [x + 0.05 for x in a]  # the same samples, each a little better
    paired = paired_difference(a, b)
    assert paired["diff"] == pytest.approx(0.05)
    assert paired["low"] == paired["high"] == pytest.approx(0.05)  # every difference is the same
    assert paired["p"] == 0.0
    noisy = paired_difference(a, [x + (0.2 if i % 2 else -0.1) for i, x in enumerate(a)])
    assert noisy["low"] < noisy["diff"] < noisy["high"]
    assert noisy["diff"] == pytest.approx(0.05)
    assert noisy["p"] == pytest.approx(0.024, abs=0.015)  # a paired t-test on these differences gives 0.024


def test_compare_pairs_samples_lists_flips_and_tests(tmp_path: Path) -> None:
    ids = [str(i) for i in range(1, 31)]
    first = write_run(
        tmp_path / "a", {i: 1.0 if int(i) <= 12 else 0.0 for i in ids}, agent="old", errors=("30",)
    )
    # B: right on 1..22 except 2 and 4; 29 scored only in B (A errored 30, B errored none)
    second = write_run(tmp_path / "b", {i: 1.0 if int(i) <= 22 and i not in {"2", "4"} else 0.0 for i in ids})
    report = compare_runs([first, second])
    assert [run["label"] for run in report["runs"]] == ["A", "B"]
    assert report["runs"][0]["figures"]["accuracy"]["value"] == pytest.approx(12 / 29, abs=1e-4)
    comparison = report["comparisons"][0]
    assert comparison["paired"] == 29 and comparison["only_in_b"] == ["30"]
    assert comparison["same_suite"] is True
    overall = comparison["groups"][0]
    assert overall["group"] == "all"
    assert overall["accuracy"]["mcnemar"]["only_a_right"] == 2
    assert overall["accuracy"]["mcnemar"]["only_b_right"] == 10
    assert overall["accuracy"]["diff"] == pytest.approx(8 / 29, abs=1e-4)
    assert overall["accuracy"]["mcnemar"]["p"] < 0.05  # B is better, and the test says so
    assert overall["accuracy"]["low"] is None  # 29 pairs: too few for a paired bootstrap interval
    flips = {flip["id"]: flip["direction"] for flip in comparison["flipped"]}
    assert flips == {"2": "lost", "4": "lost", **{str(i): "gained" for i in range(13, 23)}}
    groups = {group["group"]: group for group in comparison["groups"]}
    assert groups["level: easy"]["n"] + groups["level: hard"]["n"] == 29
    assert groups["family: closed-form"]["n"] == 29


def test_compare_command_opens_a_run_from_daharness_0_1(tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(OLD_RUN, old)
    assert "format_version" not in json.loads((old / "run.json").read_text())
    values = {str(i): 1.0 for i in range(1, 5)} | {"2": 0.0}
    new = write_run(tmp_path / "new", values)
    html = tmp_path / "compare.html"
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "compare", str(old), str(new), "--html", str(html), "--json", str(tmp_path / "c.json")],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "B vs A: 4 paired samples" in done.stdout
    assert "2: ✓ → ✗ (1.00 → 0.00)" in done.stdout
    assert "warning: B is a run of suite 'synthetic' and A of 'dabench:questions'" in done.stdout
    figures = json.loads((tmp_path / "c.json").read_text())
    assert figures["runs"][0]["errors"] == 1  # sample 5 of the old run failed in the harness
    assert figures["comparisons"][0]["same_suite"] is False
    page = html.read_text()
    assert "Flipped samples (1)" in page and "95% Wilson score" in page
    assert "exact sign-flip permutation test for scores" in done.stdout
    assert "samples are paired by id, which may name different tasks" in page
    alone = subprocess.run(
        [sys.executable, "-m", "daharness", "compare", str(old)], capture_output=True, text=True
    )
    assert alone.returncode == 2 and "at least two" in alone.stderr


def test_compare_names_an_output_path_it_cannot_write(tmp_path: Path) -> None:
    runs = [str(write_run(tmp_path / name, {"1": 1.0, "2": 0.0})) for name in ("a", "b")]
    (tmp_path / "file").write_text("not a folder")
    for option, target in (("--html", tmp_path), ("--json", tmp_path / "file" / "c.json")):
        done = subprocess.run(
            [sys.executable, "-m", "daharness", "compare", *runs, option, str(target)],
            capture_output=True, text=True, env={**os.environ, "COLUMNS": "400"},
        )  # fmt: skip
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"error: {target}: cannot write" in done.stderr


def test_single_run_report_shows_intervals(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {str(i): float(i % 4 != 0) for i in range(1, 41)})
    report = build_report(RunDir.open_for_reading(run))
    accuracy = report["intervals"]["accuracy"]
    assert accuracy["value"] == 0.75 and accuracy["n"] == 40
    assert 0.55 < accuracy["low"] < 0.7 and 0.8 < accuracy["high"] < 0.95
    assert report["intervals"]["by_family"]["closed-form"]["accuracy"] == accuracy
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "report", str(run)], capture_output=True, text=True
    )
    assert f"accuracy 75.00% (95% CI {accuracy['low']:.2%}–{accuracy['high']:.2%})" in done.stdout
    assert "95% CI" in (run / "report.html").read_text()


def test_the_rate_interval_is_scipys_wilson_interval_without_importing_scipy() -> None:
    from scipy import stats

    from daharness.report.stats import mean_interval

    for n, k in [(1, 0), (1, 1), (7, 3), (20, 20), (48, 47), (66, 0), (150, 101)]:
        ours = mean_interval([1.0] * k + [0.0] * (n - k))
        theirs = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert (ours["low"], ours["high"], ours["method"]) == (
            round(theirs.low, 4),
            round(theirs.high, 4),
            "Wilson score",
        ), (n, k)
