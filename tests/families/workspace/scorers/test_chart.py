"""The chart scorer: each checked item and option passes and fails, in corrected and compat modes.

Captures are made by the real capture code (``chart_capture.extract``) from figures drawn in-process.
compat scores go through DA-Code's compare_image: the gold side has a real gold image (so the official
evaluator runs), the predicted side none (so it decides by the data and the keys); the image shortcut
has tests of its own in test_scoring_chart_files.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import load_chart_capture
from matplotlib.figure import Figure

from daharness.core.scoring import GoldProblem
from daharness.families.workspace.scorers.chart import (
    ChartFiles,
    fuzz_ratio,
    load_capture,
    score_chart,
    similarity,
)

chart_capture = load_chart_capture()

CATEGORIES = ["north", "south", "east"]


def capture(draw: Callable[[Any], None], figsize: tuple[float, float] = (6, 4)) -> dict[str, Any]:
    fig = Figure(figsize=figsize)
    draw(fig.subplots())
    return chart_capture.extract(fig)


def bars(
    values: list[float] = [3, 1, 2],  # noqa: B006 - never mutated
    *,
    labels: list[str] = CATEGORIES,
    color: str | list[str] = "tab:blue",
    title: str = "Sales by region",
    xlabel: str = "Region",
    ylabel: str = "Sales",
    legend_title: str | None = None,
    figsize: tuple[float, float] = (6, 4),
    horizontal: bool = False,
) -> dict[str, Any]:
    def draw(ax: Any) -> None:
        (ax.barh if horizontal else ax.bar)(labels, values, color=color, label="2024")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if legend_title is not None:
            ax.legend(title=legend_title)

    return capture(draw, figsize)


def grouped(first: list[float], second: list[float], names: tuple[str, str] = ("a", "b")) -> dict[str, Any]:
    def draw(ax: Any) -> None:
        ax.bar([0, 1, 2], first, width=0.4, label=names[0])
        ax.bar([0.4, 1.4, 2.4], second, width=0.4, label=names[1])
        ax.legend(title="Year")

    return capture(draw)


_GOLD_IMAGE: dict[str, Path] = {}


@pytest.fixture(autouse=True)
def gold_image(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A real gold image: compat needs one to exist (a gold folder without it scores 0 officially)."""
    if "path" not in _GOLD_IMAGE:
        path = tmp_path_factory.mktemp("gold") / "chart.png"
        fig = Figure(figsize=(2, 2))
        fig.subplots().bar(["a"], [1])
        fig.savefig(path)
        _GOLD_IMAGE["path"] = path


def sides(predicted: Any, gold: Any, mode: str) -> tuple[Any, Any]:
    if mode != "compat":
        return predicted, gold
    return ChartFiles(capture=predicted), ChartFiles(
        capture=gold, images=(("chart.png", _GOLD_IMAGE["path"]),)
    )


def chart_score(predicted: Any, gold: Any, *, mode: str = "corrected", **options: Any):  # type: ignore[no-untyped-def]
    predicted, gold = sides(predicted, gold, mode)
    return score_chart(predicted, gold, mode=mode, **options)  # type: ignore[arg-type]


def score(predicted: Any, gold: Any, *check: str, **options: Any) -> float:
    return chart_score(predicted, gold, check=check or ("data",), **options).value


BOTH = pytest.mark.parametrize("mode", ["corrected", "compat"])


# ---- data -------------------------------------------------------------------------------------------


@BOTH
def test_same_chart_scores_one_and_other_values_zero(mode: str) -> None:
    gold = bars()
    assert score(bars(), gold, mode=mode) == 1.0
    assert score(bars([3, 1, 2.5]), gold, mode=mode) == 0.0
    assert score(bars([3, 1, 2, 4], labels=[*CATEGORIES, "west"]), gold, mode=mode) == 0.0


