"""Spider2-V's Jupyter evaluator functions, after the official ones in `metrics/jupyterlab.py`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workflow.scorers.inputs import EvaluatorOptions, evaluate


def _read(path: Path) -> Any:
    import nbformat

    return nbformat.read(str(path), as_version=4)


def _cells_match(result: Path, expected: Path, differ: Callable[[Any, Any], str | None]) -> tuple[float, str]:
    """The notebook must have the gold's number of cells, and `differ(cell, gold_cell)` find nothing."""
    mine, gold = _read(result).cells, _read(expected).cells
    if len(mine) != len(gold):
        return 0.0, f"{len(mine)} cells, the gold notebook has {len(gold)}"
    for index, (cell, want) in enumerate(zip(mine, gold, strict=True)):
        if why := differ(cell, want):
            return 0.0, f"cell {index}: {why}"
    return 1.0, f"all {len(gold)} cells match the gold notebook"


@scorer("spider2v.compare_notebook_outputs", options=EvaluatorOptions)
def compare_notebook_outputs(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the notebook has the gold's cells (count and types) and every code cell has the gold's
    visible outputs, as officially: its stdout streams (pip's "Requirement already satisfied" /
    "Successfully installed" output of the result left out) and the `text/plain` of its results and
    displays, in order. stderr, images and HTML, and execution counts are not compared."""

    def differ(cell: Any, want: Any) -> str | None:
        if cell.cell_type != want.cell_type:
            return f"{cell.cell_type}, expected {want.cell_type}"
        if cell.cell_type != "code":
            return None
        mine = [o for o in cell.outputs if _compared_output(o) and not _pip_noise(o)]
        gold = [o for o in want.outputs if _compared_output(o)]
        if len(mine) != len(gold):
            return f"{len(mine)} compared outputs (stdout, text results), the gold notebook has {len(gold)}"
        for number, (output, expected) in enumerate(zip(mine, gold, strict=True)):
            if "name" in output and output != expected:
                return f"output {number}: its stdout differs from the gold notebook's"
            if "data" in output and (
                "data" not in expected or output["data"]["text/plain"] != expected["data"].get("text/plain")
            ):
                return f"output {number}: its text/plain differs from the gold notebook's"
        return None

    return evaluate(context, options, lambda result, expected: _cells_match(result, expected, differ))


def _compared_output(output: Any) -> bool:
    """The outputs the official function compares: stdout streams, and results that have text/plain."""
    return output.get("name") == "stdout" or "text/plain" in output.get("data", {})


def _pip_noise(output: Any) -> bool:
    text = output.get("text", "") if output.get("name") == "stdout" else ""
    return "Requirement already satisfied:" in text or "Successfully installed" in text


@scorer("spider2v.compare_notebook_cells", options=EvaluatorOptions)
def compare_notebook_cells(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the notebook has the gold's cells with the same types and sources."""

    def differ(cell: Any, want: Any) -> str | None:
        same = cell.cell_type == want.cell_type and cell.source == want.source
        return None if same else "its type or source differs from the gold notebook's"

    return evaluate(context, options, lambda result, expected: _cells_match(result, expected, differ))


@scorer("spider2v.compare_ipynb_files", options=EvaluatorOptions)
def compare_ipynb_files(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the two notebook files' JSON is equal key by key in order, their metadata aside."""

    def metric(result: Path, expected: Path) -> tuple[float, str]:
        mine = json.loads(result.read_text(encoding="utf-8"))
        gold = json.loads(expected.read_text(encoding="utf-8"))
        for (key, value), (gold_key, gold_value) in zip(mine.items(), gold.items(), strict=False):
            if key != gold_key or (key != "metadata" and value != gold_value):
                return 0.0, f"notebook field {key!r} differs"
        return 1.0, "same notebook"

    return evaluate(context, options, metric)


class CellStateOptions(EvaluatorOptions):
    version: int = 4
    cell_type: str = "code"


def _indices(path: Path, options: CellStateOptions, executed: bool) -> list[int]:
    import nbformat

    notebook = nbformat.read(str(path), as_version=options.version)
    return [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == options.cell_type and bool(cell.get("execution_count")) == executed
    ]


@scorer("spider2v.is_jupyter_cell_executed", options=CellStateOptions)
def is_jupyter_cell_executed(context: ScoringContext, options: CellStateOptions) -> Score:
    """1 when exactly the rule's `expected` cell indices are left unexecuted (usually none)."""

    def metric(result: Path, rules: Any) -> tuple[float, str]:
        unexecuted = _indices(result, options, executed=False)
        passed = unexecuted == rules["expected"]
        return float(passed), f"unexecuted cells {unexecuted}, expected {rules['expected']}"

    return evaluate(context, options, metric)


@scorer("spider2v.are_jupyter_outputs_cleared", options=CellStateOptions)
def are_jupyter_outputs_cleared(context: ScoringContext, options: CellStateOptions) -> Score:
    """1 when exactly the rule's `expected` cell indices still have an execution count (usually none)."""

    def metric(result: Path, rules: Any) -> tuple[float, str]:
        executed = _indices(result, options, executed=True)
        passed = executed == rules["expected"]
        return float(passed), f"cells with outputs {executed}, expected {rules['expected']}"

    return evaluate(context, options, metric)


@scorer("spider2v.compare_jupyterlab_images", options=EvaluatorOptions)
def compare_jupyterlab_images(context: ScoringContext, options: EvaluatorOptions) -> Score:
    """1 when the two images' green-channel histograms correlate perfectly, as the official function
    compares them (OpenCV's HISTCMP_CORREL of 256-bin histograms, after scaling the image whose (width,
    height) is the larger to the other's width, keeping its aspect ratio)."""

    def metric(result: Path, expected: Path) -> tuple[float, str]:
        from PIL import Image

        mine, gold = (Image.open(path).convert("RGB") for path in (result, expected))
        if mine.size > gold.size:  # tuples compared as the official code does
            mine = mine.resize((gold.width, int(mine.height * gold.width / mine.width)), Image.BILINEAR)
        else:
            gold = gold.resize((mine.width, int(gold.height * mine.width / gold.width)), Image.BILINEAR)
        correlation = _correlation(_green_histogram(mine), _green_histogram(gold))
        return (1.0 if correlation == 1.0 else 0.0), f"green histogram correlation {correlation:.6f}"

    return evaluate(context, options, metric)


def _green_histogram(image: Any) -> Any:
    import numpy as np

    return np.bincount(np.asarray(image)[..., 1].ravel(), minlength=256).astype(np.float64)


def _correlation(a: Any, b: Any) -> float:
    """OpenCV's HISTCMP_CORREL; the official min-max normalisation before it does not change it."""
    import numpy as np

    da, db = a - a.mean(), b - b.mean()
    denominator = float(np.sqrt((da * da).sum() * (db * db).sum()))
    return float((da * db).sum() / denominator) if denominator else 1.0
