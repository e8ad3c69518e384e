"""Search files for rows of a data set: run inside the sandbox (standard library only) and on the host.

A needle is one row of values (the features of a hidden test row). A line of a file, or a record of a
JSON file, contains the row if it holds every value of the row (numbers compared after rounding, text
without case). Compressed files (gzip, bz2, xz, zip members) are searched decompressed. A quick byte
search for the row's most distinctive value skips files that cannot hold it.

    python row_search.py NEEDLES.json ROOT [ROOT ...]   # prints the hits as JSON: [[path, needle], ...]

searches the ROOTs and the folders of the running Python's installation and packages.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import re
import sys
import zipfile
from collections import Counter
from collections.abc import Iterator

DATA_SUFFIXES = {
    ".csv", ".tsv", ".tab", ".txt", ".dat", ".data", ".arff", ".json", ".jsonl", ".gz", ".bz2", ".xz",
    ".zip", ".whl", ".svm", ".rst", ".md", ".html", ".xml",
}  # fmt: skip
SKIP = ("/proc", "/sys", "/dev")
_MAX_RECORD = 4096
MAX_BYTES = 200 << 20
_TOKEN = re.compile(r"[^,;\s\"'\[\]{}:]+")
_DATE = re.compile(r"(\d{4})[-/](\d\d)[-/](\d\d)")


def normalize(token: str) -> str:
    try:
        return repr(round(float(token), 6))
    except ValueError:
        return _DATE.sub(r"\1-\2-\3", token.strip().casefold())


Needle = tuple[Counter[str], list[bytes], list[bytes]]


def forms(value: str) -> list[bytes]:
    """How a value may be written: as given, without a trailing .0 or a leading 0, dates with slashes."""
    found = {value, value.removesuffix(".0"), value[1:] if value.startswith("0.") else value}
    if _DATE.fullmatch(value):
        found.add(_DATE.sub(r"\1/\2/\3", value))
    return [form.encode() for form in found if form]


def prepare(rows: list[list[str]]) -> list[Needle]:
    """Each row as a multiset of normalized values, with the forms of its two longest values."""
    needles = []
    for row in rows:
        first, second = sorted(row, key=len, reverse=True)[:2]
        needles.append((Counter(normalize(value) for value in row), forms(first), forms(second)))
    return needles


def contents(path: str) -> Iterator[tuple[str, bytes]]:
    """The file's bytes, decompressed when it is compressed (zip: each member)."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_BYTES)
    openers = {b"\x1f\x8b": gzip.decompress, b"BZ": bz2.decompress, b"\xfd7zXZ": lzma.decompress}
    for magic, opener in openers.items():
        if data.startswith(magic):
            try:
                yield path, opener(data)
            except Exception:
                return
            return
    if data.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for member in archive.infolist():
                    if (
                        member.file_size <= MAX_BYTES
                        and os.path.splitext(member.filename)[1] in DATA_SUFFIXES
                    ):
                        yield f"{path}!{member.filename}", archive.read(member)
        except Exception:
            return
        return
    yield path, data


def json_records(data: bytes) -> Iterator[list[str]]:
    """The records of a JSON list of objects (a record spans several lines there); none otherwise."""
    if data.lstrip()[:1] != b"[":
        return
    try:
        parsed = json.loads(data.decode("utf-8", errors="ignore"))
    except ValueError:
        return
    for item in parsed if isinstance(parsed, list) else ():
        if isinstance(item, dict):
            yield [str(value) for value in item.values()]


def segment(data: bytes, position: int) -> bytes | None:
    """The record around a position: its line, or its bracketed row in a one-line JSON array; None
    when that is longer than any row could be."""
    low, high = max(0, position - _MAX_RECORD), position + _MAX_RECORD
    begin = max(data.rfind(mark, low, position) for mark in (b"\n", b"[", b"{"))
    ends = [found for mark in (b"\n", b"]", b"}") if (found := data.find(mark, position, high)) >= 0]
    if (begin < 0 and low > 0) or (not ends and high < len(data)):
        return None
    return data[begin + 1 : min(ends) if ends else len(data)]


def contains(tokens: list[str], needle: Counter[str]) -> bool:
    # a record of the row's size (a few extra columns allowed), not a long text full of numbers
    if len(tokens) > 2 * sum(needle.values()) + 4:
        return False
    return not needle - Counter(normalize(token) for token in tokens)


def hits_in(name: str, data: bytes, needles: list[Needle]) -> list[list[object]]:
    """Needles found in one file's bytes: around each occurrence of a row's longest value."""
    found: set[int] = set()
    parsed: list[list[str]] | None = None
    for index, (needle, anchors, seconds) in enumerate(needles):
        if not any(form in data for form in seconds):
            continue
        for anchor in anchors:
            position = data.find(anchor)
            if position >= 0 and parsed is None and data.lstrip()[:1] == b"[":
                parsed = list(json_records(data))
            if position >= 0 and parsed and any(contains(record, needle) for record in parsed):
                found.add(index)
            while position >= 0 and index not in found:
                record = segment(data, position)
                if record is not None and any(form in record for form in seconds):
                    tokens = _TOKEN.findall(record.decode("utf-8", errors="ignore"))
                    if contains(tokens, needle):
                        found.add(index)
                position = data.find(anchor, position + len(anchor))
            if index in found:
                break
    return [[name, index] for index in sorted(found)]


def search(roots: list[str], rows: list[list[str]], exclude: tuple[str, ...] = ()) -> list[list[object]]:
    needles = prepare(rows)
    hits: list[list[object]] = []
    seen: set[str] = set()
    for root in roots:
        for folder, dirs, files in os.walk(root):
            real = os.path.realpath(folder)
            if folder.startswith(SKIP + exclude) or real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            for name in files:
                path = os.path.join(folder, name)
                if os.path.splitext(name)[1].lower() not in DATA_SUFFIXES or not os.path.isfile(path):
                    continue
                try:
                    for member, data in contents(path):
                        hits += hits_in(member, data, needles)
                except OSError:
                    continue
    return hits


def python_roots() -> list[str]:
    """Where this Python's packages are: folders above them may not be listable (the sandbox mounts
    the parents of a Python installation as pass-through only), but the agent knows these paths."""
    import site

    found = [sys.prefix, sys.base_prefix, *site.getsitepackages(), *sys.path]
    return [path for path in dict.fromkeys(found) if path and os.path.isdir(path)]


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        config = json.load(handle)
    roots = [*sys.argv[2:], *python_roots()]
    print(json.dumps(search(roots, config["rows"], tuple(config.get("exclude", [])))))