def test_values_in_another_order_pass_only_when_order_is_free() -> None:
    gold, shuffled = bars([3, 1, 2]), bars([1, 2, 3], labels=["south", "east", "north"])
    assert score(shuffled, gold) == 0.0
    assert score(shuffled, gold, data_order_free=True) == 1.0
    # Officially each column of the data matrix is sorted: a single series keeps its order.
    assert score(shuffled, gold, mode="compat") == 0.0


def test_scaled_values_pass_only_when_scale_is_free() -> None:
    gold, percent = bars([3, 1, 2]), bars([50, 100 / 6, 100 / 3])
    assert score(percent, gold) == 0.0
    assert score(percent, gold, data_scale_free=True) == 1.0
    assert score(bars([3, 1, 3]), gold, data_scale_free=True) == 0.0
    # Official: the data also matches once each side is divided by its own total, whatever the task says.
    result = chart_score(percent, gold, mode="compat")
    assert result.value == 1.0 and "divided by its total" in result.details["items"]["data"]["reason"]
    assert score(bars([3, 1, 3]), gold, mode="compat") == 0.0


def test_order_free_keeps_values_paired_across_series() -> None:
    gold = grouped([1, 2, 3], [10, 20, 30])
    series_swapped = grouped([10, 20, 30], [1, 2, 3])
    categories_permuted = grouped([3, 1, 2], [30, 10, 20])
    pairing_broken = grouped([1, 2, 3], [30, 20, 10])
    assert score(series_swapped, gold, data_order_free=True) == 1.0
    assert score(categories_permuted, gold, data_order_free=True) == 1.0
    assert score(pairing_broken, gold, data_order_free=True) == 0.0
    assert score(series_swapped, gold, mode="compat") == 1.0
    assert score(categories_permuted, gold, mode="compat") == 0.0
    # official defect: each column (category) is sorted on its own, so values moved between series match
    moved_between_series = grouped([10, 2, 30], [1, 20, 3])
    assert score(moved_between_series, gold, mode="compat") == 1.0
    assert score(moved_between_series, gold, data_order_free=True) == 0.0


def test_order_free_matching_is_one_to_one() -> None:
    gold = grouped([1, 2, 3], [10, 20, 30])
    twice = grouped([1, 2, 3], [1, 2, 3])
    assert score(twice, gold, data_order_free=True) == 0.0
    assert score(twice, gold, mode="compat") == 0.0


def test_scatter_points_keep_x_and_y() -> None:
    gold = capture(lambda ax: ax.scatter([1, 5], [2, 6]))
    swapped = capture(lambda ax: ax.scatter([2, 6], [1, 5]))
    reordered = capture(lambda ax: ax.scatter([5, 1], [6, 2]))
    assert score(capture(lambda ax: ax.scatter([1, 5], [2, 6])), gold) == 1.0
    assert score(swapped, gold, data_order_free=True) == 0.0
    assert score(swapped, gold, mode="compat") == 0.0
    assert score(reordered, gold) == 0.0
    assert score(reordered, gold, data_order_free=True) == 1.0
    assert score(reordered, gold, mode="compat") == 1.0
    # official defect: x and y are sorted as separate columns, so points may trade their y values
    traded = capture(lambda ax: ax.scatter([1, 5], [6, 2]))
    assert score(traded, gold, mode="compat") == 1.0
    assert score(traded, gold, data_order_free=True) == 0.0


@BOTH
def test_line_and_pie_data(mode: str) -> None:
    line = capture(lambda ax: ax.plot([1, 2, 3], [5, 7, 6]))
    assert score(capture(lambda ax: ax.plot([1, 2, 3], [5, 7, 6])), line, mode=mode) == 1.0
    assert score(capture(lambda ax: ax.plot([1, 2, 3], [5, 7, 9])), line, mode=mode) == 0.0
    pie = capture(lambda ax: ax.pie([1, 1, 2]))
    assert score(capture(lambda ax: ax.pie([10, 10, 20])), pie, mode=mode) == 1.0  # fractions
    assert score(capture(lambda ax: ax.pie([1, 2, 2])), pie, mode=mode) == 0.0


