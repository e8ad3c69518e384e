"""Every official DA-Code eval config loads with the option shapes the official metric functions take
(yiyihum/da-code b211daf, da_agent/evaluators/metrics/table.py); a config no scorer can take is refused
alone, with the reason, and the other tasks are scored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers import shared_folder

from daharness.families.workspace.dacode import dacode_suite, load_dacode
from daharness.families.workspace.rescore import rescore_dacode
from daharness.families.workspace.scorers.database import score_database

CONFIGS = shared_folder() / "dacode-public" / "official-configs"


@pytest.mark.skipif(not (CONFIGS / "eval_all.jsonl").is_file(), reason=f"no official configs at {CONFIGS}")
def test_every_official_config_loads(tmp_path: Path) -> None:
    refused: dict[str, str] = {}
    tasks = load_dacode(
        CONFIGS / "all.jsonl", CONFIGS / "eval_all.jsonl", source_dir=tmp_path, gold_dir=tmp_path,
        suite="dacode", refused=refused,
    )  # fmt: skip
    assert (len(tasks), refused) == (500, {})
    by_id = {task.id: task for task in tasks}
    # compare_sqlite with per-table lists: condition_tabs, condition_cols, ignore_order
    options = by_id["data-wrangling-047"].scorers[0].options
    assert options["condition_tabs"] == ["belts", "cards"] and options["ignore_order"] == [True, True]
    # one compare_csv over two result files: officially run once per file and averaged
    assert [spec.options["file"] for spec in by_id["dm-csv-027"].scorers] == [
        "Top_10_countries.csv",
        "Top_10_Movies.csv",
    ]


def _database(path: Path, cities: list[tuple[str, float]]) -> Path:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE people (id INTEGER, name TEXT)")
    connection.executemany("INSERT INTO people VALUES (?, ?)", [(1, "a"), (2, "b"), (3, "c")])
    connection.execute("CREATE TABLE cities (city TEXT, pop REAL)")
    connection.executemany("INSERT INTO cities VALUES (?, ?)", cities)
    connection.commit()
    connection.close()
    return path


CITIES = [("x", 1.0), ("y", 2.0)]


@pytest.mark.parametrize(
    ("options", "official"),
    [
        # official compare_sqlite: compare_csv(..., ignore_order=ignore_order[i]) per table, min -> 1.0
        ({"ignore_order": [False, True]}, 1.0),
        # ignore_order[1] raises IndexError; evaluate.py's catch-all scores the task 0.0
        ({"ignore_order": [True]}, 0.0),
        ({"ignore_order": [False, False]}, 0.0),  # the second table's rows are reversed
        ({"tables": ["cities"], "condition_cols": [[1]], "ignore_order": [True]}, 1.0),
    ],
)
def test_per_table_options_as_the_official_compare_sqlite(
    tmp_path: Path, options: dict, official: float
) -> None:
    gold = _database(tmp_path / "gold.db", CITIES)
    predicted = _database(tmp_path / "pred.db", CITIES[::-1])
    assert score_database(predicted, gold, mode="compat", **options).value == official


def test_one_unscorable_config_is_refused_and_the_rest_scored(tmp_path: Path) -> None:
    root = tmp_path / "dacode"
    for task_id in ("a", "b", "c"):
        (root / "source" / task_id).mkdir(parents=True)
        (root / "gold" / task_id).mkdir(parents=True)
        (root / "gold" / task_id / "out.csv").write_text("x,y\n1,2\n3,4\n")
        out = tmp_path / "outputs" / task_id
        (out / "dabench").mkdir(parents=True)
        (out / "out.csv").write_text("x,y\n1,2\n3,4\n")
        (out / "dabench" / "result.json").write_text(json.dumps({"finished": True, "result": "out.csv"}))
    (root / "tasks.jsonl").write_text(
        "".join(json.dumps({"id": i, "instruction": "go"}) + "\n" for i in "abc")
    )
    evals = [
        {"id": task_id, "func": ["compare_csv"], "result": [{"file": ["out.csv"]}], "options": [option]}
        for task_id, option in (
            ("a", {}),
            ("b", {"ignore_order": "sometimes"}),
            ("c", {"ignore_order": [True]}),
        )
    ]
    (root / "eval.jsonl").write_text("".join(json.dumps(row) + "\n" for row in evals))

    suite = dacode_suite(root, {})
    assert [task.id for task in suite.tasks] == ["a", "c"]
    assert list(suite.unsupported) == ["b"] and "ignore_order" in suite.unsupported["b"]
    figures, _ = rescore_dacode(
        root / "tasks.jsonl", root / "eval.jsonl", gold_dir=root / "gold", outputs_dir=tmp_path / "outputs",
        source_dir=None, mode="compat", confined=False,
    )  # fmt: skip
    assert figures["scores"] == {"a": 1.0, "c": 1.0}
    assert list(figures["refused"]) == ["b"] and "eval.jsonl line 2" in figures["refused"]["b"]
