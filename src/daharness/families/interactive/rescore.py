"""Scoring response files of the official Tapilot-Crossing files (`daharness score --tapilot-responses`).

The response folder is what the release's `call_api.py` writes: one `<file>.jsonl` per official file, each
line an entry with its `response`. Each entry is scored as the run command scores it (its own
eval_metrics, every step in a fresh sandbox; `scorers/release.py`). The entry is the data folder's (matched by
`data_id`); its reference code, `eval_metrics`, `result_type` and reference answer come, in `official` mode,
from the response row, as the release's `evaluate.py` takes them, and in corrected mode from the data folder's
files: a response file is what a run wrote, and a row whose `eval_metrics` prints `True` must not score. Files are taken in the release
evaluator's order; a file without responses is skipped, as it does. In `official` mode a line without a
`data_id` (the private library's record, when a run over every line of `private.jsonl` kept it) counts
as one failed intent, as the release counts it; in corrected mode it is left out.

The figures are the release's (`evaluate.py`'s eval_results.json without the model name): per file the
intents credited, the intents and the accuracy in percent, then multiple choice, code generation and
overall; `entries` gives each entry's verdict under `<file>:<data_id>`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from daharness.core.errors import UserError, located
from daharness.core.jsonl import iter_jsonl
from daharness.core.runlog import ScoringSettings
from daharness.core.scoring import GoldProblem
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.interactive.release_run import DEFAULT_TIMEOUT_S, evaluate_entry, is_release_code
from daharness.families.interactive.tapilot import (
    CODE_GEN,
    MULTI_CHOICE,
    as_released,
    is_library_record,
    load_file,
    locate,
)
from daharness.runs.pipeline import SandboxSettings, started
from daharness.scoring import score_submission


@dataclass(frozen=True)
class _Item:
    key: str
    file: str
    task: Task | None  # None: a line without an entry (the library record)
    response: str


def rescore_tapilot(
    responses: Path,
    data: Path,
    *,
    mode: str,
    sandbox: SandboxSettings,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    workers: int = 1,
) -> dict[str, Any]:
    """Every response file's entries scored; {"entries": {...}, "summary": {...}, "mode": mode}."""
    if not responses.is_dir():
        raise UserError(f"--tapilot-responses {responses}: not a folder")
    release = locate(data)
    items: list[_Item] = []
    skipped = []
    for name in [*MULTI_CHOICE, *CODE_GEN]:
        path = responses / f"{name}.jsonl"
        if not path.is_file():
            skipped.append(name)
            continue
        if release.file(name) is None:
            raise UserError(f"{path}: no {release.dialogues}/{name}.jsonl to score it against")
        items += _items(path, name, load_file(release, name, timeout_s), mode)
    if not items:
        raise UserError(f"{responses}: no response files (<file>.jsonl of the eight official files)")
    settings = ScoringSettings(modes={"interactive": mode})
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        verdicts = list(pool.map(lambda item: _verdict(item, settings, sandbox), items))
    entries = {item.key: verdict for item, verdict in zip(items, verdicts, strict=True)}
    files = {item.key: item.file for item in items}
    return {"mode": mode, "entries": entries, "summary": summary(entries, files), "skipped_files": skipped}


def _items(path: Path, name: str, tasks: list[Task], mode: str) -> list[_Item]:
    by_id = {str(task.gold.data["release"]["data_id"]): task for task in tasks}
    found: list[_Item] = []
    seen: set[str] = set()
    for number, raw in iter_jsonl(path):
        response = raw.get("response", "")
        if response is None:
            response = ""
        if not isinstance(response, str):
            raise located(path, "field 'response': must be a text", number)
        if "data_id" not in raw:
            if not is_library_record(raw):
                raise located(path, "field 'data_id': missing", number)
            if mode == "official":  # the release counts it: no eval_metrics, one failed intent
                found.append(_Item(f"{name}:line{number}", name, None, response))
            continue
        data_id = str(raw["data_id"])
        if data_id not in by_id:
            raise located(
                path, f"field 'data_id': {data_id} is not an entry of {name}.jsonl in the data", number
            )
        if data_id in seen:
            raise located(path, f"field 'data_id': {data_id} has two responses", number)
        seen.add(data_id)
        task = as_released(by_id[data_id], raw) if mode == "official" else by_id[data_id]
        found.append(_Item(f"{name}:{data_id}", name, task, response))
    return found