def test_reference_lines_are_not_data_in_corrected() -> None:
    gold = capture(lambda ax: ax.plot([1, 2, 3], [5, 7, 6]))

    def with_mean(ax: Any) -> None:
        ax.plot([1, 2, 3], [5, 7, 6])
        ax.axhline(6)

    assert score(capture(with_mean), gold) == 1.0
    assert score(capture(with_mean), gold, mode="compat") == 0.0  # official: axhline is a second line


# ---- type -------------------------------------------------------------------------------------------


def test_type() -> None:
    gold = bars()
    assert score(bars([5, 5, 5]), gold, "type") == 1.0
    assert score(capture(lambda ax: ax.plot(CATEGORIES, [3, 1, 2])), gold, "type", "data") == 0.0
    line = capture(lambda ax: ax.plot(CATEGORIES, [3, 1, 2]))
    assert chart_score(line, gold, check=["type"]).details["items"]["type"] == {
        "match": False,
        "reason": "differ",
        "predicted": "line",
        "gold": "bar",
    }
    assert score(line, gold, "type", mode="compat") == 0.0
    horizontal = bars(horizontal=True)
    assert score(horizontal, gold, "type") == 0.0
    assert score(horizontal, gold, "type", mode="compat") == 1.0  # official: barh is "bar"


# ---- colour, figsize --------------------------------------------------------------------------------


@BOTH
def test_colour(mode: str) -> None:
    gold = bars(color="#1f77b4")
    assert score(bars(color="#1f77b4"), gold, "color", mode=mode) == 1.0
    assert score(bars(color="#2a7ab8"), gold, "color", mode=mode) == 1.0  # RGB distance 12.9
    assert score(bars(color="red"), gold, "color", mode=mode) == 0.0


def test_colours_must_match_both_ways_in_corrected() -> None:
    gold = bars(color=["red", "blue", "red"])
    all_red = bars(color="red")
    assert score(all_red, gold, "color") == 0.0
    assert score(all_red, gold, "color", mode="compat") == 1.0  # official: predicted subset of gold is enough
    assert score(bars(color=["blue", "red", "red"]), gold, "color") == 1.0


@BOTH
def test_figsize(mode: str) -> None:
    gold = bars(figsize=(10, 6))
    assert score(bars(figsize=(10, 6)), gold, "figsize", mode=mode) == 1.0
    assert score(bars(figsize=(8, 6)), gold, "figsize", mode=mode) == 0.0


# ---- texts ------------------------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize(
    ("item", "field"),
    [("title", "title"), ("graph_title", "title"), ("xlabel", "xlabel"), ("y_label", "ylabel")],
)
def test_titles_are_fuzzy_at_90(mode: str, item: str, field: str) -> None:
    gold = bars(**{field: "Comparison of Animal Counts"})
    assert score(bars(**{field: "comparison of animal counts"}), gold, item, mode=mode) == 1.0
    assert score(bars(**{field: "Comparision of Animal Count"}), gold, item, mode=mode) == 1.0  # ratio 96
    assert score(bars(**{field: "Animal Counts per Group"}), gold, item, mode=mode) == 0.0
    assert score(bars(**{field: ""}), gold, item, mode=mode) == 0.0


def test_suptitle_counts_as_the_title_in_corrected() -> None:
    def with_suptitle(ax: Any) -> None:
        ax.bar(CATEGORIES, [3, 1, 2])
        ax.figure.suptitle("Sales by region")

    assert score(capture(with_suptitle), bars(), "title") == 1.0
    assert score(capture(with_suptitle), bars(), "title", mode="compat") == 0.0


@BOTH
def test_legend_title_and_labels(mode: str) -> None:
    gold = grouped([1, 2, 3], [4, 5, 6], names=("Cat", "Dog"))
    same = grouped([1, 2, 3], [4, 5, 6], names=("Dog", "Cat"))  # legend order is free
    other = grouped([1, 2, 3], [4, 5, 6], names=("Cat", "Bird"))
    assert score(same, gold, "legend_title", "labels", mode=mode) == 1.0
    assert score(other, gold, "legend_labels", mode=mode) == 0.0
    gold_title = bars(legend_title="Animal type")
    assert score(bars(legend_title="Animal types"), gold_title, "legend_title", mode=mode) == 1.0  # ratio 96
    assert score(bars(legend_title="Animal"), gold_title, "legend_title", mode=mode) == 0.0


