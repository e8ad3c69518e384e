"""`daharness generate interactive`: dialogues over a user's own tables by Tapilot-Crossing's Decision Company loop.

Per dialogue, a client persona (the model, told who it is) asks one request per turn, of the turn type the
plan names; a data scientist (the model again, told the table, the dialogue so far and its code) answers
with code, which runs in one sandbox per dialogue after the code of the earlier turns, as the dialogue's
history will. A code turn is kept when its code runs and leaves every result it names; a multiple-choice
turn (insight mining, plot QA, best guess) when its code runs and prints `Answer: X` for one of its
options. Anything else is dropped with its reason and the client asks again with the next turn type.

The tables are read with caps, and a table that cannot be read is skipped with one line
(`suites/user_tables.py`). Each finished dialogue is one line of the journal `review.jsonl` (every turn tried, kept or dropped and
why), flushed before the next starts; the suite's files are rewritten from it, so a re-run of the same
command goes on where a crash left it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daharness.core.generated_suite import prepare_generated_suite
from daharness.core.jsonl import append_journal, read_journal, write_atomic
from daharness.core.limits import Limits
from daharness.core.task import AnswerFormat, Gold, Task, WorkspaceFile
from daharness.families.interactive.loader import RESULT_TYPES as ALL_RESULT_TYPES
from daharness.models import ModelClient
from daharness.suites.user_tables import TableLimits, TableSample, estimate_tokens, read_tables

JOURNAL = "review.jsonl"
SETTINGS = "generation.json"
# the turn types in the order a dialogue takes them (the paper's normal turns and its action turns)
TURN_TYPES = ("normal", "insight_mining", "clarification", "plot", "plot_qa", "best_guess")
CHOICE_TYPES = ("insight_mining", "plot_qa", "best_guess")
RESULT_TYPES = tuple(t for t in ALL_RESULT_TYPES if t != "model")  # a model needs a probe expression
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_ANSWER = re.compile(r"Answer:\s*\(?([A-J])\)?")

_TYPE_ASKS = {
    "normal": "a new analysis step that computes something from the data",
    "insight_mining": "a question about what the results so far mean (answered by choosing an option)",
    "plot": "a chart of the data, saved as a PNG file",
    "plot_qa": "a question about what the last chart shows (answered by choosing an option)",
    "clarification": 'a short, under-specified request (e.g. "show me the big ones"), and what you would '
    "answer if asked what you mean",
    "best_guess": "a question that needs an assumption to answer (answered by choosing an option)",
}


@dataclass
class Settings:
    tables: Path
    out: Path
    dialogues: int = 2
    turns: int = 4
    backend: str = "bwrap"
    limits: Limits | None = None
    encoding: str | None = None  # of the tables (None: detected)
    table_limits: TableLimits = field(default_factory=TableLimits)


def describe_table(sample: TableSample, limits: TableLimits) -> str:
    """What both personas are told of the table (as much as `limits` let be read and told)."""
    columns = ", ".join(f"{name} ({dtype})" for name, dtype in sample.frame.dtypes.items())
    lines = [
        f"{sample.name}: {sample.rows_text}; columns: {columns}",
        sample.left_out(),
        sample.how_to_read(),
        sample.examples(3, limits).to_string(),
    ]
    return sample.limit_description("\n".join(line for line in lines if line), limits)


def _reply_json(text: str) -> dict[str, Any] | None:
    found = _JSON_OBJECT.search(text or "")
    try:
        value = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


# ---- the two personas -------------------------------------------------------------------------------


def persona_messages(number: int, table: str, description: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You invent the client of a data-analysis consultancy."},
        {
            "role": "user",
            "content": f"{description}\n\nDescribe a client who wants to analyse {table} (dialogue "
            f'{number}). Reply with a JSON object: {{"user": "who they are, in a few words", '
            '"description": "one sentence on what they want to learn"}.',
        },
    ]


def client_messages(
    dialogue: dict[str, Any], number: int, kind: str, description: str
) -> list[dict[str, str]]:
    asked = "\n".join(f"- {turn['query']}" for turn in dialogue["turns"]) or "(nothing yet)"
    extra = ', "clarification": "what you mean"' if kind == "clarification" else ""
    return [
        {
            "role": "system",
            "content": f"You are {dialogue['user']}. {dialogue['description']} You talk to a data scientist.",
        },
        {
            "role": "user",
            "content": f"{description}\n\nYou asked so far:\n{asked}\n\nAsk your next request (dialogue "
            f"{dialogue['number']}, turn {number}, type {kind}): {_TYPE_ASKS[kind]}. Reply with a JSON "
            f'object: {{"query": "your request"{extra}}}.',
        },
    ]


def scientist_messages(
    dialogue: dict[str, Any], number: int, kind: str, request: dict[str, Any], description: str
) -> list[dict[str, str]]:
    history = "\n\n".join(f"# {turn['query']}\n{turn['code']}" for turn in dialogue["turns"])
    if kind in CHOICE_TYPES:
        wanted = (
            '{"choices": ["option A", "option B", ...], "code": "Python that computes the right option '
            'from the data and prints Answer: <letter>"} (the last option: "None of the above")'
        )
    else:
        wanted = (
            '{"code": "Python that answers", "results": [{"type": T, "name": VARIABLE} or {"type": "plot", '
            f'"file": "NAME.png"}}]}} with T one of {", ".join(t for t in RESULT_TYPES if t != "plot")}'
        )
    clarified = (
        f"\nAsked what they mean, the client says: {request['clarification']}"
        if kind == "clarification"
        else ""
    )
    return [
        {
            "role": "system",
            "content": "You are a data scientist. Your code runs after the code of the earlier turns, in "
            "the folder holding the tables; it keeps their variables.",
        },
        {
            "role": "user",
            "content": f"{description}\n\nThe code so far:\n{history or '(none)'}\n\nThe client "
            f"({dialogue['user']}) asks (dialogue {dialogue['number']}, turn {number}, type {kind}): "
            f"{request['query']}{clarified}\n\nReply with a JSON object: {wanted}.",
        },
    ]


# ---- one dialogue ----------------------------------------------------------------------------------


def _turn_of(
    kind: str, request: dict[str, Any], answer: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, str]:
    """The dialogue file's turn (before running it) or None and why."""
    if answer is None:
        return None, "malformed: the data scientist's reply holds no JSON object"
    code = answer.get("code")
    if not isinstance(code, str) or not code.strip():
        return None, "malformed: the data scientist gave no code"
    turn: dict[str, Any] = {"query": request["query"], "code": code}
    if kind in CHOICE_TYPES:
        choices = answer.get("choices")
        if (
            not isinstance(choices, list)
            or not 2 <= len(choices) <= 10
            or not all(isinstance(c, str) for c in choices)
        ):
            return None, "malformed: 'choices' must list 2 to 10 option texts"
        turn.update(answer_type="choice", action=kind, choices=choices)
        return turn, ""
    results = answer.get("results")
    if not isinstance(results, list) or not results:
        return None, "malformed: a code turn needs 'results'"
    for intent in results:
        target = "file" if isinstance(intent, dict) and intent.get("type") == "plot" else "name"
        if not isinstance(intent, dict) or intent.get("type") not in RESULT_TYPES or not intent.get(target):
            return None, f"malformed: result {intent!r} is not {{type, {target}}} of a known type"
    turn["results"] = [
        {key: intent[key] for key in ("type", "name", "file") if key in intent} for intent in results
    ]
    if kind == "clarification":
        if not str(request.get("clarification", "")).strip():
            return None, "malformed: a clarification turn needs the client's 'clarification'"
        turn.update(
            action="clarification", clarification=request["clarification"], answerability="under_specified"
        )
    return turn, ""


