"""The matplotlib capture hook: real plotting scripts run in a fresh interpreter with the hook installed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

CAPTURE_MODULE = Path(__file__).parents[1] / "src" / "daharness" / "sandbox" / "chart_capture.py"

# Loads chart_capture by file path (it is standalone: daharness is not importable in the sandbox).
LOADER = textwrap.dedent(
    f"""
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location("chart_capture", {str(CAPTURE_MODULE)!r})
    chart_capture = importlib.util.module_from_spec(spec)
    sys.modules["chart_capture"] = chart_capture
    spec.loader.exec_module(chart_capture)
    """
)


def run_script(folder: Path, script: str, *, capture_dir: str = "captures", before: str = "") -> Path:
    """Run ``script`` as plot.py in ``folder``; ``before`` runs before the hook is installed."""
    (folder / "plot.py").write_text(textwrap.dedent(script), encoding="utf-8")
    code = (
        textwrap.dedent(before)
        + LOADER
        + f"chart_capture.install({capture_dir!r})\n"
        + "exec(compile(open('plot.py').read(), 'plot.py', 'exec'))\n"
    )
    env = {**os.environ, "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(folder / ".mpl")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return folder / capture_dir


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


PLOTS = """
    from pathlib import Path
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    ax.bar(["a", "b", "c"], [3, 1, 2], color="red", label="Sales")
    ax.bar(["a", "b", "c"], [1, 2, 1], bottom=[3, 1, 2], color="#00ff00", label="Costs")
    ax.axhline(2.5, color="black")
    ax.set_title("Money by shop")
    ax.set_xlabel("Shop")
    ax.set_ylabel("Euro")
    ax.legend(title="Kind")
    plt.savefig("bar.png")
    plt.close(fig)

    fig, ax = plt.subplots()
    ax.barh(["x", "y"], [5, -2], color="blue")
    Path("sub").mkdir()
    fig.savefig(Path("sub") / "barh.png")
    plt.close(fig)

    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [10, 20, 15], color="purple", label="trend")
    ax.plot([1, 2, 3], [1, 2, float("nan")], color="orange")
    plt.savefig("line")  # no extension: matplotlib writes line.png
    plt.close(fig)

    fig, ax = plt.subplots()
    ax.scatter([1, 2, 3], [4, 5, 6], c="green", s=[10, 20, 30])
    fig.savefig("scatter.png")
    plt.close(fig)

    fig, ax = plt.subplots()
    ax.hist([1, 1, 2, 3, 3, 3], bins=3)
    fig.savefig("hist.png")
    plt.close(fig)

    fig, ax = plt.subplots()
    ax.pie([1, 1, 2], labels=["p", "q", "r"], colors=["red", "green", "blue"])
    fig.suptitle("Shares")
    plt.show()
