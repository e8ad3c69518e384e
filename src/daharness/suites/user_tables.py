"""A user's own tables (`daharness generate ... --tables DIR`, and tables shown to a model in a prompt),
read in the harness process with caps.

The tables are the user's, as Excel or a colleague left them: Latin-1 text, an empty file, a binary file
named `.csv`, a table of 20,000 columns, a link to a file elsewhere. Each is found inside DIR
(`core/paths.py`: a link out of it is refused), read only up to `TableLimits.read_bytes`, decoded with the
encoding given or detected (UTF-8, else UTF-16 with its byte-order mark, else Windows-1252 as Excel
writes it, else Latin-1), parsed by pandas up to `rows` rows and `columns` columns, and described for the
model up to `description_chars` characters. A table that cannot be read is skipped with one line naming
it; whatever a description leaves out is said in it (so the model knows) and in one note (so the user
knows).
"""

from __future__ import annotations

import codecs
import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from daharness.core.errors import UserError
from daharness.core.paths import Refused, SuiteFolder

if TYPE_CHECKING:
    import pandas as pd

EXCEL_ENCODING = "cp1252"  # what Excel on a Western Windows writes as "CSV"
CHARS_PER_TOKEN = 4  # a rough rule for English and numbers; a figure to plan with, not a bill


@dataclass(frozen=True)
class TableLimits:
    """How much of a table is read and described."""

    read_bytes: int = 8 << 20  # read of one table in the harness process
    rows: int = 10_000  # parsed for types and missing values
    columns: int = 100  # described to the model
    cell_chars: int = 40  # of one cell in the example rows
    description_chars: int = 8_000  # of one table's whole description


class Unreadable(Exception):
    """The table cannot be read as a table; the message says why, in a few words."""


@dataclass
class TableSample:
    """What was read of one table: its first rows and columns, and what is known of the rest."""

    name: str
    path: Path  # its checked path
    encoding: str
    frame: pd.DataFrame  # up to `rows` rows of up to `columns` columns
    rows: int  # data rows in the file (about, when not `whole`)
    columns: int  # columns in its header
    size: int  # bytes
    whole: bool  # the whole file was read (else its first `read_bytes`)
    detected: bool = True  # the encoding was detected, not given
    cuts: list[str] = field(default_factory=list)  # what descriptions of it leave out, for the note

    @property
    def rows_text(self) -> str:
        return f"{self.rows:,} rows" if self.whole else f"about {self.rows:,} rows"

    def note(self) -> str | None:
        """One line for the user when a description of the table leaves something out, else None."""
        return f"{self.name}: {'; '.join(self.cuts)}" if self.cuts else None

    def examples(self, count: int, limits: TableLimits) -> pd.DataFrame:
        """The first `count` rows read, each cell cut to `limits.cell_chars` characters."""

        def short(value: object) -> object:
            text = str(value)
            return text if len(text) <= limits.cell_chars else text[: limits.cell_chars - 1] + "…"

        return self.frame.head(count).apply(lambda column: column.map(short))

    def left_out(self) -> str:
        """A line telling the model of the columns its description leaves out ('' when none)."""
        more = self.columns - len(self.frame.columns)
        return f"(and {more:,} more columns, not described here)" if more > 0 else ""

    def how_to_read(self) -> str:
        """How to read the table when pandas' default (UTF-8) would fail ('' when it would not)."""
        if self.encoding in ("utf-8", "utf-8-sig"):
            return ""
        return f"It is {self.encoding} text: read it with pd.read_csv({self.name!r}, encoding={self.encoding!r})."

    def limit_description(self, text: str, limits: TableLimits) -> str:
        """`text` (a description of this table), cut to `limits.description_chars` at a line's end."""
        if len(text) <= limits.description_chars:
            return text
        kept = text[: limits.description_chars].rsplit("\n", 1)[0]
        self.cuts.append(f"its description is cut to {len(kept):,} of {len(text):,} characters")
        return f"{kept}\n[... the rest of this description is left out: it is limited to {len(kept):,} characters]"