def _check_run(sandbox: Any, turn: dict[str, Any]) -> str:
    """Run the turn's code after the earlier ones; why it cannot be a turn, or ''. A choice turn gets
    its `answer` from what the code prints."""
    observation = sandbox.python(turn["code"])
    if not observation.ok:
        error = observation.error
        return f"the code fails: {error.name}: {error.value}" if error else "the code fails"
    if turn.get("answer_type") == "choice":
        letters = _ANSWER.findall(observation.stdout)
        if not letters or ord(letters[-1]) - ord("A") >= len(turn["choices"]):
            return "the code prints no Answer: <letter> of its options"
        turn["answer"] = letters[-1]
        return ""
    names = [intent["name"] for intent in turn["results"] if intent["type"] != "plot"]
    files = [intent["file"] for intent in turn["results"] if intent["type"] == "plot"]
    probe = f"print(sorted(n for n in {names!r} if n not in globals()))"
    missing = sandbox.python(probe).stdout.strip()
    if missing not in ("", "[]"):
        return f"the code leaves no variable {missing}"
    listed = sandbox.bash("ls " + " ".join(files)) if files else None
    if listed is not None and not listed.ok:
        return f"the code saves no {', '.join(files)}"
    return ""


def generate_dialogue(
    number: int, table: TableSample, description: str, settings: Settings, client: ModelClient
) -> dict[str, Any]:
    """One dialogue over `table` (described as `description`) with every turn tried: the journal's entry."""
    from daharness.sandbox import open_sandbox

    before = client.usage
    persona = _reply_json(client.complete(persona_messages(number, table.name, description)).text) or {}
    dialogue: dict[str, Any] = {
        "number": number,
        "id": f"d{number}",
        "user": str(persona.get("user") or "client"),
        "description": str(persona.get("description") or f"A client explores {table.name}."),
        "tables": [table.name],
        "turns": [],
    }
    tried: list[dict[str, Any]] = []
    task = Task(
        id=dialogue["id"], suite="generating", family="interactive", instructions=["generating"],
        files=[WorkspaceFile(path=table.name, source=table.path)], gold=Gold(),
        answer_format=AnswerFormat(kind="code", text=""),
    )  # fmt: skip
    with open_sandbox(settings.backend, task, settings.limits) as sandbox:
        for turn_number in range(1, settings.turns + 1):
            kind = TURN_TYPES[(turn_number - 1) % len(TURN_TYPES)]
            if kind == "plot_qa" and not any(
                i["type"] == "plot" for t in dialogue["turns"] for i in t.get("results", [])
            ):
                kind = "insight_mining"  # no chart to ask about
            request = _reply_json(
                client.complete(client_messages(dialogue, turn_number, kind, description)).text
            )
            attempt: dict[str, Any] = {"turn": turn_number, "type": kind, "request": request}
            if not request or not str(request.get("query", "")).strip():
                attempt.update(kept=False, reason="malformed: the client's reply has no 'query'")
                tried.append(attempt)
                continue
            reply = client.complete(
                scientist_messages(dialogue, turn_number, kind, request, description)
            ).text
            turn, why = _turn_of(kind, request, _reply_json(reply))
            if turn is not None:
                why = _check_run(sandbox, turn)
            attempt.update(reply=reply, made=turn, kept=not why, reason=why or "kept: the code runs")
            tried.append(attempt)
            if not why:
                dialogue["turns"].append(turn)
    used = client.usage
    return {
        "number": number,
        "table": table.name,
        "dialogue": {key: value for key, value in dialogue.items() if key != "number"},
        "tried": tried,
        "kept": bool(dialogue["turns"]),
        "tokens": {
            "prompt": used.prompt_tokens - before.prompt_tokens,
            "completion": used.completion_tokens - before.completion_tokens,
            "cost_usd": round(used.cost_usd - before.cost_usd, 6),
        },
    }


