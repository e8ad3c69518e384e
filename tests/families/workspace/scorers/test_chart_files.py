"""Charts given as DA-Agent's files (the image, dabench/plot.json, dabench/result.npy): DA-Code's
compare_image in compat, the corrected rules on the same files, and a capture against such a gold.

Images are real PNGs written by matplotlib and Pillow; matrices and plot.json files are written as
DA-Agent's post-processing writes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import load_chart_capture
from matplotlib.figure import Figure
from PIL import Image

from daharness.families.workspace.scorers.chart import ChartFiles, score_chart
from daharness.families.workspace.scorers.chart_compat import dabench_from_capture

chart_capture = load_chart_capture()

PLOT = {
    "type": "bar",
    "color": ["#1f77b4"],
    "figsize": [6.0, 4.0],
    "graph_title": "Sales by region",
    "legend_title": "",
    "labels": [],
    "x_label": "Region",
    "y_label": "Sales",
    "xtick_labels": ["north", "south", "east"],
    "ytick_labels": ["0", "1", "2", "3"],
}
KEYS = ["figsize", "graph_title", "x_label", "y_label", "xtick_labels", "color"]


def side(
    folder: Path,
    *,
    plot: dict[str, Any] | None = PLOT,
    data: Any = ((3.0, 1.0, 2.0),),
    image: Image.Image | None = None,
    image_name: str = "result.png",
) -> ChartFiles:
    """A folder laid out as a DA-Agent output (or a DA-Code gold folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    plot_path, data_path, image_path = folder / "plot.json", folder / "result.npy", folder / image_name
    if plot is not None:
        plot_path.write_text(json.dumps(plot), encoding="utf-8")
    if data is not None:
        np.save(data_path, np.array(data, dtype=float))
    if image is not None:
        image.save(image_path)
    return ChartFiles(
        plot=plot_path, data=data_path, images=((image_name, image_path if image_path.exists() else None),)
    )


def square(rgb: tuple[int, int, int], size: int = 8) -> Image.Image:
    return Image.new("RGB", (size, size), rgb)


def compat(predicted: ChartFiles, gold: ChartFiles, keys: list[str] | None = KEYS) -> float:
    return score_chart(predicted, gold, keys=keys, mode="compat").value


# ---- compat: the image shortcut ---------------------------------------------------------------------


def test_an_identical_image_scores_one_whatever_the_data(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", image=square((200, 10, 10)))
    wrong_data = side(tmp_path / "a", data=[[9.0, 9.0, 9.0]], image=square((200, 10, 10)))
    result = score_chart(wrong_data, gold, keys=KEYS, mode="compat")
    assert result.value == 1.0 and result.explanation == "the image equals the gold image pixel by pixel"
    other_image = side(tmp_path / "b", data=[[9.0, 9.0, 9.0]], image=square((10, 200, 10)))
    assert compat(other_image, gold) == 0.0
    assert compat(side(tmp_path / "c", image=square((10, 200, 10))), gold) == 1.0  # data and keys decide


def test_images_are_grey_unless_colour_is_a_key(tmp_path: Path) -> None:
    # (255, 0, 0) and (0, 130, 0) have the same luminance: equal in grayscale, different in colour
    gold = side(tmp_path / "gold", image=square((255, 0, 0)), data=[[1.0, 2.0, 3.0]])
    green = side(tmp_path / "green", image=square((0, 130, 0)), data=[[7.0, 7.0, 7.0]])
    assert compat(green, gold, keys=["graph_title"]) == 1.0
    assert compat(green, gold, keys=["graph_title", "color"]) == 0.0


def test_image_size_must_match_only_when_figsize_is_a_key(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", image=square((90, 90, 90), size=8), data=[[1.0, 2.0, 3.0]])
    bigger = side(tmp_path / "big", image=square((90, 90, 90), size=16), data=[[7.0, 7.0, 7.0]])
    assert compat(bigger, gold, keys=["graph_title"]) == 1.0  # resized to the gold size first
    assert compat(bigger, gold, keys=["graph_title", "figsize"]) == 0.0


def test_the_image_is_found_by_the_gold_name_among_the_listed_files(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", image=square((1, 2, 3)), data=[[1.0, 2.0, 3.0]])
    renamed = side(tmp_path / "a", image=square((1, 2, 3)), image_name="chart.png", data=[[7.0, 7.0, 7.0]])
    assert compat(renamed, gold) == 0.0
    prefixed = side(tmp_path / "b", image=square((1, 2, 3)), image_name="my_result.png", data=[[7.0, 7, 7]])
    assert compat(prefixed, gold) == 1.0  # "result.png" is in "my_result.png"


def test_a_gold_folder_without_its_image_scores_zero_in_compat_only(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold")  # plot.json and result.npy, no result.png (DA-Code's plot-line-015)
    same = side(tmp_path / "pred", image=square((1, 1, 1)))
    result = score_chart(same, gold, keys=KEYS, mode="compat")
    assert result.value == 0.0 and "gold image missing (result.png)" in result.explanation
    assert score_chart(same, gold, check=["data", "title", "xtick_labels"]).value == 1.0


# ---- compat: data and keys --------------------------------------------------------------------------


def test_data_columns_are_sorted_on_their_own_and_compared_within_0_01(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", data=[[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]], image=square((0, 0, 0)))
    assert compat(side(tmp_path / "a", data=[[10.0, 2.0, 30.0], [1.0, 20.0, 3.0]]), gold) == 1.0
    assert compat(side(tmp_path / "b", data=[[3.0, 2.0, 1.0], [30.0, 20.0, 10.0]]), gold) == 0.0
    assert compat(side(tmp_path / "c", data=[[1.009, 2.0, 3.0], [10.0, 20.0, 30.0]]), gold) == 1.0
    assert compat(side(tmp_path / "d", data=[[5.0, 2.0, 3.0], [10.0, 20.0, 30.0]]), gold) == 0.0
    assert compat(side(tmp_path / "e", data=[[1.0, 2.0, 3.0]]), gold) == 0.0  # shape differs
    # official defect: divided by their totals, values within 0.01 of each other match: 1.5 is not 1.0
    # here, but 1.5/66.5 is within 0.01 of 1/66
    close_in_share = side(tmp_path / "f", data=[[1.5, 2.0, 3.0], [10.0, 20.0, 30.0]])
    assert compat(close_in_share, gold) == 1.0
    assert score_chart(close_in_share, gold, check=["data"], data_scale_free=True).value == 0.0


def test_a_1d_array_is_a_column_and_the_scaled_data_counts(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", data=[3.0, 1.0, 2.0, float("nan")], image=square((0, 0, 0)))
    assert compat(side(tmp_path / "a", data=[1.0, float("nan"), 3.0, 2.0]), gold) == 1.0  # one column
    gold_row = side(tmp_path / "gold_row", data=[[3.0, 1.0, 2.0]], image=square((0, 0, 0)))
    result = score_chart(side(tmp_path / "b", data=[[30.0, 10.0, 20.0]]), gold_row, keys=KEYS, mode="compat")
    assert result.value == 1.0 and "divided by its total" in result.details["items"]["data"]["reason"]


def test_keys_titles_labels_and_colours(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", image=square((0, 0, 0)))

    def with_plot(name: str, **changes: Any) -> float:
        return compat(side(tmp_path / name, plot={**PLOT, **changes}), gold)

    assert with_plot("title", graph_title="sales by regions") == 1.0  # ratio 97, case ignored
    assert with_plot("empty_title", graph_title="") == 0.0
    assert with_plot("ticks", xtick_labels=["east", "east", "north"]) == 1.0  # any gold label will do
    assert with_plot("three_ticks", xtick_labels=["north", "south"]) == 0.0
    assert with_plot("colour", color=["#2a7ab8"]) == 1.0  # RGB distance 12.9
    assert with_plot("no_colour", color=[]) == 1.0  # one way only: nothing predicted, nothing wrong
    assert with_plot("red", color=["#ff0000"]) == 0.0
    assert with_plot("named", color=["red"]) == 0.0  # the official parser reads hex only
    assert with_plot("figsize", figsize=[6.0, 4.01]) == 0.0  # exact


def test_empty_keys_compare_every_gold_key_and_an_unknown_key_fails(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", image=square((0, 0, 0)))
    other_ticks = side(tmp_path / "a", plot={**PLOT, "ytick_labels": ["0", "5"]})
    assert compat(other_ticks, gold, keys=KEYS) == 1.0
    assert compat(other_ticks, gold, keys=[]) == 0.0  # ytick_labels is a gold key
    result = score_chart(side(tmp_path / "b"), gold, keys=["graph_title", "title_font"], mode="compat")
    assert result.value == 0.0 and "unknown key 'title_font'" in result.explanation


def test_missing_or_broken_files_score_zero_with_the_reason(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold", image=square((0, 0, 0)))
    nothing = ChartFiles(images=(("result.png", None),))
    for mode in ("compat", "corrected"):
        assert score_chart(nothing, gold, keys=KEYS, mode=mode).value == 0.0  # type: ignore[arg-type]
    no_plot = side(tmp_path / "a", plot=None)
    without_plot = score_chart(no_plot, gold, keys=KEYS, mode="compat")
    assert without_plot.value == 0.0 and "no plot.json" in without_plot.explanation
    broken = side(tmp_path / "b")
    broken.plot.write_text("{not json", encoding="utf-8")  # type: ignore[union-attr]
    for mode in ("compat", "corrected"):
        result = score_chart(broken, gold, keys=KEYS, mode=mode)  # type: ignore[arg-type]
        assert result.value == 0.0 and "plot.json" in result.explanation


def test_a_malformed_predicted_plot_json_scores_zero_in_corrected(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold")
    check = ["data", "color", "xtick_labels"]
    not_a_colour = score_chart(side(tmp_path / "a", plot={**PLOT, "color": ["bluish"]}), gold, check=check)
    assert not_a_colour.value == 0.0 and "not in gold: ['bluish']" in not_a_colour.explanation
    ticks = score_chart(side(tmp_path / "b", plot={**PLOT, "xtick_labels": 3}), gold, check=check)
    assert ticks.value == 0.0 and "'xtick_labels' is a int, not a list" in ticks.explanation
    with pytest.raises(ValueError, match="bluish"):  # the same in the gold chart is a benchmark defect
        score_chart(
            side(tmp_path / "c"), side(tmp_path / "bad-gold", plot={**PLOT, "color": ["bluish"]}), check=check
        )


# ---- corrected on DA-Agent's files ------------------------------------------------------------------


def test_corrected_rules_on_dabench_files(tmp_path: Path) -> None:
    gold = side(tmp_path / "gold")  # no image needed
    check = ["data", "title", "xtick_labels", "color"]
    assert score_chart(side(tmp_path / "same"), gold, check=check).value == 1.0
    reordered = side(tmp_path / "order", data=[[1.0, 2.0, 3.0]])
    assert score_chart(reordered, gold, check=check).value == 0.0
    assert score_chart(reordered, gold, check=["data"], data_order_free=True).value == 1.0
    percent = side(tmp_path / "pct", data=[[50.0, 100 / 6, 100 / 3]])
    assert score_chart(percent, gold, check=["data"]).value == 0.0
    assert score_chart(percent, gold, check=["data"], data_scale_free=True).value == 1.0
    more_colours = side(tmp_path / "colours", plot={**PLOT, "color": ["#1f77b4", "#ff0000"]})
    assert score_chart(more_colours, gold, check=["color"]).value == 0.0  # both ways
    assert compat(more_colours, side(tmp_path / "gold2", image=square((0, 0, 0)))) == 0.0


def test_a_capture_against_dacode_gold_files_is_compared_as_dagent_reads_it(tmp_path: Path) -> None:
    def draw(values: list[float]) -> dict[str, Any]:
        fig = Figure(figsize=(6, 4))
        ax = fig.subplots()
        ax.bar(["north", "south", "east"], values, color="#1f77b4")
        ax.set_title("Sales by region")
        ax.set_xlabel("Region")
        ax.set_ylabel("Sales")
        return chart_capture.extract(fig)

    gold_capture = draw([3, 1, 2])
    params, matrix = dabench_from_capture(gold_capture)
    assert params is not None and matrix is not None
    assert params["type"] == "bar" and params["xtick_labels"] == ["north", "south", "east"]
    assert matrix.tolist() == [[3.0, 1.0, 2.0]] and params["figsize"] == [6.0, 4.0]
    gold = side(tmp_path / "gold", plot=params, data=matrix, image=square((0, 0, 0)))
    check = ["data", "type", "title", "xlabel", "ylabel", "xtick_labels", "color", "figsize"]
    for mode in ("corrected", "compat"):
        right = score_chart(ChartFiles(capture=draw([3, 1, 2])), gold, check=check, mode=mode)  # type: ignore[arg-type]
        assert right.value == 1.0, right.explanation
        wrong = score_chart(ChartFiles(capture=draw([3, 1, 2.5])), gold, check=check, mode=mode)  # type: ignore[arg-type]
        assert wrong.value == 0.0
    assert (
        score_chart(ChartFiles(capture=draw([3, 1, 2])), gold, check=check).details["compared_as"]
        == "dabench"
    )


def test_dagent_post_processing_leaves_nothing_for_a_chart_without_data() -> None:
    fig = Figure()
    fig.subplots().set_title("empty")
    assert dabench_from_capture(chart_capture.extract(fig)) == (None, None)


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_a_gold_chart_without_data_is_a_benchmark_defect(tmp_path: Path, mode: str) -> None:
    gold = side(tmp_path / "gold", data=None, image=square((0, 0, 0)))
    predicted = side(tmp_path / "pred")
    if mode == "corrected":
        with pytest.raises(FileNotFoundError, match=r"result\.npy"):
            score_chart(predicted, gold)
    else:
        result = score_chart(predicted, gold, keys=KEYS, mode="compat")
        assert result.value == 0.0 and "gold result.npy does not exist" in result.explanation


def test_image_facts_reads_raster_and_vector_images_and_refuses_the_rest(tmp_path: Path) -> None:
    from daharness.families.workspace.scorers.chart_files import image_facts

    fig = Figure(figsize=(2, 1))
    fig.subplots().bar(["a"], [1])
    for name in ("chart.png", "chart.svg", "chart.pdf"):
        fig.savefig(tmp_path / name, dpi=50)
    assert image_facts(tmp_path / "chart.png") == ({"format": "PNG", "size": [100, 50]}, None)
    assert image_facts(tmp_path / "chart.svg") == ({"format": "svg", "size": None}, None)
    assert image_facts(tmp_path / "chart.pdf") == ({"format": "pdf", "size": None}, None)
    late = tmp_path / "late.svg"  # the marker must be near the start, not anywhere in a large file
    late.write_bytes(b" " * 5000 + b"<svg")
    facts, problem = image_facts(late)
    assert facts is None and problem is not None and problem.startswith("late.svg is not an image")
