"""The DA-Code table scorer: `compat` is the official evaluator, defects included; `corrected` fixes them."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from daharness.families.workspace.scorers.table import compare_tables, score_table

GOLD = "name,score,count\nalice,1.5,3\nbob,2.25,4\ncarol,3.0,5\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def frame(**columns: list) -> pd.DataFrame:
    return pd.DataFrame(columns)


# ---- columns are matched by content ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_renamed_reordered_and_extra_columns_pass(tmp_path: Path, mode: str) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(
        tmp_path,
        "pred.csv",
        "n,extra,who,points\n3,x,alice,1.5\n4,y,bob,2.25\n5,z,carol,3.0\n",
    )
    score = score_table(predicted, gold, mode=mode)  # type: ignore[arg-type]
    assert score.value == 1.0
    candidate = score.details["candidates"][0]
    assert candidate["found"] == ["name", "score", "count"]
    assert candidate["missed"] == []
    assert ["name", "who"] in candidate["matches"]


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_a_missing_gold_column_fails_and_is_named(tmp_path: Path, mode: str) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(tmp_path, "pred.csv", "name,count\nalice,3\nbob,4\ncarol,5\n")
    score = score_table(predicted, gold, mode=mode, score_rule="all")  # type: ignore[arg-type]
    assert score.value == 0.0
    assert score.details["candidates"][0]["missed"] == ["score"]
    assert "missed: score" in score.explanation


def test_different_row_count_fails() -> None:
    gold = frame(a=[1, 2, 3])
    assert compare_tables(frame(a=[1, 2, 3]), gold)[0] == 1.0
    assert compare_tables(frame(a=[1, 2, 3, 3]), gold)[0] == 0.0
    assert compare_tables(frame(a=[1, 2]), gold, mode="compat")[0] == 0.0


# ---- cell rules ------------------------------------------------------------------------------------


def test_numbers_within_tolerance_pass_beyond_fail() -> None:
    gold = frame(x=[1.0, 2.0])
    assert compare_tables(frame(x=[1.009, 2.0]), gold)[0] == 1.0  # corrected default 1e-2
    assert compare_tables(frame(x=[1.011, 2.0]), gold)[0] == 0.0
    assert compare_tables(frame(x=[1.011, 2.0]), gold, tolerance=0.1)[0] == 1.0
    assert compare_tables(frame(x=[1, 2]), gold)[0] == 1.0  # int and float columns compare as numbers


def test_compat_tolerance_is_the_official_0_01() -> None:
    gold = frame(x=[1.0, 2.0])
    assert compare_tables(frame(x=[1.009, 2.0]), gold, mode="compat")[0] == 1.0
    score, details = compare_tables(frame(x=[1.02, 2.0]), gold, mode="compat")
    assert (score, details["tolerance"]) == (0.0, 1e-2)
    assert compare_tables(frame(x=[1.009, 2.0]), gold, mode="corrected")[0] == 1.0


def test_strings_trimmed_and_case_folded_in_both_modes(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.csv", "city\nParis\nBerlin\n")
    predicted = write(tmp_path, "pred.csv", "city\n  PARIS \nberlin\n")
    assert score_table(predicted, gold).value == 1.0
    assert score_table(predicted, gold, mode="compat").value == 1.0
    other = write(tmp_path, "other.csv", "city\nParis\nBern\n")
    assert score_table(other, gold).value == 0.0
    assert score_table(other, gold, mode="compat").value == 0.0


def test_ignore_order_matches_text_of_another_case_in_both_modes(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.csv", "fruit\napple\nBanana\n")
    upper = write(tmp_path, "pred.csv", "fruit\nBANANA\nAPPLE\n")
    assert score_table(upper, gold, ignore_order=True).value == 1.0
    # official: the cell-by-cell rule sorts case-sensitively ("Banana" < "apple", "APPLE" < "BANANA") and
    # pairs the wrong cells, but the hashed match, tried first, sorts the lower-cased text
    assert score_table(upper, gold, mode="compat", ignore_order=True).value == 1.0


def test_compat_reads_the_first_10000_rows_and_scores_an_empty_prediction_0(tmp_path: Path) -> None:
    rows = "".join(f"{i}\n" for i in range(10_005))
    gold = write(tmp_path, "gold.csv", "n\n" + rows)
    tail_differs = write(tmp_path, "pred.csv", "n\n" + rows.replace("10004\n", "-1\n"))
    assert score_table(tail_differs, gold, mode="compat").value == 1.0
    assert score_table(tail_differs, gold).value == 0.0
    empty_gold = write(tmp_path, "empty_gold.csv", "n\n")
    header_only = write(tmp_path, "header.csv", "n\n")
    assert score_table(header_only, empty_gold, mode="compat").value == 0.0
    assert score_table(header_only, empty_gold).value == 1.0


def test_number_written_as_text_compares_as_number_only_in_corrected() -> None:
    gold = frame(v=[5, 7])
    predicted = frame(v=["5.0", " 7"])  # e.g. a column the agent left as text
    assert compare_tables(predicted, gold)[0] == 1.0
    assert compare_tables(predicted, gold, mode="compat")[0] == 0.0
    assert compare_tables(frame(v=["5.0", "8"]), gold)[0] == 0.0


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_nan_equals_nan_but_not_a_value(tmp_path: Path, mode: str) -> None:
    gold = write(tmp_path, "gold.csv", "a,b\n1,x\n,\n3,z\n")
    same = write(tmp_path, "same.csv", "b,a\nx,1\nNA,\nz,3\n")  # NA and an empty cell are both NaN
    filled = write(tmp_path, "filled.csv", "a,b\n1,x\n2,y\n3,z\n")
    assert score_table(same, gold, mode=mode).value == 1.0  # type: ignore[arg-type]
    assert score_table(filled, gold, mode=mode, score_rule="all").value == 0.0  # type: ignore[arg-type]


# ---- options ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_condition_cols_restricts_the_required_columns(tmp_path: Path, mode: str) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(tmp_path, "pred.csv", "name,count\nalice,3\nbob,4\ncarol,5\n")
    assert score_table(predicted, gold, mode=mode, condition_cols=[0, 2], score_rule="all").value == 1.0  # type: ignore[arg-type]
    assert score_table(predicted, gold, mode=mode, condition_cols=[-1], score_rule="all").value == 1.0  # type: ignore[arg-type]
    assert score_table(predicted, gold, mode=mode, condition_cols=["name", "count"]).value == 1.0  # type: ignore[arg-type]
    assert score_table(predicted, gold, mode=mode, condition_cols=[1], score_rule="all").value == 0.0  # type: ignore[arg-type]
    assert score_table(predicted, gold, mode=mode, condition_cols=["score"], score_rule="all").value == 0.0  # type: ignore[arg-type]


def test_condition_cols_out_of_range_scores_0_in_compat_and_raises_in_corrected(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(tmp_path, "pred.csv", GOLD)
    compat = score_table(predicted, gold, mode="compat", condition_cols=[7])
    assert compat.value == 0.0
    assert "out of range" in compat.explanation
    with pytest.raises(ValueError, match="out of range"):
        score_table(predicted, gold, condition_cols=[7])
    with pytest.raises(ValueError, match="not a gold column"):
        score_table(predicted, gold, condition_cols=["nope"])


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_divide_gives_the_fraction_all_gives_nothing(tmp_path: Path, mode: str) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(tmp_path, "pred.csv", "name,score,count\nalice,1.5,3\nbob,2.25,4\ncarol,3.0,6\n")
    assert score_table(predicted, gold, mode=mode, score_rule="divide").value == pytest.approx(2 / 3)  # type: ignore[arg-type]
    assert score_table(predicted, gold, mode=mode, score_rule="all").value == 0.0  # type: ignore[arg-type]
    assert score_table(write(tmp_path, "ok.csv", GOLD), gold, mode=mode, score_rule="divide").value == 1.0  # type: ignore[arg-type]


def test_default_score_rule_is_all_in_corrected_and_divide_in_compat(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(tmp_path, "pred.csv", "name,score,count\nalice,1.5,3\nbob,2.25,4\ncarol,3.0,6\n")
    assert score_table(predicted, gold).value == 0.0
    compat = score_table(predicted, gold, mode="compat")
    assert (compat.value, compat.details["score_rule"]) == (pytest.approx(2 / 3), "divide")


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_several_gold_candidates_best_counts(tmp_path: Path, mode: str) -> None:
    first = write(tmp_path, "gold_a.csv", "k\n1\n2\n")
    second = write(tmp_path, "gold_b.csv", "k\n1\n3\n")
    predicted = write(tmp_path, "pred.csv", "k\n1\n3\n")
    score = score_table(predicted, [first, second], mode=mode)  # type: ignore[arg-type]
    assert score.value == 1.0
    assert score.details["best"] == 1
    assert "gold_b.csv" in score.explanation
    wrong = write(tmp_path, "wrong.csv", "k\n4\n5\n")
    assert score_table(wrong, [first, second], mode=mode).value == 0.0  # type: ignore[arg-type]


# ---- ignore_order: defect 1 ------------------------------------------------------------------------

ORDERED = "name,value\na,1\nb,2\nc,3\n"
SHUFFLED_ROWS = "value,name\n3,c\n1,a\n2,b\n"
SCRAMBLED = "name,value\na,2\nb,3\nc,1\n"  # every column right as a set, every row wrong


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_ignore_order_accepts_shuffled_rows(tmp_path: Path, mode: str) -> None:
    gold = write(tmp_path, "gold.csv", ORDERED)
    predicted = write(tmp_path, "pred.csv", SHUFFLED_ROWS)
    assert score_table(predicted, gold, mode=mode, ignore_order=True).value == 1.0  # type: ignore[arg-type]
    assert score_table(predicted, gold, mode=mode, ignore_order=False, score_rule="all").value == 0.0  # type: ignore[arg-type]


def test_ignore_order_keeps_row_pairing_in_corrected_but_not_in_compat(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.csv", ORDERED)
    predicted = write(tmp_path, "pred.csv", SCRAMBLED)
    assert score_table(predicted, gold, ignore_order=True).value == 0.0
    # The official evaluator sorts each column on its own, so the scrambled table passes.
    assert score_table(predicted, gold, mode="compat", ignore_order=True, score_rule="all").value == 1.0
    divided = score_table(predicted, gold, ignore_order=True, score_rule="divide")
    assert divided.value == 0.5  # name is found; value cannot be paired with it
    assert divided.details["candidates"][0]["missed"] == ["value"]


def test_ignore_order_pairs_rows_whose_numbers_differ_within_tolerance() -> None:
    # Ties in the gold numbers broken by the text column, with the prediction a hair off either way.
    gold = frame(x=[0.5, 0.5, 0.125, 0.125], s=["a", "b", "c", "d"])
    predicted = frame(s=["b", "a", "d", "c"], x=[0.4999, 0.5001, 0.12501, 0.12499])
    assert compare_tables(predicted, gold, ignore_order=True)[0] == 1.0
    swapped = frame(s=["b", "a", "d", "c"], x=[0.4999, 0.5001, 0.9, 0.12499])
    assert compare_tables(swapped, gold, ignore_order=True)[0] == 0.0


# ---- timeout: defect 2 -----------------------------------------------------------------------------


def test_timeout_scores_0_in_compat_and_is_off_in_corrected(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(tmp_path, "pred.csv", GOLD)
    compat = score_table(predicted, gold, mode="compat", timeout_s=1e-6)
    assert compat.value == 0.0
    assert compat.details["timed_out"] is True
    corrected = score_table(predicted, gold)
    assert (corrected.value, corrected.details["timeout_s"]) == (1.0, None)
    assert score_table(predicted, gold, mode="compat").details["timeout_s"] == 10.0
    assert score_table(predicted, gold, mode="compat", timeout_s=math.inf).value == 1.0
    assert score_table(predicted, gold, timeout_s=1e-6).value == 0.0  # an explicit limit applies in both


def test_timeout_works_in_a_worker_thread(tmp_path: Path) -> None:
    # A signal-based timeout (the official one) cannot be set outside the main thread.
    gold = write(tmp_path, "gold.csv", GOLD)
    predicted = write(tmp_path, "pred.csv", GOLD)
    with ThreadPoolExecutor(max_workers=2) as pool:
        slow = pool.submit(score_table, predicted, gold, mode="compat", timeout_s=1e-6)
        fine = pool.submit(score_table, predicted, gold, mode="compat")
        assert (slow.result().value, fine.result().value) == (0.0, 1.0)
    assert compare_tables(frame(a=[1]), frame(a=[1]), timeout_s=1e-9)[1]["timed_out"] is True


# ---- files -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["corrected", "compat"])
def test_missing_or_unreadable_prediction_scores_0_without_raising(tmp_path: Path, mode: str) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    missing = score_table(tmp_path / "absent.csv", gold, mode=mode)  # type: ignore[arg-type]
    assert missing.value == 0.0
    assert "no predicted file absent.csv" in missing.explanation
    empty = score_table(write(tmp_path, "empty.csv", ""), gold, mode=mode)  # type: ignore[arg-type]
    assert empty.value == 0.0
    assert "cannot read empty.csv" in empty.explanation
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00\x81garbage")
    assert score_table(binary, gold, mode=mode).value == 0.0  # type: ignore[arg-type]
    assert score_table(tmp_path, gold, mode=mode).value == 0.0  # type: ignore[arg-type]


def test_missing_gold_scores_0_in_compat_and_raises_in_corrected(tmp_path: Path) -> None:
    predicted = write(tmp_path, "pred.csv", GOLD)
    good = write(tmp_path, "gold.csv", GOLD)
    # Officially the exception of one gold candidate ends the whole task, even after a match.
    assert score_table(predicted, [good, tmp_path / "gone.csv"], mode="compat").value == 0.0
    with pytest.raises(ValueError, match="cannot read gold file"):
        score_table(predicted, tmp_path / "gone.csv")


def test_unknown_options_raise() -> None:
    with pytest.raises(ValueError, match="unknown table mode"):
        compare_tables(frame(a=[1]), frame(a=[1]), mode="strict")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="score_rule"):
        compare_tables(frame(a=[1]), frame(a=[1]), score_rule="some")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["table", "database", "text"])
def test_a_negative_tolerance_or_timeout_is_an_error_when_the_task_is_loaded(name: str) -> None:
    from daharness.core.errors import UserError
    from daharness.core.registry import scorers

    entry = scorers.get(name)
    base = {"file": "out.csv", "expected": 1} if name == "text" else {"file": "out.csv"}
    assert entry.parse_options({**base, "tolerance": 0}, "task t").tolerance == 0.0
    with pytest.raises(
        UserError, match=rf"task t: scorer '{name}': option 'tolerance': .*greater than or equal to 0"
    ):
        entry.parse_options({**base, "tolerance": -0.01}, "task t")
    if name != "text":
        assert entry.parse_options({**base, "timeout_s": math.inf}, "task t").timeout_s == math.inf
        with pytest.raises(
            UserError, match=rf"task t: scorer '{name}': option 'timeout_s': .*greater than 0"
        ):
            entry.parse_options({**base, "timeout_s": 0}, "task t")
