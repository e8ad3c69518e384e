"""The append-only journal that generation resumes from (`core.jsonl`): a crash loses at most the item in
flight, and a damaged line is one error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daharness.core.errors import UserError
from daharness.core.jsonl import append_journal, read_journal


def test_a_line_cut_by_a_crash_is_removed_and_the_rest_kept(tmp_path: Path) -> None:
    journal = tmp_path / "review.jsonl"
    append_journal(journal, {"id": 0})
    append_journal(journal, {"id": 1})
    with journal.open("a") as handle:
        handle.write('{"id": 2, "que')  # the process died in this write
    assert read_journal(journal) == [{"id": 0}, {"id": 1}]
    assert journal.read_text() == '{"id": 0}\n{"id": 1}\n'  # so that the next append starts a line
    append_journal(journal, {"id": 2})
    assert [entry["id"] for entry in read_journal(journal)] == [0, 1, 2]


def test_no_journal_is_nothing_done_and_a_bad_line_is_named(tmp_path: Path) -> None:
    assert read_journal(tmp_path / "none.jsonl") == []
    journal = tmp_path / "review.jsonl"
    journal.write_text('{"id": 0}\nnot json\n')
    with pytest.raises(UserError, match=r"review.jsonl:2: not JSON"):
        read_journal(journal)


def test_a_generated_folder_with_broken_or_other_settings_is_refused_with_one_line(tmp_path: Path) -> None:
    from daharness.core.generated_suite import prepare_generated_suite

    table = tmp_path / "iris.csv"
    table.write_text("a,b\n1,2\n")
    out = tmp_path / "suite"
    wanted = {"tables": ["iris.csv"], "per_table": 2}
    manifest = {"family": "closed-form", "format": "dabench"}
    prepare_generated_suite(out, "generation.json", wanted, "m", {"iris.csv": table}, manifest)
    assert json.loads((out / "suite.json").read_text())["name"] == "suite"
    assert (out / "tables" / "iris.csv").read_text() == "a,b\n1,2\n"
    with pytest.raises(
        UserError, match=r"generation.json: this folder was generated with another per-table \(2\)"
    ):
        prepare_generated_suite(out, "generation.json", {**wanted, "per_table": 3}, "m", {}, manifest)
    (out / "generation.json").write_text("{cut")
    with pytest.raises(UserError, match=r"generation.json:1: not valid JSON"):
        prepare_generated_suite(out, "generation.json", wanted, "m", {}, manifest)


def test_a_generated_suite_out_that_is_a_file_is_refused_with_one_line(tmp_path: Path) -> None:
    from daharness.core.generated_suite import prepare_generated_suite

    out = tmp_path / "suite.jsonl"
    out.write_text("{}\n")
    with pytest.raises(UserError, match=r"suite.jsonl: not a folder; choose another --out"):
        prepare_generated_suite(out, "generation.json", {}, "m", {}, {"family": "closed-form"})
    assert out.read_text() == "{}\n"
