"""Reading and appending JSON Lines with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError, located


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for every non-blank line; a bad line is a UserError."""
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise located(path, f"not valid JSON ({exc.msg}, column {exc.colno})", number) from None
            if not isinstance(value, dict):
                raise located(path, f"expected a JSON object, got {type(value).__name__}", number)
            yield number, value


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [value for _, value in iter_jsonl(path)]


def dumps_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"


def read_json(path: Path) -> Any:
    """One JSON document; a missing or malformed file is a UserError naming it (and the line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise located(path, f"not valid JSON ({exc.msg})", exc.lineno) from None
    except RecursionError:
        raise UserError(f"{path}: JSON nested too deeply") from None
