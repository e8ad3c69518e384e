"""`daharness generate` on a folder of tables as users have them (issue 43, item 4) and as an attacker
leaves them (issue 40, item 4), through the real command against the scripted model server.

The folder holds a plain table, a Latin-1 table as Excel writes it (Windows-1252, CRLF), an empty file, a
PNG named `.csv`, a table of 20,000 columns, a link to `/proc/self/environ` and a link to a file beside
the folder. What can be read is read (the Latin-1 text decoded right), every other table is skipped with
one line naming it, the description sent to the model is capped and the cut said, a token estimate comes
before the first request, and nothing of the harness's environment or of the file beside reaches the
model or the generated suite.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from helpers import cli

LATIN = "produit,prix\r\nCrème brûlée,7.5\r\nThé glacé,4\r\nCafé au lait,3.5\r\n"
WIDE_COLUMNS = 20_000
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + bytes(range(256)) * 8


def _tables(root: Path, canary: str) -> Path:
    tables = root / "tables"
    tables.mkdir(parents=True)
    (tables / "good.csv").write_text("x,y\n1,2\n3,4\n5,6\n")
    (tables / "latin.csv").write_bytes(LATIN.encode("cp1252"))
    (tables / "empty.csv").write_bytes(b"")
    (tables / "picture.csv").write_bytes(PNG)
    header = ",".join(f"c{i}" for i in range(WIDE_COLUMNS))
    rows = "\n".join(",".join(str(r * i % 7) for i in range(WIDE_COLUMNS)) for r in range(1, 4))
    (tables / "wide.csv").write_text(f"{header}\n{rows}\n")
    (tables / "leak.csv").symlink_to("/proc/self/environ")
    (root / "secret.csv").write_text(f"key\n{canary}\n")
    (tables / "beside.csv").symlink_to(root / "secret.csv")
    return tables


class Scripted:
    """A DABench question per table, and a solution that reads the table as its description says."""

    def __init__(self, stderr: Path) -> None:
        self.stderr = stderr
        self.before_first: str | None = None  # what the command had said when the first request came

    def __call__(self, request: dict[str, Any]) -> str:
        if self.before_first is None:
            self.before_first = self.stderr.read_text()
        user = request["messages"][-1]["content"]
        table = re.search(r"Table (\S+):", user)[1]  # type: ignore[index]
        if "independent solution" not in user:
            return json.dumps({
                "question": f"What is the mean of the first numeric column of {table}?",
                "constraints": "Round to two decimal places.", "concepts": ["Summary Statistics"],
                "format": "@mean[value] where value is a float rounded to two decimal places", "level": "easy",
            })  # fmt: skip
        encoding = re.search(r"encoding='([^']+)'", user)
        read = f"pd.read_csv({table!r}, encoding={encoding[1]!r})" if encoding else f"pd.read_csv({table!r})"
        return (
            f"```python\nimport pandas as pd\ndf = {read}\ncolumn = df.select_dtypes('number').columns[0]\n"
            "print(f'@mean[{df[column].mean():.2f}]')\n```"
        )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("own-tables")
    canary = f"sk-test-canary-{uuid.uuid4().hex}"
    tables = _tables(root, canary)
    out, stderr = root / "suite", root / "stderr.txt"
    scripted = Scripted(stderr)
    with FakeOpenAI() as server, stderr.open("w") as errors:
        server.responder = scripted
        command = cli(
            "generate", "closed-form", "--tables", str(tables), "--model", "fake-model",
            "--base-url", server.base_url, "--out", str(out), "--per-table", "1", "--solutions", "1",
            "--concepts", "Summary Statistics",
        )  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": canary, "COLUMNS": "300"}
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=errors, text=True, env=env, timeout=600)
        requests = list(server.requests)
    return {
        "done": done, "stderr": stderr.read_text(), "requests": requests, "out": out, "canary": canary,
        "before_first": scripted.before_first,
    }  # fmt: skip


def _prompts(requests: list[dict[str, Any]]) -> list[str]:
    return ["\n".join(m["content"] for m in request["messages"]) for request in requests]


def test_unreadable_tables_are_skipped_with_one_line_each_and_the_rest_generated(
    generated: dict[str, Any],
) -> None:
    done, stderr = generated["done"], generated["stderr"]
    assert done.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    lines = [" ".join(line.split()) for line in stderr.splitlines()]
    assert "note: empty.csv: skipped: the file is empty" in lines
    assert "note: picture.csv: skipped: binary data, not a text table" in lines
    assert any(
        line.startswith("note: leak.csv: skipped: table 'leak.csv' is a link to /proc/") for line in lines
    )
    assert any(
        line.startswith("note: beside.csv: skipped: table 'beside.csv' is a link to ") for line in lines
    )
    assert "3 of 3 questions kept" in done.stdout
    assert sorted(path.name for path in (generated["out"] / "tables").iterdir()) == [
        "good.csv", "latin.csv", "wide.csv",
    ]  # fmt: skip


def test_latin1_as_excel_writes_it_is_read_and_said(generated: dict[str, Any]) -> None:
    lines = [" ".join(line.split()) for line in generated["stderr"].splitlines()]
    assert "note: latin.csv: not UTF-8: read as cp1252; give --encoding if it is another" in lines
    latin = [p for p in _prompts(generated["requests"]) if "Table latin.csv" in p]
    assert latin and all("Crème brûlée" in prompt and "Thé glacé" in prompt for prompt in latin)
    labels = [json.loads(line) for line in (generated["out"] / "labels.jsonl").read_text().splitlines()]
    assert ["mean", "5.00"] in [answer for row in labels for answer in row["common_answers"]]


def test_what_is_sent_to_the_model_is_capped_and_the_cut_said(generated: dict[str, Any]) -> None:
    lines = [" ".join(line.split()) for line in generated["stderr"].splitlines()]
    assert "note: wide.csv: 20,000 columns: the model is told of the first 100" in lines
    wide = [p for p in _prompts(generated["requests"]) if "Table wide.csv" in p]
    assert wide and all("(and 19,900 more columns, not described here)" in prompt for prompt in wide)
    # 20,000 columns once took 618,000 characters in every request
    assert max(len(prompt) for prompt in _prompts(generated["requests"])) < 12_000


def test_a_token_estimate_comes_before_the_first_request(generated: dict[str, Any]) -> None:
    before = " ".join(generated["before_first"].split())
    found = re.search(r"estimate: up to 6 requests, about ([\d,]+) prompt tokens", before)
    assert found, before
    estimate = int(found[1].replace(",", ""))
    used = int(re.search(r"tokens: (\d+) prompt", generated["done"].stdout)[1])  # type: ignore[index]
    assert used / 2 <= estimate <= used * 2  # the server counts a token per 4 characters, as the estimate


def test_nothing_of_the_host_reaches_the_model_or_the_suite(generated: dict[str, Any]) -> None:
    canary = generated["canary"]
    assert all(canary not in json.dumps(request) for request in generated["requests"])
    leaked = [p for p in generated["out"].rglob("*") if p.is_file() and canary.encode() in p.read_bytes()]
    assert leaked == []
    assert canary not in generated["stderr"] + generated["done"].stdout


def test_a_given_encoding_is_used_and_a_wrong_one_skips_the_table(tmp_path: Path) -> None:
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "latin.csv").write_bytes(LATIN.encode("cp1252"))
    (tables / "utf8.csv").write_text("nom,n\nNaïve,1\n", encoding="utf-8")
    with FakeOpenAI() as server:
        server.responder = lambda request: "{}"
        command = cli(
            "generate", "interactive", "--tables", str(tables), "--model", "fake-model", "--base-url",
            server.base_url, "--out", str(tmp_path / "out"), "--encoding", "utf-8", "--dialogues", "1",
        )  # fmt: skip
        env = {**os.environ, "COLUMNS": "300"}
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [" ".join(line.split()) for line in done.stderr.splitlines()]
    assert "note: latin.csv: skipped: not utf-8 text (byte 0xe8 at offset 16); give its --encoding" in lines
    assert "Traceback" not in done.stderr
    command[command.index("--encoding") + 1] = "klingon"
    refused = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "--encoding: unknown encoding 'klingon'" in refused.stderr


def test_interactive_generation_reads_the_same_way(tmp_path: Path) -> None:
    canary = f"sk-test-canary-{uuid.uuid4().hex}"
    tables = _tables(tmp_path, canary)
    with FakeOpenAI() as server:
        server.responder = lambda request: "{}"  # no persona, no request: every turn is dropped
        command = cli(
            "generate", "interactive", "--tables", str(tables), "--model", "fake-model", "--base-url",
            server.base_url, "--out", str(tmp_path / "out"), "--dialogues", "3", "--turns", "1",
        )  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": canary, "COLUMNS": "300"}
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
        prompts = _prompts(list(server.requests))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [" ".join(line.split()) for line in done.stderr.splitlines()]
    for skipped in ("empty.csv", "picture.csv", "leak.csv", "beside.csv"):
        assert any(line.startswith(f"note: {skipped}: skipped: ") for line in lines), (skipped, lines)
    assert any(line.startswith("note: estimate: about 9 requests") for line in lines)
    assert any("Crème brûlée" in prompt for prompt in prompts)
    assert max(map(len, prompts)) < 12_000 and all(canary not in prompt for prompt in prompts)


def test_a_large_table_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    from daharness.suites.user_tables import TableLimits, sample_table

    table = tmp_path / "big.csv"
    table.write_text("n,text\n" + "".join(f"{i:06d},row number {i:06d}\n" for i in range(200_000)))
    limits = TableLimits(read_bytes=64 << 10, rows=500)
    sample = sample_table(table, "big.csv", limits=limits)
    assert not sample.whole and len(sample.frame) == 500
    assert 180_000 <= sample.rows <= 220_000 and sample.rows_text.startswith("about ")
    assert sample.note() == "big.csv: 4.8 MB: described from its first 64.0 KB (500 rows)"
    whole = sample_table(table, "big.csv", limits=TableLimits(rows=500))
    assert whole.whole and whole.rows == 200_000 and whole.rows_text == "200,000 rows"
    assert whole.note() == "big.csv: types and missing values from its first 500 of 200,000 rows"