"""


@pytest.fixture(scope="module")
def plots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plots")
    run_script(folder, PLOTS)
    return folder


def test_every_save_and_show_writes_one_capture_named_after_the_image(plots: Path) -> None:
    captures = plots / "captures"
    found = sorted(str(p.relative_to(captures)) for p in captures.rglob("*.json"))
    assert found == [
        "bar.png.json",
        "figure-1.json",
        "hist.png.json",
        "line.png.json",
        "scatter.png.json",
        os.path.join("sub", "barh.png.json"),
    ]
    # The agent's images are written as usual.
    for image in ("bar.png", "sub/barh.png", "line.png", "scatter.png", "hist.png"):
        assert (plots / image).is_file()
    bar = load(captures / "bar.png.json")
    assert (bar["format"], bar["event"], bar["file"]) == ("daharness-chart-capture", "savefig", "bar.png")
    assert bar["errors"] == []
    assert load(captures / "figure-1.json")["event"] == "show"


def test_bar_capture_has_series_and_metadata(plots: Path) -> None:
    capture = load(plots / "captures" / "bar.png.json")
    assert capture["figsize"] == [8.0, 5.0]
    assert capture["current_axes"] == 0
    axes = capture["axes"][0]
    assert axes["type"] == "bar"
    assert (axes["title"], axes["xlabel"], axes["ylabel"]) == ("Money by shop", "Shop", "Euro")
    assert (axes["legend_title"], axes["legend_labels"]) == ("Kind", ["Sales", "Costs"])
    assert axes["xtick_labels"] == ["a", "b", "c"]
    assert axes["ytick_labels"][:3] == ["0.0", "0.5", "1.0"]
    assert axes["colors"] == ["#ff0000", "#00ff00"]
    sales, costs, reference = axes["series"]
    assert (sales["kind"], sales["role"], sales["label"]) == ("bar", "data", "Sales")
    assert sales["orientation"] == "vertical"
    assert sales["heights"] == [3.0, 1.0, 2.0]
    assert sales["widths"] == pytest.approx([0.8, 0.8, 0.8])
    assert costs["heights"] == [1.0, 2.0, 1.0]
    assert costs["y"] == [3.0, 1.0, 2.0]  # stacked on the first series
    assert costs["colors"] == ["#00ff00"] * 3
    # axhline is kept but is not data: its role says so.
    assert (reference["kind"], reference["role"], reference["y"]) == ("line", "reference", [2.5, 2.5])


def test_barh_capture_in_a_subfolder(plots: Path) -> None:
    axes = load(plots / "captures" / "sub" / "barh.png.json")["axes"][0]
    assert axes["type"] == "barh"
    (bars,) = axes["series"]
    assert bars["orientation"] == "horizontal"
    assert bars["widths"] == [5.0, -2.0]
    assert axes["ytick_labels"] == ["x", "y"]
    assert axes["colors"] == ["#0000ff"]


def test_line_capture_keeps_x_and_y_and_nan(plots: Path) -> None:
    capture = load(plots / "captures" / "line.png.json")
    assert capture["file"] == "line.png"
    axes = capture["axes"][0]
    assert axes["type"] == "line"
    trend, other = axes["series"]
    assert (trend["x"], trend["y"]) == ([1.0, 2.0, 3.0], [10.0, 20.0, 15.0])
    assert (trend["label"], trend["color"]) == ("trend", "#800080")
    assert other["y"] == [1.0, 2.0, None]  # NaN is null in the JSON
    assert axes["colors"] == ["#800080", "#ffa500"]


def test_scatter_capture_has_offsets_sizes_and_colours(plots: Path) -> None:
    axes = load(plots / "captures" / "scatter.png.json")["axes"][0]
    assert axes["type"] == "scatter"
    (points,) = axes["series"]
    assert points["offsets"] == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert points["sizes"] == [10.0, 20.0, 30.0]
    assert points["colors"] == ["#008000"]


def test_hist_is_captured_as_bars(plots: Path) -> None:
    axes = load(plots / "captures" / "hist.png.json")["axes"][0]
    assert axes["type"] == "bar"
    assert axes["series"][0]["heights"] == [2.0, 1.0, 3.0]


def test_pie_shown_gives_fractions_labels_and_colours(plots: Path) -> None:
    capture = load(plots / "captures" / "figure-1.json")
    assert (capture["file"], capture["suptitle"]) == (None, "Shares")
    axes = capture["axes"][0]
    assert axes["type"] == "pie"
    (pie,) = axes["series"]
    assert pie["fractions"] == pytest.approx([0.25, 0.25, 0.5])
    assert pie["labels"] == ["p", "q", "r"]
    assert pie["colors"] == ["#ff0000", "#008000", "#0000ff"]


def test_hook_works_when_pyplot_was_imported_before_install(tmp_path: Path) -> None:
    script = """
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [2, 3])
        ax.set_title("Before")
        fig.savefig("early.png")
        plt.show()
        plt.show()  # a second show does not overwrite the first capture
    """
    captures = run_script(tmp_path, script, before="import matplotlib.pyplot as plt\n")
    assert load(captures / "early.png.json")["axes"][0]["title"] == "Before"
    assert load(captures / "early.png.json")["figsize"] == [4.0, 3.0]
    assert (captures / "figure-1.json").is_file() and (captures / "figure-2.json").is_file()


def test_an_unwritable_capture_folder_never_breaks_plotting(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file, not a folder", encoding="utf-8")
    script = """
        import matplotlib.pyplot as plt
        plt.plot([1, 2], [3, 4])
        plt.savefig("fine.png")
        plt.show()
        print("done")
    """
    run_script(tmp_path, script, capture_dir="blocked")
    assert (tmp_path / "fine.png").is_file()


# ---- in-process: extract() ----------------------------------------------------------------------------


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("chart_capture_for_tests", CAPTURE_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_extract_notes_a_failing_part_and_keeps_the_rest() -> None:
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    ax.bar(["a", "b"], [1, 2])
    ax.set_title("kept")

    def broken() -> list[Any]:
        raise RuntimeError("boom")

    ax.get_xticklabels = broken  # type: ignore[method-assign]
    capture = _module().extract(fig)
    assert capture["axes"][0]["title"] == "kept"
    assert capture["axes"][0]["series"][0]["heights"] == [1.0, 2.0]
    assert capture["axes"][0]["xtick_labels"] == []
    assert capture["errors"] == ["axes 0 xtick labels: RuntimeError: boom"]
    json.dumps(capture, allow_nan=False)  # always valid JSON


def test_extract_marks_error_bar_caps_and_skips_colorbars() -> None:
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    ax.errorbar([1, 2, 3], [1, 4, 9], yerr=[0.5, 0.5, 0.5], capsize=3)
    image = ax.scatter([1, 2], [1, 2], c=[0.0, 1.0])
    fig.colorbar(image)
    capture = _module().extract(fig)
    main, colorbar = capture["axes"]
    assert colorbar["colorbar"] and not main["colorbar"]
    roles = [(s["kind"], s["role"]) for s in main["series"]]
    assert roles == [("scatter", "data"), ("line", "data"), ("line", "errorbar"), ("line", "errorbar")]
    assert main["type"] == "scatter"
    assert len(main["series"][0]["colors"]) == 2  # one per colour-mapped point