def estimate_tokens(text: str | int) -> int:
    """Tokens a prompt of this text (or this many characters) is likely to take."""
    chars = text if isinstance(text, int) else len(text)
    return -(-chars // CHARS_PER_TOKEN)


# ---- the folder -----------------------------------------------------------------------------------------


@dataclass
class UserTables:
    """The readable tables of a folder, and one line per table skipped."""

    tables: list[TableSample]
    skipped: list[str]

    def notes(self) -> list[str]:
        """One line per table skipped, then per table whose descriptions leave something out."""
        return [*self.skipped, *filter(None, (sample.note() for sample in self.tables))]


def read_tables(folder: Path, encoding: str | None = None, limits: TableLimits | None = None) -> UserTables:
    """Every `*.csv` file of `folder` (no sub-folders), sampled; one that is refused (a link out of the
    folder, a FIFO) or cannot be read is skipped with a line naming it. None readable: a UserError."""
    limits = limits or TableLimits()
    if encoding is not None:
        check_encoding(encoding)
    tables_folder = SuiteFolder.at(folder, label="tables folder")
    names = [name for name in tables_folder.names(tables_folder.root) if name.lower().endswith(".csv")]
    if not names:
        raise UserError(f"{folder}: no CSV files")
    tables, skipped = [], []
    for name in names:
        try:
            path = tables_folder.file(name, what="table")
            tables.append(sample_table(path, name, encoding, limits))
        except (Refused, Unreadable) as exc:
            skipped.append(f"{name}: skipped: {exc}")
    if not tables:
        raise UserError(f"{folder}: no CSV file can be read ({'; '.join(skipped)})")
    return UserTables(tables, skipped)


def check_encoding(encoding: str) -> None:
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise UserError(f"--encoding: unknown encoding {encoding!r} (e.g. utf-8, cp1252, latin-1)") from None


# ---- one table ------------------------------------------------------------------------------------------


def sample_table(
    path: Path, name: str, encoding: str | None = None, limits: TableLimits | None = None
) -> TableSample:
    """What is read of the table at `path` (a checked path): Unreadable when it is not a table."""
    import pandas as pd  # here: registering the families (every command line) imports no pandas

    limits = limits or TableLimits()
    size = os.stat(path).st_size
    with open(path, "rb") as handle:
        head = handle.read(limits.read_bytes)
    whole = len(head) >= size
    if not head.strip():
        raise Unreadable("the file is empty")
    chosen = encoding or _detected_encoding(head)
    text = _decoded(head, chosen, whole)
    if not whole:
        text = text[: text.rfind("\n") + 1] or text  # the last line read may be cut
    try:
        header = pd.read_csv(io.StringIO(text), nrows=0)
        used = list(range(min(len(header.columns), limits.columns)))
        frame = pd.read_csv(io.StringIO(text), nrows=limits.rows, usecols=used)
    except pd.errors.EmptyDataError:
        raise Unreadable("no columns in it") from None
    except (pd.errors.ParserError, ValueError, csv.Error) as exc:
        raise Unreadable(f"pandas cannot read it ({_first_line(exc)})") from None
    seen = _data_rows(text, limits.rows, len(frame))
    if seen == 0:
        raise Unreadable("no data rows under the header")
    rows = seen if whole else seen * size // max(1, len(text.encode(chosen, errors="replace")))
    sample = TableSample(
        name=name, path=path, encoding=chosen, frame=frame, rows=rows, columns=len(header.columns),
        size=size, whole=whole, detected=encoding is None,
    )  # fmt: skip
    if not whole:
        sample.cuts.append(
            f"{_size(size)}: described from its first {_size(limits.read_bytes)} ({len(frame):,} rows)"
        )
    elif seen > len(frame):
        sample.cuts.append(f"types and missing values from its first {len(frame):,} of {seen:,} rows")
    if sample.columns > len(frame.columns):
        sample.cuts.append(
            f"{sample.columns:,} columns: the model is told of the first {len(frame.columns):,}"
        )
    if encoding is None and chosen not in ("utf-8", "utf-8-sig", "utf-16"):
        sample.cuts.append(f"not UTF-8: read as {chosen}; give --encoding if it is another")
    return sample


def _detected_encoding(head: bytes) -> str:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    controls = sum(byte < 0x20 and byte not in b"\t\n\r\f" for byte in head)
    if controls > len(head) // 100:  # NUL and other control bytes: an image, an archive, a workbook
        raise Unreadable("binary data, not a text table")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        head.decode(EXCEL_ENCODING)
        return EXCEL_ENCODING
    except UnicodeDecodeError:  # one of the five bytes Windows-1252 leaves undefined
        return "latin-1"


def _decoded(head: bytes, encoding: str, whole: bool) -> str:
    try:
        text = codecs.getincrementaldecoder(encoding)().decode(head, final=whole)
    except UnicodeDecodeError as exc:
        raise Unreadable(
            f"not {encoding} text (byte 0x{head[exc.start]:02x} at offset {exc.start}); give its --encoding"
        ) from None
    if "\0" in text:
        raise Unreadable("binary data, not a text table")
    return text


def _data_rows(text: str, parse_limit: int, parsed: int) -> int:
    """Data rows in `text` (records, as the csv module splits them, blank lines aside), header aside."""
    if parsed < parse_limit:
        return parsed  # pandas read them all
    try:
        return sum(1 for record in csv.reader(io.StringIO(text)) if record) - 1
    except csv.Error:  # a cell longer than the csv module takes: count lines instead
        return sum(1 for line in text.splitlines() if line.strip()) - 1


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _size(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} bytes"
