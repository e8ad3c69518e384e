"""Interactive scoring without a sandbox: result comparison by type, plots, private calls, letters.

Values are encoded by the real in-sandbox probe (`probe.encode`) from real pandas objects;
plots are real matplotlib PNGs with captures made by the real capture code.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission, UserTurn
from daharness.core.task import AnswerFormat, Gold, ScorerSpec, Task, TaskMetadata
from daharness.families.interactive.probe import encode
from daharness.families.interactive.scorers.choice import read_choice, read_choice_official
from daharness.families.interactive.scorers.code import extract_code
from daharness.families.interactive.scorers.plots import compare_plot, plot_similarity
from daharness.families.interactive.scorers.private import called_functions, recall
from daharness.families.interactive.scorers.values import compare_value
from daharness.sandbox import chart_capture
from daharness.scoring import score_submission

CARS = pd.DataFrame(
    {
        "Name": ["a", "b", "c", "d"],
        "Origin": ["USA", "Japan", "USA", "Europe"],
        "mpg": [18.0, 32.5, 21.0, 27.25],
        "hp": [130.0, 68.0, 95.0, np.nan],
    }
)


def same(kind: str, expected: Any, actual: Any, mode: str = "corrected", **options: Any) -> bool:
    return compare_value(kind, encode(expected), encode(actual), tolerance=1e-4, mode=mode, **options).right


# ---- dataframes and series ----------------------------------------------------------------------------


def test_a_dataframe_matches_itself_and_not_a_changed_number() -> None:
    assert same("dataframe", CARS, CARS.copy())
    changed = CARS.copy()
    changed.loc[1, "mpg"] = 32.6
    assert not same("dataframe", CARS, changed)
    assert same("dataframe", CARS, CARS.assign(mpg=CARS["mpg"] * (1 + 1e-6)))  # within the tolerance


def test_column_names_and_order_are_free_but_values_are_not() -> None:
    renamed = CARS.rename(columns={"mpg": "miles per gallon"})[["hp", "miles per gallon", "Origin", "Name"]]
    assert same("dataframe", CARS, renamed)
    assert same("dataframe", CARS, renamed.assign(extra=1))  # extra columns are allowed
    assert not same("dataframe", CARS, CARS.drop(columns="hp"))  # a missing column is not
    assert not same("dataframe", CARS, CARS.iloc[:3])  # nor a missing row


def test_a_reset_or_kept_index_matches_in_corrected_mode_only() -> None:
    filtered = CARS[CARS["mpg"] > 20]  # index 1, 2, 3
    assert same("dataframe", filtered, filtered.reset_index(drop=True))
    assert not same("dataframe", filtered, filtered.reset_index(drop=True), mode="official")
    grouped = CARS.groupby("Origin")["mpg"].mean()
    assert same("series", grouped, grouped.reset_index())  # keys as a column, a dataframe for a series
    assert not same("series", grouped, grouped.reset_index(), mode="official")
    assert not same("series", grouped, grouped.rename(index={"USA": "US"}))  # the keys are data


def test_row_order_counts_unless_the_intent_frees_it() -> None:
    shuffled = CARS.iloc[::-1]
    assert not same("dataframe", CARS.reset_index(drop=True), shuffled.reset_index(drop=True))
    assert same("dataframe", CARS, shuffled.reset_index(drop=True), ignore_row_order=True)
    # in any order, rows keep their pairing: swapping one column's values is still wrong
    swapped = CARS.assign(mpg=CARS["mpg"].iloc[::-1].to_numpy())
    assert not same("dataframe", CARS, swapped, ignore_row_order=True)


# ---- scalars, containers, models ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "expected", "actual", "corrected", "official"),
    [
        ("scalar", 0.3, 0.1 + 0.2, True, False),
        ("scalar", 7, np.int64(7), True, True),
        ("scalar", 2.5, 2.6, False, False),
        ("scalar", "Japan", " Japan ", True, False),
        ("scalar", "Japan", "USA", False, False),
        ("scalar", True, 1, False, True),
        ("list", ["a", "b"], ["a", "b"], True, True),
        ("list", ["a", "b"], ["b", "a"], False, False),
        ("tuple", (398, 8), [398, 8], True, False),
        ("tuple", (398, 8), (398, 9), False, False),
        ("dict", {"mean": 1.0, "n": 3}, {"n": 3, "mean": 1.00000001}, True, False),
        ("dict", {"mean": 1.0, "n": 3}, {"mean": 1.0}, False, False),
        ("list", [1.0, float("nan")], [1.0, float("nan")], True, False),
        ("scalar", 5, CARS, False, False),
    ],
)
def test_values_by_mode(kind: str, expected: Any, actual: Any, corrected: bool, official: bool) -> None:
    assert same(kind, expected, actual) is corrected
    assert same(kind, expected, actual, mode="official") is official


def test_sets_compare_without_order() -> None:
    assert same("list", {"x", "y"}, {"y", "x"})
    assert not same("list", {"x", "y"}, {"x"})


# ---- plots -------------------------------------------------------------------------------------------


def _histogram(tmp_path: Path, name: str, values: Any) -> tuple[Path, dict[str, Any]]:
    fig = Figure(figsize=(8, 5))
    axes = fig.subplots()
    axes.hist(values, bins=15)
    axes.set_title("Fuel economy")
    path = tmp_path / name
    fig.savefig(path)
    return path, chart_capture.extract(fig)


def test_a_plot_of_another_column_fools_ssim_but_not_the_chart_data(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    mpg, horsepower = rng.gamma(9, 2.6, 300), rng.normal(100, 30, 300)
    right, right_capture = _histogram(tmp_path, "right.png", mpg)
    again, again_capture = _histogram(tmp_path, "again.png", mpg)
    other, other_capture = _histogram(tmp_path, "other.png", horsepower)
    assert plot_similarity(right, again) == pytest.approx(1.0)
    assert plot_similarity(right, other) > 0.6  # the released rule's blind spot
    verdict, details = compare_plot(right, again, right_capture, again_capture, mode="corrected")
    assert verdict.right and details["ssim"] == pytest.approx(1.0)
    assert compare_plot(right, other, right_capture, other_capture, mode="official")[0].right
    verdict, _ = compare_plot(right, other, right_capture, other_capture, mode="corrected")
    assert not verdict.right and "data differ" in verdict.reason
    verdict, _ = compare_plot(right, again, right_capture, None, mode="corrected")  # capture removed
    assert not verdict.right and "no chart data" in verdict.reason
    assert not compare_plot(right, None, right_capture, None, mode="official")[0].right


def test_plot_captures_given_as_their_files_are_read(tmp_path: Path) -> None:
    # the raw record keeps each capture as the file copied out of the sandbox, read only in the scorer
    rng = np.random.default_rng(1)
    mpg, horsepower = rng.gamma(9, 2.6, 300), rng.normal(100, 30, 300)
    right, right_capture = _histogram(tmp_path, "right.png", mpg)
    again, again_capture = _histogram(tmp_path, "again.png", mpg)
    other, other_capture = _histogram(tmp_path, "other.png", horsepower)
    files = {}
    for name, capture in (("right", right_capture), ("again", again_capture), ("other", other_capture)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(capture), encoding="utf-8")
    verdict, _ = compare_plot(right, again, files["right"], files["again"], mode="corrected")
    assert verdict.right and "data match" in verdict.reason
    verdict, _ = compare_plot(right, other, files["right"], files["other"], mode="corrected")
    assert not verdict.right and "data differ" in verdict.reason
    verdict, _ = compare_plot(right, again, files["right"], tmp_path / "gone.json", mode="corrected")
    assert not verdict.right and "no chart captured" in verdict.reason


def test_a_blank_image_is_not_similar(tmp_path: Path) -> None:
    right, _ = _histogram(tmp_path, "right.png", np.arange(100.0))
    blank = Figure(figsize=(8, 5))
    blank.text(0.5, 0.5, "nothing here")
    blank.savefig(tmp_path / "blank.png")
    assert plot_similarity(right, tmp_path / "blank.png") < plot_similarity(right, right)


# ---- private functions -------------------------------------------------------------------------------

LIBRARY = ["load_table", "keep_rows", "group_summary", "rank_top"]


def test_private_calls_are_calls_not_imports() -> None:
    code = (
        "from decision_kit import load_table, keep_rows, rank_top as top\n"
        "import decision_kit as dk\n"
        "wine = load_table('wine.csv')\n"
        "best = top(wine, 5, by='proline')\n"
        "means = dk.group_summary(wine, 'cultivar', 'alcohol')\n"
    )
    assert called_functions(code, "decision_kit", LIBRARY) == {"load_table", "rank_top", "group_summary"}
    assert called_functions(
        "from decision_kit import *\nkeep_rows(t, 'a', '>', 1)", "decision_kit", LIBRARY
    ) == {"keep_rows"}
    assert (
        called_functions("def load_table(p):\n    return p\nload_table('x')", "decision_kit", LIBRARY)
        == set()
    )
    assert called_functions("this is not python", "decision_kit", LIBRARY) == set()
    assert recall({"load_table", "rank_top"}, {"load_table"}) == 0.5
    assert recall(set(), set()) == 1.0


# ---- multiple choice ---------------------------------------------------------------------------------

OPTIONS = ["Europe", "Japan", "USA", "None of the above"]


@pytest.mark.parametrize(
    ("reply", "letter", "ambiguous"),
    [
        ("<choice>B</choice>", "B", False),
        ("Thought: ...\nAnswer: B", "B", False),
        ("The answer is (C).", "C", False),
        ("**B.**", "B", False),
        ("B. Japan has the best average.", "B", False),
        ("Japan makes the most economical cars.", "B", False),
        ("none of the above", "D", False),
        ("(A) looks right", "A", False),
        ("Option A is tempting, but the answer is C", "C", False),
        ("Answer: A or C", None, True),
        ("<choice>A</choice> ... <choice>B</choice>", None, True),
        ("Europe or Japan", None, True),
        ("I cannot tell", None, False),
        ("Answer: F", None, False),  # not an option of this question
    ],
)
def test_letters_are_read_robustly(reply: str, letter: str | None, ambiguous: bool) -> None:
    reading = read_choice(reply, OPTIONS)
    assert (reading.letter, reading.ambiguous) == (letter, ambiguous)


def test_the_official_extraction_and_its_defects() -> None:
    assert read_choice_official("Reasoning\nAnswer: B").letter == "B"
    assert read_choice_official("I think Japan is best").letter == "I"  # the first capital A-J anywhere
    assert read_choice_official("<choice>C</choice>\nAnswer: B").letter is None  # both markers


def test_code_is_the_longest_fenced_block() -> None:
    reply = "Outline:\n```python\nx = 1\n```\nCode:\n```python\nimport pandas as pd\nx = 2\n```"
    assert extract_code(reply) == "import pandas as pd\nx = 2"
    assert extract_code("x = 3") == "x = 3"


# ---- the scorers on recorded evidence ----------------------------------------------------------------


def _code_task(intents: list[dict[str, Any]], library: dict[str, Any] | None = None) -> Task:
    options: dict[str, Any] = {"intents": intents, **(library or {})}
    return Task(
        id="t-01", suite="test", family="interactive", instructions=["q"],
        answer_format=AnswerFormat(kind="code"),
        scorers=[ScorerSpec(name="interactive_code", options=options)],
        metadata=TaskMetadata(category="private" if library else "normal"),
    )  # fmt: skip


_RECORDS = tempfile.TemporaryDirectory(prefix="daharness-test-records-")


def _raw(values: list[Any] | None, error: str | None = None, private_calls: list[str] | None = None) -> dict:
    """A raw record, as the interactive family keeps it: a results file the probe would have written, and
    the private calls the sealed recorder saw (never read from the results file)."""
    calls = private_calls or []
    if error is not None:
        return {"error": error, "file": None, "plots": [], "private_calls": calls}
    file = Path(tempfile.mkdtemp(dir=_RECORDS.name)) / "results.json"
    results = [{"type": "x", "value": encode(value)} for value in values or []]
    file.write_text(json.dumps({"results": results}))
    return {"error": None, "file": file, "plots": [], "private_calls": calls}


def _evidence(
    reference: list[Any], agent: list[Any] | None, error: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "reference": _raw(reference),
        "agent": _raw(agent, error, extra.get("private_calls")),
        "code": extra.get("code", ""),
    }


def _score(task: Task, evidence: dict[str, Any] | None, mode: str = "corrected", answer: str = "") -> Any:
    submission = Submission(answers=[answer], evidence={"interactive": evidence} if evidence else {})
    return score_submission(task, submission, None, ScoringSettings(modes={"interactive": mode}))


def test_acc_needs_every_intent_and_names_the_wrong_one() -> None:
    task = _code_task([{"type": "series", "name": "s"}, {"type": "scalar", "name": "n"}])
    series = CARS.groupby("Origin")["mpg"].mean()
    assert _score(task, _evidence([series, 4], [series, 4])).value == 1.0
    wrong = _score(task, _evidence([series, 4], [series, 5]))
    assert wrong.value == 0.0
    assert [c.passed for c in wrong.checks] == [True, False] and "scalar n" in wrong.explanation


def test_a_crash_or_no_evidence_is_wrong_with_the_reason() -> None:
    task = _code_task([{"type": "scalar", "name": "n"}])
    crashed = _score(
        task, _evidence([4], None, error="the code fails: NameError: name 'cars' is not defined")
    )
    assert crashed.value == 0.0 and "NameError" in crashed.explanation
    timed_out = _score(task, _evidence([4], None, error="the code fails: timed out (step exceeded 2 s)"))
    assert "timed out" in timed_out.explanation
    assert "no execution evidence" in _score(task, None).explanation


def test_accr_is_acc_times_the_recall_of_the_private_functions() -> None:
    library = {
        "library": "decision_kit",
        "library_functions": LIBRARY,
        "reference_calls": ["load_table", "group_summary"],
    }
    task = _code_task([{"type": "scalar", "name": "n"}], library)
    both = "from decision_kit import load_table, group_summary\nw = load_table('w')\nn = group_summary(w, 'a', 'b')"
    one = "from decision_kit import load_table, group_summary\nw = load_table('w')\nn = w.groupby('a')['b'].mean()"
    dead = one + "\nif False:\n    group_summary(w, 'a', 'b')"
    runtime = {"private_calls": ["load_table", "group_summary"]}
    score = _score(task, {**_evidence([4], [4], **runtime), "code": both})
    assert (score.value, score.details["accr"], score.details["recall"]) == (1.0, 1.0, 1.0)
    score = _score(task, {**_evidence([4], [4], private_calls=["load_table"]), "code": one})
    assert (score.value, score.details["accr"]) == (1.0, 0.5)
    score = _score(task, {**_evidence([4], [4], private_calls=[]), "code": "n = 4"})  # right, no private code
    assert (score.value, score.details["accr"]) == (1.0, 0.0)
    # a call that never ran counts in the official (syntax only) rule, not in the corrected one
    dead_run = {**_evidence([4], [4], private_calls=["load_table"]), "code": dead}
    assert _score(task, dead_run).details["accr"] == 0.5
    assert _score(task, dead_run, mode="official").details["accr"] == 1.0
    assert (
        _score(task, {**_evidence([4], [5], private_calls=["load_table"]), "code": both}).details["accr"]
        == 0.0
    )


def test_choice_scores_and_flags_ambiguity() -> None:
    task = Task(
        id="c-01", suite="test", family="interactive", instructions=["q"],
        answer_format=AnswerFormat(kind="choice"), gold=Gold(choice="B"),
        scorers=[ScorerSpec(name="choice", options={"answer": "B", "choices": OPTIONS})],
        metadata=TaskMetadata(category="action", subcategory="insight_mining"),
    )  # fmt: skip
    assert _score(task, None, answer="Answer: B").value == 1.0
    assert _score(task, None, answer="Answer: C").value == 0.0
    ambiguous = _score(task, None, answer="Answer: A or B")
    assert ambiguous.value == 0.0 and ambiguous.details["ambiguous"] and "ambiguous" in ambiguous.explanation
    assert (ambiguous.details["mode"], ambiguous.details["action"]) == ("action", "insight_mining")


def test_clarification_questions_are_counted_from_the_trajectory() -> None:
    task = _code_task([{"type": "scalar", "name": "n"}])
    submission = Submission(answers=["n = 4"], evidence={"interactive": _evidence([4], [4])})
    submission.trajectory += [
        UserTurn(content="q", source="task"),
        UserTurn(content="More than 35 mpg.", question="What is efficient?", source="simulator"),
    ]
    score = score_submission(task, submission, None, ScoringSettings())
    assert score.details["clarification"] == {"asked": 1, "answered": 1}