# ---- the suite -------------------------------------------------------------------------------------


def generate_interactive(
    settings: Settings,
    client: ModelClient,
    on_item: Callable[[dict[str, Any]], None] | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> list[dict[str, Any]]:
    """Generate (or go on generating) the dialogues in `settings.out`; every entry of the journal. `say`
    gets one line per table skipped or cut, and the estimate of the prompt tokens before the first
    request."""
    found = read_tables(settings.tables, settings.encoding, settings.table_limits)
    for line in found.notes():
        say(line)
    tables = found.tables
    descriptions = {sample.name: describe_table(sample, settings.table_limits) for sample in tables}
    _prepare(settings, tables, client.settings.model)
    entries = read_journal(settings.out / JOURNAL)
    done = {entry["number"] for entry in entries}
    numbers = [number for number in range(1, settings.dialogues + 1) if number not in done]
    chosen = {number: tables[(number - 1) % len(tables)] for number in numbers}
    if numbers:
        say(_estimate([descriptions[table.name] for table in chosen.values()], settings.turns))
    for number in numbers:
        table = chosen[number]
        entry = generate_dialogue(number, table, descriptions[table.name], settings, client)
        append_journal(settings.out / JOURNAL, entry)
        entries.append(entry)
        write_dialogues(settings.out, entries)
        if on_item is not None:
            on_item(entry)
    write_dialogues(settings.out, entries)
    return entries


def _estimate(descriptions: list[str], turns: int) -> str:
    """The prompt tokens of the dialogues to go, at least: each request carries its table's description."""
    requests = len(descriptions) * (1 + 2 * turns)  # a persona, then a request and an answer per turn
    chars = sum(len(text) + 600 for text in descriptions) * (1 + 2 * turns)  # 600: the prompts' own words
    return (
        f"estimate: about {requests:,} requests, at least {estimate_tokens(chars):,} prompt tokens (each "
        f"carries its table's description, up to {estimate_tokens(max(map(len, descriptions))):,} tokens)"
    )


def _prepare(settings: Settings, samples: list[TableSample], model: str) -> None:
    tables = [sample.name for sample in samples]
    wanted = {
        "tables": tables,
        "dialogues": settings.dialogues,
        "turns": settings.turns,
        "encoding": settings.encoding,
    }
    manifest = {
        "family": "interactive",
        "format": "interactive",
        "description": f"Dialogues generated by {model} over {', '.join(tables)} (Decision Company loop).",
        "tables": "tables",
        "dialogues": "dialogues",
    }
    sources = {sample.name: sample.path for sample in samples}
    prepare_generated_suite(settings.out, SETTINGS, wanted, model, sources, manifest)
    (settings.out / "dialogues").mkdir(exist_ok=True)


def write_dialogues(out: Path, entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        if entry["kept"]:
            dialogue = {**entry["dialogue"], "source": f"generated from {entry['table']}"}
            write_atomic(out / "dialogues" / f"{dialogue['id']}.json", json.dumps(dialogue, indent=2) + "\n")


def summary(entries: list[dict[str, Any]]) -> Iterator[str]:
    turns = [attempt for entry in entries for attempt in entry["tried"]]
    kept = sum(attempt["kept"] for attempt in turns)
    yield f"{sum(e['kept'] for e in entries)} of {len(entries)} dialogues, {kept} of {len(turns)} turns kept"
    for entry in entries:
        for attempt in entry["tried"]:
            if not attempt["kept"]:
                yield f"dropped (d{entry['number']}, turn {attempt['turn']}): {attempt['reason']}"
    prompt = sum(e["tokens"]["prompt"] for e in entries)
    completion = sum(e["tokens"]["completion"] for e in entries)
    yield f"tokens: {prompt} prompt, {completion} completion (${sum(e['tokens']['cost_usd'] for e in entries):.4f})"
