"""`daharness generate closed-form`: a closed-form suite from a user's own tables, by DABench's DAEval steps.

For each CSV a description (columns, types, example rows), read with caps and said when cut
(`suites/user_tables.py`: a table that cannot be read is skipped with one line); for each slot a question of one concept and
level, with constraints and an `@name[value]` format, written by the model; its answers fixed by several
independent model-written solutions run in the sandbox and kept only when they agree at the precision the
format asks for (the paper's agreement rule); the filters the paper applies (format valid, answerable, not
trivial) and one of ours (validate's damaged answers must score 0), each drop with its reason.

Every finished item (kept or dropped) is one line of the journal `review.jsonl`, flushed before the next
starts, and the suite files are rewritten from it: a re-run of the same command skips what is done, so a
crash loses at most the item in flight. `review.html` shows the same lines for reading.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from daharness.core.generated_suite import prepare_generated_suite
from daharness.core.jsonl import append_journal, read_journal, write_atomic
from daharness.core.limits import Limits
from daharness.core.task import Task
from daharness.families.closed_form.damage import damaged_answers, written
from daharness.families.closed_form.loader import _FORMAT_NAME, _to_task
from daharness.families.closed_form.scorer import extract_all_balanced, score_closed_form
from daharness.models import ModelClient
from daharness.suites.user_tables import TableLimits, TableSample, estimate_tokens, read_tables

CONCEPTS = (
    "Summary Statistics",
    "Feature Engineering",
    "Correlation Analysis",
    "Machine Learning",
    "Distribution Analysis",
    "Outlier Detection",
    "Comprehensive Data Preprocessing",
)
LEVELS = ("easy", "medium", "hard")
JOURNAL = "review.jsonl"
SETTINGS = "generation.json"
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class GeneratedQuestion(BaseModel):
    """What the model must reply for one question (DABench's fields)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built by `generate`, not by every run
    question: str = Field(min_length=10)
    constraints: str = ""
    format: str = Field(min_length=4)
    concepts: list[str] = Field(min_length=1)
    level: str


@dataclass(frozen=True)
class Slot:
    """One item of the generation: a question of `concept` and `level` over `table`."""

    id: int
    table: str
    concept: str
    level: str


@dataclass
class Settings:
    tables: Path
    out: Path
    per_table: int = 4
    concepts: tuple[str, ...] = CONCEPTS
    solutions: int = 3
    agree: int = 3
    backend: str = "bwrap"
    limits: Limits | None = None
    encoding: str | None = None  # of the tables (None: detected)
    table_limits: TableLimits = field(default_factory=TableLimits)


def plan(tables: list[str], per_table: int, concepts: tuple[str, ...]) -> list[Slot]:
    """The items, in order: concepts and levels taken in turn across all tables (stable on a re-run)."""
    slots = []
    for index in range(len(tables) * per_table):
        table = tables[index // per_table]
        level = LEVELS[(index // len(concepts)) % len(LEVELS)]
        slots.append(Slot(index, table, concepts[index % len(concepts)], level))
    return slots


def describe_table(sample: TableSample, limits: TableLimits, examples: int = 3) -> str:
    """What the model is told of a table: its size, each column's type and missing values, a few rows
    (as much as `limits` let be read and told, and what is left out)."""
    frame = sample.frame
    lines = [f"Table {sample.name}: {sample.rows_text}, {sample.columns:,} columns.", "Columns:"]
    for column in frame.columns:
        missing = int(frame[column].isna().sum())
        lines.append(f"- {column!r} ({frame[column].dtype}{f', {missing} missing' if missing else ''})")
    lines += [sample.left_out(), sample.how_to_read(), f"First {examples} rows (CSV):"]
    lines.append(sample.examples(examples, limits).to_csv(index=False).strip())
    return sample.limit_description("\n".join(line for line in lines if line), limits)


# ---- prompts ----------------------------------------------------------------------------------------


def question_messages(slot: Slot, description: str) -> list[dict[str, str]]:
    system = (
        "You write data-analysis questions in the InfiAgent-DABench style. Reply with one JSON object "
        'with the keys "question", "constraints", "format", "concepts" (a list) and "level". The question '
        "must be answerable from the table alone by running Python code; the constraints fix every choice "
        "that changes the answer (method, rounding, ddof, missing values); the format names each answer "
        'as @name[value] and says its type and precision, e.g. "@mean_age[mean] where mean is a float '
        'rounded to two decimal places".'
    )
    user = (
        f"{description}\n\nWrite one question (item {slot.id}) about {slot.table} of the concept "
        f"{slot.concept!r} at level {slot.level!r} (easy, medium or hard)."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def solution_messages(row: dict[str, Any], description: str, attempt: int, of: int) -> list[dict[str, str]]:
    system = (
        "You solve data-analysis questions by writing one complete Python program. It reads the table "
        "from the current folder and prints each answer on its own line as @name[value], exactly as the "
        "format says. Reply with the program in one ```python block."
    )
    user = (
        f"{description}\n\nQuestion: {row['question']}\nConstraints: {row['constraints']}\n"
        f"Format: {row['format']}\n\n(independent solution {attempt} of {of} for item {row['id']})"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_question(reply: str, slot: Slot, concepts: tuple[str, ...]) -> tuple[dict[str, Any] | None, str]:
    """The question row (the dabench questions file's fields) or None and why not."""
    found = _JSON_OBJECT.search(reply or "")
    if found is None:
        return None, "malformed: the reply holds no JSON object"
    try:
        question = GeneratedQuestion.model_validate(json.loads(found.group(0)))
    except json.JSONDecodeError as exc:
        return None, f"malformed: the reply's JSON does not parse ({exc.msg})"
    except ValidationError as exc:
        first = exc.errors()[0]
        return None, f"malformed: field {'.'.join(map(str, first['loc']))}: {first['msg']}"
    names = _FORMAT_NAME.findall(question.format)
    if not names:
        return None, "format invalid: it names no answer as @name[value]"
    if len(set(names)) != len(names):
        return None, "format invalid: an answer name is used twice"
    unknown = [c for c in question.concepts if c not in concepts]
    if unknown:
        return None, f"format invalid: unknown concept {unknown[0]!r}"
    if question.level not in LEVELS:
        return None, f"format invalid: level {question.level!r} is not easy, medium or hard"
    row = {"id": slot.id, **question.model_dump(), "file_name": slot.table}
    return row, ""


def code_of(reply: str) -> str:
    """The program in a reply: its first ```python block, else the whole reply."""
    found = _CODE_BLOCK.search(reply or "")
    return (found.group(1) if found else reply or "").strip() + "\n"


# ---- solutions and their agreement -------------------------------------------------------------------


def run_solutions(task: Task, codes: list[str], backend: str, limits: Limits | None) -> list[dict[str, Any]]:
    """Each program in a fresh namespace of one sandbox holding the table; what it printed, and which of
    the format's answers it gave. A program that never names the table is not run (printed constants
    agree with each other, not with the data); one that changes the table spoils the ones after it, so
    it fails."""
    from daharness.sandbox import open_sandbox

    table = task.files[0].path
    runs = [
        {"code": code, "stdout": "", "problem": "" if table in code else f"it never names {table}"}
        for code in codes
    ]
    if all(run["problem"] for run in runs):
        return runs
    with open_sandbox(backend, task, limits) as sandbox:
        for number, run in enumerate(runs, start=1):
            if run["problem"]:
                continue
            cell = (
                f"exec(compile({run['code']!r}, 'solution_{number}.py', 'exec'), {{'__name__': '__main__'}})"
            )
            observation = sandbox.python(cell)
            run["stdout"] = observation.stdout[-4000:]
            if not observation.ok:
                error = observation.error
                run["problem"] = f"{error.name}: {error.value}" if error else "it failed"
            elif table in observation.files_changed:
                run["problem"] = f"it changed {table}"
            else:
                given = extract_all_balanced(observation.stdout)
                missing = [name for name in task.answer_format.names if name not in given]
                repeated = [name for name in task.answer_format.names if len(set(given.get(name, []))) > 1]
                if missing:
                    run["problem"] = f"no answer for {', '.join(missing)}"
                elif repeated:
                    run["problem"] = f"several values for {', '.join(repeated)}"
                else:
                    run["answers"] = [[name, given[name][-1].strip()] for name in task.answer_format.names]
    return runs


def agreement(task: Task, runs: list[dict[str, Any]], needed: int) -> tuple[int | None, int, str]:
    """The run whose answers as labels the most runs match (normalized rule: the precision the label is
    written with), how many match it, and why the question is dropped ('' when it is not)."""
    good = [index for index, run in enumerate(runs) if "answers" in run]
    if len(good) < needed:
        why = "; ".join(f"solution {i + 1}: {run['problem']}" for i, run in enumerate(runs) if run["problem"])
        return None, 0, f"unanswerable: {len(good)} of {len(runs)} solutions gave every answer ({why})"
    best, best_count = good[0], 0
    for index in good:
        labelled = task.model_copy(
            update={"gold": task.gold.model_copy(update={"answers": _pairs(runs[index])})}
        )
        count = sum(score_closed_form(labelled, written(_pairs(runs[other]))).value == 1.0 for other in good)
        if count > best_count:
            best, best_count = index, count
    if best_count < needed:
        shown = "; ".join(
            f"solution {i + 1}: " + ", ".join(f"{n}={v}" for n, v in _pairs(runs[i])) for i in good
        )
        return (
            None,
            best_count,
            f"solutions disagree: {best_count} of {len(runs)} agree, {needed} needed ({shown})",
        )
    return best, best_count, ""


def _pairs(run: dict[str, Any]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in run["answers"]]


def filter_kept(row: dict[str, Any], labels: list[tuple[str, str]], task: Task) -> str:
    """Why a question with agreed labels is still dropped, or ''."""
    empty = [name for name, value in labels if not value.strip()]
    if empty:
        return f"trivial: empty answer for {', '.join(empty)}"
    text = f"{row['question']} {row['constraints']}"
    if all(re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", text) for _, value in labels):
        return "trivial: every answer is written in the question"
    labelled = task.model_copy(update={"gold": task.gold.model_copy(update={"answers": labels})})
    for mode in ("strict", "normalized"):
        if score_closed_form(labelled, written(labels), mode=mode).value != 1.0:
            return f"not checkable: the labels written back score 0 in {mode} mode"
        for what, answer in damaged_answers(labels):
            if score_closed_form(labelled, answer, mode=mode).value == 1.0:
                return f"not checkable: a wrong answer ({what}) scores 1 in {mode} mode"
    return ""


# ---- the generation ---------------------------------------------------------------------------------


def generate_closed_form(
    settings: Settings,
    client: ModelClient,
    on_item: Callable[[dict[str, Any]], None] | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> list[dict[str, Any]]:
    """Generate (or go on generating) the suite in `settings.out`; every entry of the journal. `say`
    gets one line per table skipped or cut, and the estimate of the prompt tokens before the first
    request."""
    found = read_tables(settings.tables, settings.encoding, settings.table_limits)
    samples = {sample.name: sample for sample in found.tables}
    descriptions = {name: describe_table(sample, settings.table_limits) for name, sample in samples.items()}
    for line in found.notes():
        say(line)
    tables = list(samples)
    out = settings.out
    _prepare(settings, samples, client.settings.model)
    entries = read_journal(out / JOURNAL)
    done = {entry["id"] for entry in entries}
    slots = [slot for slot in plan(tables, settings.per_table, settings.concepts) if slot.id not in done]
    if slots:
        say(_estimate(slots, descriptions, settings.solutions))
    for slot in slots:
        entry = _one_item(slot, descriptions[slot.table], samples[slot.table].path, settings, client, entries)
        append_journal(out / JOURNAL, entry)
        entries.append(entry)
        write_suite(out, entries)
        if on_item is not None:
            on_item(entry)
    write_suite(out, entries)
    return entries


def _estimate(slots: list[Slot], descriptions: dict[str, str], solutions: int) -> str:
    """The prompt tokens the slots to go will take at most (a question and every solution asked)."""
    prompts = [question_messages(slot, descriptions[slot.table]) for slot in slots]
    chars = sum(len(m["content"]) for messages in prompts for m in messages) * (1 + solutions)
    largest = max(descriptions, key=lambda name: len(descriptions[name]))
    return (
        f"estimate: up to {len(slots) * (1 + solutions):,} requests, about {estimate_tokens(chars):,} prompt "
        f"tokens; the largest table description ({largest}) is about "
        f"{estimate_tokens(descriptions[largest]):,} tokens in each request about it"
    )


def _one_item(
    slot: Slot,
    description: str,
    table: Path,
    settings: Settings,
    client: ModelClient,
    earlier: list[dict[str, Any]],
) -> dict[str, Any]:
    before = client.usage
    entry: dict[str, Any] = {"id": slot.id, "table": slot.table, "concept": slot.concept, "level": slot.level}
    reply = client.complete(question_messages(slot, description)).text
    row, why = parse_question(reply, slot, settings.concepts)
    entry.update(row=row, reply=None if row else reply, solutions=[], kept=False, reason=why)
    if row is not None:
        duplicate = next(
            (e["id"] for e in earlier if e.get("row") and _same(e["row"]["question"], row["question"])), None
        )
        if duplicate is not None:
            entry["reason"] = f"duplicate: the question of item {duplicate}"
        else:
            _solve(entry, row, description, table, settings, client)
    used = client.usage
    entry["tokens"] = {
        "prompt": used.prompt_tokens - before.prompt_tokens,
        "completion": used.completion_tokens - before.completion_tokens,
        "cost_usd": round(used.cost_usd - before.cost_usd, 6),
    }
    return entry


def _solve(
    entry: dict[str, Any],
    row: dict[str, Any],
    description: str,
    table: Path,
    settings: Settings,
    client: ModelClient,
) -> None:
    task = _to_task(row, table, [], [], "generating", None)
    codes = [
        code_of(client.complete(solution_messages(row, description, n, settings.solutions)).text)
        for n in range(1, settings.solutions + 1)
    ]
    runs = run_solutions(task, codes, settings.backend, settings.limits)
    entry["solutions"] = runs
    chosen, agreed, why = agreement(task, runs, settings.agree)
    if chosen is None:
        entry["reason"] = why
        return
    labels = _pairs(runs[chosen])
    why = filter_kept(row, labels, task)
    entry.update(labels=[list(pair) for pair in labels], reference=chosen, reason=why, kept=not why)
    if not why:
        entry["reason"] = f"{agreed} of {len(runs)} solutions agree; solution {chosen + 1} is the reference"


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _prepare(settings: Settings, samples: dict[str, TableSample], model: str) -> None:
    """The suite folder, its tables and manifest; a folder generated with other settings is refused."""
    tables = list(samples)
    wanted = {
        "tables": tables,
        "encoding": settings.encoding,
        "per_table": settings.per_table,
        "concepts": list(settings.concepts),
        "solutions": settings.solutions,
        "agree": settings.agree,
    }
    manifest = {
        "family": "closed-form",
        "format": "dabench",
        "description": f"Closed-form questions generated by {model} over {', '.join(tables)}.",
        "questions": "questions.jsonl",
        "labels": "labels.jsonl",
        "tables": "tables",
        "solutions": "solutions",
    }
    sources = {name: sample.path for name, sample in samples.items()}
    prepare_generated_suite(settings.out, SETTINGS, wanted, model, sources, manifest)


def write_suite(out: Path, entries: list[dict[str, Any]]) -> None:
    """The dabench files of the kept items, and the review page of all of them."""
    kept = sorted((e for e in entries if e["kept"]), key=lambda e: e["id"])
    (out / "solutions").mkdir(exist_ok=True)
    for entry in kept:
        code = entry["solutions"][entry["reference"]]["code"]
        write_atomic(out / "solutions" / f"{entry['id']}.py", code)
    questions = "".join(json.dumps(entry["row"]) + "\n" for entry in kept)
    labels = "".join(json.dumps({"id": e["id"], "common_answers": e["labels"]}) + "\n" for e in kept)
    write_atomic(out / "questions.jsonl", questions)
    write_atomic(out / "labels.jsonl", labels)
    write_atomic(out / "review.html", review_html(entries))


def summary(entries: list[dict[str, Any]]) -> Iterator[str]:
    """Lines for the terminal: kept, dropped by kind of reason, tokens."""
    kept = sum(e["kept"] for e in entries)
    yield f"{kept} of {len(entries)} questions kept"
    for reason, count in Counter(e["reason"].split(":")[0] for e in entries if not e["kept"]).most_common():
        yield f"dropped ({reason}): {count}"
    prompt = sum(e["tokens"]["prompt"] for e in entries)
    completion = sum(e["tokens"]["completion"] for e in entries)
    cost = sum(e["tokens"]["cost_usd"] for e in entries)
    yield f"tokens: {prompt} prompt, {completion} completion (${cost:.4f})"


def review_html(entries: list[dict[str, Any]]) -> str:
    """Every item: its question, its solutions with what they printed, kept or dropped and why."""
    parts = [
        "<!doctype html><meta charset='utf-8'><title>generated questions</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}pre{background:#f4f4f4;"
        "padding:.5em;overflow:auto}.kept{color:#070}.dropped{color:#a00}</style>",
        f"<h1>{sum(e['kept'] for e in entries)} of {len(entries)} questions kept</h1>",
    ]
    for entry in sorted(entries, key=lambda e: e["id"]):
        status = "kept" if entry["kept"] else "dropped"
        row = entry.get("row") or {}
        parts.append(
            f"<section><h2>{entry['id']}. {html.escape(entry['table'])} · {html.escape(entry['concept'])}"
            f" · {entry['level']}</h2><p class='{status}'><b>{status}</b>: {html.escape(entry['reason'])}</p>"
        )
        if row:
            parts.append(
                f"<p>{html.escape(row['question'])}</p><p><i>{html.escape(row['constraints'])}</i></p>"
                f"<p><code>{html.escape(row['format'])}</code></p>"
            )
        else:
            parts.append(f"<pre>{html.escape(str(entry.get('reply')))}</pre>")
        for number, run in enumerate(entry["solutions"], start=1):
            outcome = html.escape(run["problem"] or "ran")
            parts.append(
                f"<details><summary>solution {number}: {outcome}</summary><pre>{html.escape(run['code'])}"
                f"</pre><pre>{html.escape(run['stdout'])}</pre></details>"
            )
        parts.append("</section>")
    return "\n".join(parts) + "\n"