def test_label_lists_pair_one_to_one_in_corrected() -> None:
    gold = grouped([1, 2, 3], [4, 5, 6], names=("Cat", "Dog"))
    twice = grouped([1, 2, 3], [4, 5, 6], names=("Cat", "Cat"))
    assert score(twice, gold, "legend_labels") == 0.0
    assert score(twice, gold, "legend_labels", mode="compat") == 1.0  # official: any gold label will do


@BOTH
def test_tick_labels(mode: str) -> None:
    gold = bars()
    assert score(bars(), gold, "xtick_labels", "ytick_labels", mode=mode) == 1.0
    assert score(bars(labels=["north", "south", "west"]), gold, "xtick_labels", mode=mode) == 0.0
    assert score(bars([30, 10, 20]), gold, "ytick_labels", mode=mode) == 0.0


def test_tick_label_order_matters_unless_order_is_free() -> None:
    gold = bars([3, 1, 2])
    reordered = bars([1, 2, 3], labels=["south", "east", "north"])
    assert score(reordered, gold, "xtick_labels") == 0.0
    assert score(reordered, gold, "xtick_labels", data_order_free=True) == 1.0
    # compat always compares the data too (a single series in order); labels may come in any order
    assert score(reordered, gold, "xtick_labels", mode="compat") == 0.0
    relabelled = bars([3, 1, 2], labels=["south", "east", "north"])
    assert score(relabelled, gold, "xtick_labels", mode="compat") == 1.0
    assert score(relabelled, gold, "xtick_labels", data_order_free=True) == 1.0
    assert score(relabelled, gold, "xtick_labels") == 0.0


# ---- all or nothing, missing and bad input ----------------------------------------------------------


def test_all_or_nothing_with_each_verdict_in_details() -> None:
    gold = bars()
    result = chart_score(bars(title="Something else"), gold, check=["data", "title", "xlabel"])
    assert result.value == 0.0
    items = result.details["items"]
    assert [items[name]["match"] for name in ("data", "title", "xlabel")] == [True, False, True]
    assert result.explanation.startswith("mismatch: title (ratio")


def test_missing_or_unreadable_capture_scores_zero(tmp_path: Path) -> None:
    gold = bars()
    nothing = score_chart(None, gold)
    assert nothing.value == 0.0 and nothing.explanation == "no chart captured (the agent saved no figure)"
    missing = score_chart(tmp_path / "chart.png.json", gold)
    assert missing.value == 0.0 and "not found" in missing.explanation
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    unreadable = score_chart(tmp_path / "bad.json", gold)
    assert unreadable.value == 0.0 and "unreadable" in unreadable.explanation


def test_captures_from_files(tmp_path: Path) -> None:
    (tmp_path / "gold.json").write_text(json.dumps(bars()), encoding="utf-8")
    (tmp_path / "pred.json").write_text(json.dumps(bars()), encoding="utf-8")
    assert load_capture(tmp_path / "gold.json")["axes"][0]["type"] == "bar"
    assert score_chart(tmp_path / "pred.json", tmp_path / "gold.json", check=["data", "title"]).value == 1.0
    with pytest.raises(FileNotFoundError):
        score_chart(bars(), tmp_path / "no-gold.json")