def _verdict(item: _Item, settings: ScoringSettings, sandbox: SandboxSettings) -> dict[str, Any]:
    if item.task is None:
        return {"pass": False, "intents": 1, "credit": 0, "reason": "missing response or eval_metrics"}
    task = item.task
    submission = Submission(answers=[item.response])
    intents = _intents(task)
    try:
        if is_release_code(task):
            submission.evidence["tapilot"] = evaluate_entry(
                task, item.response, lambda: started(task, sandbox)
            )
        score = score_submission(task, submission, None, settings)
    except GoldProblem as exc:  # corrected mode: the benchmark's fault, counted nowhere
        return {
            "pass": False,
            "intents": intents,
            "credit": 0,
            "reason": f"excluded: {exc}",
            "excluded": True,
        }
    release = score.details["release"]
    reason = "" if release["pass"] else score.explanation
    return {
        "pass": release["pass"],
        "intents": release["intents"],
        "credit": release["credit"],
        "reason": reason,
    }


def _intents(task: Task) -> int:
    kinds = task.gold.data["release"].get("result_type")
    return len(kinds) if isinstance(kinds, list) else 1


def _figure(correct: int, total: int) -> dict[str, Any]:
    return {"correct": correct, "total": total, "accuracy": correct / total * 100 if total else 0}


def summary(entries: dict[str, dict[str, Any]], files: dict[str, str]) -> dict[str, Any]:
    """The release's figures over intents: per file, multiple choice, code generation, overall."""
    per_file: dict[str, list[int]] = {}
    for key, verdict in entries.items():
        if verdict.get("excluded"):
            continue
        counts = per_file.setdefault(files[key], [0, 0])
        counts[0] += verdict["credit"]
        counts[1] += verdict["intents"]
    categories = {name: _figure(*per_file[name]) for name in sorted(per_file)}

    def total(names: list[str]) -> dict[str, Any]:
        return _figure(
            sum(per_file[n][0] for n in names if n in per_file),
            sum(per_file[n][1] for n in names if n in per_file),
        )

    return {
        "categories": categories,
        "multi_choice_total": total(MULTI_CHOICE),
        "code_gen_total": total(CODE_GEN),
        "overall": total([*MULTI_CHOICE, *CODE_GEN]),
    }


def print_rescored_responses(console: Console, result: dict[str, Any], title: str) -> None:
    """The release's summary table, and the entries that did not pass with why."""
    failed = Table(title=f"{title} · entries not passing", title_justify="left")
    failed.add_column("entry")
    failed.add_column("intents", justify="right")
    failed.add_column("why", overflow="fold")
    for key, verdict in result["entries"].items():
        if not verdict["pass"]:
            failed.add_row(key, str(verdict["intents"]), verdict["reason"][:300])
    if failed.row_count:
        console.print(failed)
    table = Table(title=f"{title} · intents, as the release counts them", title_justify="left")
    for column in ("file", "correct", "total", "accuracy"):
        table.add_column(column, justify="left" if column == "file" else "right")
    figures = result["summary"]
    rows = [*figures["categories"].items(), *(
        (label, figures[key]) for key, label in (
            ("multi_choice_total", "Multi-choice Total"), ("code_gen_total", "Code Generation Total"),
            ("overall", "OVERALL"),
        ) if figures[key]["total"]
    )]  # fmt: skip
    for name, figure in rows:
        table.add_row(name, str(figure["correct"]), str(figure["total"]), f"{figure['accuracy']:.2f}%")
    console.print(table)
    if result["skipped_files"]:
        console.print(f"skipped (no response file): {', '.join(result['skipped_files'])}")
