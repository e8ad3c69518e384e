"""Reading and appending JSON Lines with errors that name the file and line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

from daharness.core.errors import UserError, located


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for every non-blank line; a bad line is a UserError naming it (not
    UTF-8, not JSON, nested too deeply, not an object)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                where = f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
                raise located(path, f"not UTF-8 text ({where})", number) from None
            if number == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark some editors write
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise located(path, f"not valid JSON ({exc.msg}, column {exc.colno})", number) from None
            except RecursionError:
                raise located(path, "JSON nested too deeply", number) from None
            if not isinstance(value, dict):
                raise located(path, f"expected a JSON object, got {type(value).__name__}", number)
            yield number, value


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [value for _, value in iter_jsonl(path)]


def dumps_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"


def read_text(path: Path) -> str:
    """A UTF-8 text file; missing, unreadable or not UTF-8 is a UserError naming it (and the line)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        line = text_line_of(path, exc.start)
        raise located(path, f"not UTF-8 text (byte at offset {exc.start})", line) from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None


def read_json(path: Path) -> Any:
    """One JSON document; a missing or malformed file is a UserError naming it (and the line)."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise located(path, f"not valid JSON ({exc.msg})", exc.lineno) from None
    except RecursionError:
        raise UserError(f"{path}: JSON nested too deeply") from None


def text_line_of(path: Path, offset: int) -> int | None:
    """The line number of a byte offset of a file."""
    try:
        with path.open("rb") as handle:
            return handle.read(offset).count(b"\n") + 1
    except OSError:
        return None


def json_text(model: BaseModel, indent: int | None = None) -> str:
    """A model as JSON, whatever text it holds: strings that are not valid Unicode (lone surrogates, from
    file names that are not UTF-8 or a model's reply) are written with the odd code points escaped as
    text (`\\udcff`), so that the file stays readable by every JSON reader, this one included."""
    from pydantic_core import PydanticSerializationError  # loaded with any model

    try:
        return model.model_dump_json(indent=indent)
    except (UnicodeError, PydanticSerializationError):
        data = _clean_text(model.model_dump(mode="python"))
        separators = (",", ":") if indent is None else None
        return json.dumps(data, indent=indent, separators=separators, ensure_ascii=False, default=str)


def _clean_text(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_clean_text(key): _clean_text(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_text(item) for item in value]
    return value


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The finished items of an append-only journal (one JSON object a line, each flushed when done); a
    last line cut short by a crash is removed, so that its item is made again."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines[-1]:  # no newline at the end: the write was cut
        path.write_text("".join(line + "\n" for line in lines[:-1]), encoding="utf-8")
    entries = []
    for number, line in enumerate(lines[:-1], start=1):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            raise located(path, "not JSON; remove the line to make its item again", number) from None
    return entries


def append_journal(path: Path, entry: dict[str, Any]) -> None:
    """One finished item, on disk before the next one starts."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def write_atomic(path: Path, text: str) -> None:
    """Replace a file whole: a reader (or a crash) never sees half of it."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
