"""Snowflake's local emulator as the harness serves it: fakesnow's server (its REST protocol, which the real
`snowflake-connector-python` speaks to), with what a Snowflake account does that fakesnow leaves out and
Spider2-V's scripts rely on: `CREATE OR REPLACE DATABASE` replaces one, `DROP DATABASE` drops one, `COPY INTO t FROM @stage` reads with the stage's file format, a file format may name the default RECORD_DELIMITER, a new database has a PUBLIC schema and becomes the session's current
database and schema, and `USE DATABASE` makes PUBLIC the current schema when there is one.

  python -m daharness.families.workflow.cloud.snowflake_server PORT

One account: every connection shares the same databases (as on Snowflake). Runs until killed.
"""

from __future__ import annotations

import contextlib
import re
import sys
from typing import Any

_CREATE_DATABASE = re.compile(
    r"^\s*create\s+(or\s+replace\s+)?(?:transient\s+)?database\s+(?:if\s+not\s+exists\s+)?([\w$]+|\"[^\"]+\")\s*;?\s*$",
    re.IGNORECASE,
)
_DROP_DATABASE = re.compile(
    r"^\s*drop\s+database\s+(if\s+exists\s+)?([\w$]+|\"[^\"]+\")(?:\s+cascade|\s+restrict)?\s*;?\s*$",
    re.IGNORECASE,
)
_CREATE_STAGE = re.compile(
    r"^\s*create\s+(?:or\s+replace\s+)?(?:temporary\s+)?stage\s+(?:if\s+not\s+exists\s+)?([\w$.\"]+)"
    r".*?\bfile_format\s*=\s*(\([^)]*\)|[\w$.\"]+)",
    re.IGNORECASE | re.DOTALL,
)
_COPY_FROM_STAGE = re.compile(r"^\s*copy\s+into\s+.*?\bfrom\s+@([\w$.\"]+)", re.IGNORECASE | re.DOTALL)
# Snowflake's default record delimiter, said explicitly (fakesnow refuses the option)
_DEFAULT_RECORD_DELIMITER = re.compile(r"\brecord_delimiter\s*=\s*'\\n'", re.IGNORECASE)
_USE_DATABASE = re.compile(r"^\s*use\s+database\s+([\w$]+|\"[^\"]+\")\s*;?\s*$", re.IGNORECASE)


def _with_account_behaviour() -> None:
    from fakesnow.cursor import FakeSnowflakeCursor

    plain_execute = FakeSnowflakeCursor.execute
    stage_formats: dict[str, str] = {}  # a stage's last name -> its FILE_FORMAT clause's value

    def with_stage_format(text: str) -> str:
        """COPY from a stage reads its files with the stage's file format (fakesnow's COPY would not)."""
        copied = _COPY_FROM_STAGE.match(text)
        if not copied or re.search(r"\bfile_format\b", text, re.IGNORECASE):
            return text
        value = stage_formats.get(copied.group(1).split(".")[-1].strip('"').upper())
        if value is None:
            return text
        clause = value if value.startswith("(") else f"(FORMAT_NAME = '{value}')"
        return f"{text.rstrip().rstrip(';')} FILE_FORMAT = {clause}"

    def execute(self: Any, command: str, *args: Any, **kwargs: Any) -> Any:
        text = _DEFAULT_RECORD_DELIMITER.sub("", command) if isinstance(command, str) else ""
        if dropped := _DROP_DATABASE.match(text):
            return drop_database(self, dropped.group(2), if_exists=bool(dropped.group(1)))
        created = _CREATE_DATABASE.match(text)
        if created and created.group(1):  # OR REPLACE: fakesnow would refuse an existing one
            drop_database(self._conn.cursor(), created.group(2), if_exists=True)
        if staged := _CREATE_STAGE.match(text):
            stage_formats[staged.group(1).split(".")[-1].strip('"').upper()] = staged.group(2)
        result = plain_execute(self, with_stage_format(text) if text else command, *args, **kwargs)
        if created:
            side = self._conn.cursor()
            plain_execute(side, f"CREATE SCHEMA IF NOT EXISTS {created.group(2)}.PUBLIC")
            plain_execute(side, f"USE DATABASE {created.group(2)}")
            plain_execute(side, "USE SCHEMA PUBLIC")
        elif _USE_DATABASE.match(text):
            side = self._conn.cursor()
            with contextlib.suppress(
                Exception
            ):  # a database without PUBLIC: no current schema, as on Snowflake
                plain_execute(side, "USE SCHEMA PUBLIC")
        return result

    def drop_database(cursor: Any, name: str, *, if_exists: bool) -> Any:
        """DuckDB detaches a database (fakesnow passes DROP DATABASE on, which DuckDB does not know)."""
        import snowflake.connector.errors

        upper = name.strip('"') if name.startswith('"') else name.upper()
        known = {
            row[0]
            for row in cursor._duck_conn.execute("SELECT database_name FROM duckdb_databases()").fetchall()
        }
        if upper not in known:
            if not if_exists:
                raise snowflake.connector.errors.ProgrammingError(
                    msg=f"Database '{upper}' does not exist or not authorized.", errno=2003, sqlstate="02000"
                )
        else:
            cursor._duck_conn.execute("USE memory")  # DuckDB will not detach the current database
            cursor._duck_conn.execute(f'DETACH DATABASE "{upper}"')
            if cursor._conn.database == upper:
                cursor._conn.database, cursor._conn._schema = None, None
                cursor._conn.database_set = cursor._conn.schema_set = False
        return plain_execute(cursor, f"SELECT '{upper} successfully dropped.' AS \"status\"")

    FakeSnowflakeCursor.execute = execute  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    import uvicorn

    _with_account_behaviour()
    import fakesnow.server

    uvicorn.run(fakesnow.server.app, host="127.0.0.1", port=int(argv[0]), log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