def test_bad_options_and_gold_without_data_raise() -> None:
    with pytest.raises(ValueError, match="unknown chart check"):
        score_chart(bars(), bars(), check=["colour_scheme"])
    with pytest.raises(ValueError, match="unknown chart mode"):
        score_chart(bars(), bars(), mode="strict")  # type: ignore[arg-type]
    empty = capture(lambda ax: ax.set_title("nothing"))
    with pytest.raises(GoldProblem, match="no data"):  # the gold's fault: an infrastructure error
        score_chart(bars(), empty)
    assert score(bars(), empty, mode="compat") == 0.0  # DA-Agent would leave no gold result.npy: 0
    unknown = ChartFiles(capture=bars(), images=(("chart.png", _GOLD_IMAGE["path"]),))
    failed = score_chart(ChartFiles(capture=bars()), unknown, keys=["colour_scheme"], mode="compat")
    assert failed.value == 0.0 and "unknown key" in failed.explanation  # the official evaluator raises


def test_capture_format_and_version_are_checked(tmp_path: Path) -> None:
    old = {**bars(), "version": 99}
    with pytest.raises(ValueError, match="version 99 is not supported"):
        score_chart(bars(), old)
    newer = score_chart(old, bars())
    assert newer.value == 0.0 and "version 99" in newer.explanation
    (tmp_path / "other.json").write_text(json.dumps({**bars(), "format": "something-else"}), encoding="utf-8")
    other = score_chart(tmp_path / "other.json", bars())
    assert other.value == 0.0 and "not a chart capture" in other.explanation


def test_fuzz_ratio_is_the_levenshtein_ratio() -> None:
    assert fuzz_ratio("", "") == 100 and fuzz_ratio("", "a") == 0
    assert fuzz_ratio("comparision of animal count", "comparison of animal counts") == 96
    # 2·LCS/(len a + len b); difflib's matching blocks would give 33.3 here.
    assert similarity("bcbcb", "abacbbc") == pytest.approx(200 * 4 / 12)


def test_the_scorer_reads_the_format_the_capture_writes() -> None:
    from daharness.scoring.chart_captures import CAPTURE_FORMAT, CAPTURE_VERSIONS

    assert chart_capture.FORMAT == CAPTURE_FORMAT and chart_capture.VERSION in CAPTURE_VERSIONS


def test_an_unknown_check_in_a_task_is_an_error_when_the_task_is_loaded() -> None:
    from daharness.core.errors import UserError
    from daharness.core.registry import scorers

    entry = scorers.get("chart")
    good = entry.parse_options({"file": "a.png", "check": ["data", "graph_title"]}, "task t")
    assert good.check == ("data", "graph_title")  # official names are kept as written
    with pytest.raises(
        UserError, match=r"task t: scorer 'chart': option 'check': .*unknown chart check 'colour'"
    ):
        entry.parse_options({"file": "a.png", "check": ["data", "colour"]}, "task t")
    with pytest.raises(UserError, match=r"option 'check': .*chart check names no item"):
        entry.parse_options({"file": "a.png", "check": []}, "task t")  # would give any chart 1
    with pytest.raises(ValueError, match="names no item"):
        score_chart(bars([9, 9, 9]), bars(), check=[])


FORGED = {  # captures arrive from the agent's process: any structure may reach the scorer
    "series without kind": {"axes": [{"series": [{"x": [1]}]}]},
    "axes not objects": {"axes": [5]},
    "series a string": {"axes": [{"series": "abc"}]},
    "heights not numbers": {"axes": [{"series": [{"kind": "bar", "heights": [1, "x"], "widths": [1, 1]}]}]},
    "tick labels a number": {"axes": [{**bars()["axes"][0], "xtick_labels": 5}]},
    "unhashable colours": {"axes": [{"series": [{**bars()["axes"][0]["series"][0], "colors": [[1, 2]]}]}]},
}


@BOTH
@pytest.mark.parametrize("forged", FORGED)
def test_a_malformed_capture_scores_zero_instead_of_raising(mode: str, forged: str) -> None:
    malformed = {"format": "daharness-chart-capture", "version": 1, **FORGED[forged]}
    result = chart_score(malformed, bars(), mode=mode, check=["data", "xtick_labels", "color"])
    assert result.value == 0.0
    if mode == "corrected":
        assert result.explanation.startswith("chart unreadable: ")
    else:  # DA-Agent's post-processing would have left no files for it
        assert "no plot.json" in result.explanation or "no result.npy" in result.explanation
