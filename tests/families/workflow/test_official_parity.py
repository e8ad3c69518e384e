"""Near misses scored beside the official Spider2-V evaluator (xlang-ai/Spider2-V at c2a3a6c,
desktop_env/evaluators/metrics/, Apache-2.0): each expected value is what the official function returned
on the same input, with the official line that decides it quoted in a comment."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from .test_scorers import _score


def _dbt_database(path: Path, value: int, schema: str) -> Path:
    """A DuckDB file as dbt leaves it: the model in schema `schema`, which may be the file's own name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as connection:
        catalog = path.stem
        connection.execute(f"create schema {catalog}.{schema}")
        connection.execute(f"create table {catalog}.{schema}.dim_customers as select {value} as id")
    return path


@pytest.mark.parametrize("schema", ["email_address", "snapshots"])
@pytest.mark.parametrize(("value", "official"), [(1, 1.0), (2, 0.0)])
def test_check_local_database_with_a_schema_named_like_the_file(
    tmp_path: Path, schema: str, value: int, official: float
) -> None:
    # official check_local_duckdb: `conn1.execute(f'set schema to {schema_name}')`, then
    # `SELECT * FROM {table_name}` unqualified: the gold itself scores 1, a changed row 0
    name = f"{schema}.duckdb"
    gold = _dbt_database(tmp_path / "gold" / name, 1, schema)
    mine = _dbt_database(tmp_path / "mine" / name, value, schema)
    score = _score(
        tmp_path, "check_local_database", result={"kind": "file", "path": name},
        expected={"kind": "gold", "path": name}, files={name: mine}, gold={name: gold},
        check_type=["table-schema-content"], schema_name=schema,
    )  # fmt: skip
    assert score.value == official, score.explanation
