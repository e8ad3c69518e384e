"""Spider2-V's dbt evaluator functions: `check_local_database` (DuckDB / SQLite against a gold database)
and `check_yaml_file` (rules on a YAML file's values), after the official ones in `metrics/dbt.py`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from daharness.core.registry import scorer
from daharness.core.score import Score
from daharness.core.scoring import ScoringContext
from daharness.families.workflow.modes import WORKFLOW_MODES
from daharness.families.workflow.scorers.inputs import EvaluatorOptions, evaluate
from daharness.scoring.outputs import duckdb_read_only

CheckType = Literal[
    "table", "view", "table-schema", "view-schema", "table-schema-content", "view-schema-content"
]
# each check implies the lighter ones, as the official `validate_check_type`
_IMPLIES = {
    "table-schema-content": ("table-schema", "table"),
    "view-schema-content": ("view-schema", "view"),
    "table-schema": ("table",),
    "view-schema": ("view",),
}


class LocalDatabaseOptions(EvaluatorOptions):
    db_type: Literal["duckdb", "sqlite3"] = "duckdb"
    check_type: list[CheckType] = Field(default_factory=lambda: ["table", "view"])
    table_targets: list[str] = Field(default_factory=list)  # empty: every table
    view_targets: list[str] = Field(default_factory=list)
    schema_name: str = ""  # compare this schema instead of the default one; it must exist in the result


@scorer("spider2v.check_local_database", options=LocalDatabaseOptions, modes=WORKFLOW_MODES)
def check_local_database(context: ScoringContext, options: LocalDatabaseOptions) -> Score:
    """1 when the result database has the gold database's tables and views (names; with `-schema`, their
    columns; with `-schema-content`, their rows in order), limited to the targets when given.

    compat writes names into the SQL bare, as the official function does (`PRAGMA table_info({name})`,
    `SELECT * FROM {name}`, `set schema to {schema}`), so a name that needs quoting (`my table`, `order`,
    `Sales-2024`) makes it fail and the task score 0; corrected quotes every name."""
    checks = set(options.check_type)
    for check in list(checks):
        checks.update(_IMPLIES.get(check, ()))
    sql = _OfficialSql() if context.mode == "compat" else _QuotedSql(options.db_type)

    def metric(result: Path, expected: Path) -> tuple[float, str]:
        with _connect(options.db_type, result) as mine, _connect(options.db_type, expected) as gold:
            if options.schema_name:
                if not mine(*sql.schema_exists(options.schema_name)):
                    return 0.0, f"schema {options.schema_name} does not exist in the result"
                # As officially: make it the current schema and use bare names. A qualified
                # "schema"."table" is ambiguous when the database file has the schema's name (dbt's
                # email_address schema in email_address.duckdb) and DuckDB refuses it.
                for query in (mine, gold):
                    query(sql.set_schema(options.schema_name))
            for kind, targets in (("table", options.table_targets), ("view", options.view_targets)):
                if kind not in checks:
                    continue
                names = _objects(mine, kind, targets)
                wanted = _objects(gold, kind, targets)
                if names != wanted:
                    return 0.0, f"{kind}s {names} differ from the expected {wanted}"
                for name in names:
                    columns = sql.columns(name)
                    if f"{kind}-schema" in checks and mine(columns) != gold(columns):
                        return 0.0, f"{kind} {name} has other columns than expected"
                    rows = sql.rows(name)
                    if f"{kind}-schema-content" in checks and mine(rows) != gold(rows):
                        return 0.0, f"the rows of {kind} {name} differ from the expected ones"
        return 1.0, f"database matches on {', '.join(sorted(checks))}"

    return evaluate(context, options, metric)


class _QuotedSql:
    """The queries of corrected: every name quoted, values passed as parameters."""

    def __init__(self, db_type: str) -> None:
        self.db_type = db_type

    def schema_exists(self, schema: str) -> tuple[str, list[str]]:
        return "select schema_name from information_schema.schemata where schema_name = ?", [schema]

    def set_schema(self, schema: str) -> str:
        return f"set schema = {_quoted(schema)}"

    def columns(self, name: str) -> str:
        if self.db_type == "duckdb":
            return f"pragma table_info('{_quoted(name)}')"
        return f"pragma table_info({_quoted(name)})"

    def rows(self, name: str) -> str:
        return f"select * from {_quoted(name)}"


class _OfficialSql:
    """The queries of compat, word for word the official ones: names and values written in bare."""

    def schema_exists(self, schema: str) -> tuple[str]:
        return (f"select schema_name from information_schema.schemata where schema_name = '{schema}'",)

    def set_schema(self, schema: str) -> str:
        return f"set schema to {schema}"

    def columns(self, name: str) -> str:
        return f"PRAGMA table_info({name})"

    def rows(self, name: str) -> str:
        return f"SELECT * FROM {name}"


Query = Callable[..., list[tuple[Any, ...]]]


@contextmanager
def _connect(db_type: str, path: Path) -> Iterator[Query]:
    """A read-only connection as a query function."""
    if db_type == "duckdb":
        connection: Any = duckdb_read_only(path)
    else:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        yield lambda sql, params=(): connection.execute(sql, params).fetchall()
    finally:
        connection.close()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _objects(query: Query, kind: str, targets: list[str]) -> list[str]:
    """The tables or views by name, as officially from sqlite_master (DuckDB has it too)."""
    rows = query(f"select name from sqlite_master where type = '{kind}' order by name")
    return [row[0] for row in rows if not targets or row[0] in targets]


class YamlFileOptions(EvaluatorOptions):
    pass


@scorer("spider2v.check_yaml_file", options=YamlFileOptions)
def check_yaml_file(context: ScoringContext, options: YamlFileOptions) -> Score:
    """1 when every rule [match_type, key_path, value] holds on the YAML file: the value at the key path
    (dict keys; list items by index, or by a [key, value] pair they hold) `match`es the value, is `in`
    it, `contain`s it, or is `not_null`."""

    def metric(result: Path, rules: Any) -> tuple[float, str]:
        import yaml

        config = yaml.safe_load(result.read_text(encoding="utf-8"))
        for match_type, key_path, expected in rules:
            value = _walk(config, key_path)
            passed = {
                "match": lambda v, e: v == e,
                "in": lambda v, e: v in e,
                "contain": lambda v, e: e in v,
                "not_null": lambda v, e: bool(v),
            }[match_type](value, expected)
            if not passed:
                return 0.0, f"{match_type} failed at {key_path}: {value!r}"
        return 1.0, f"{len(rules)} rules hold"

    return evaluate(context, options, metric)


def _walk(value: Any, key_path: list[Any]) -> Any:
    for key in key_path:
        if isinstance(value, dict):
            value = value[key]
        elif isinstance(key, int) or (isinstance(key, str) and key.lstrip("-").isdigit()):
            value = value[int(key)]
        else:
            field, wanted = key
            value = next(item for item in value if item[field] == wanted)
    return value
