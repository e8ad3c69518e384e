"""Loader of the official Tapilot-Crossing files (`tapilot:DIR`): one task per entry of the eight JSONL files.

The release layout: `DIR/data/dialogue_data/<file>.jsonl` and `DIR/data/resource/` (the five tables and
`decision_company.py`); `DIR` may also be the `data/` folder itself. Each file is a mode and action of
the family (`FILES`); the first line of `private.jsonl` (and of `private_action_correction.jsonl`, if it
has one) is the private library's record (`private_lib`), not an entry. Fields of an entry are those of
the release's data README; a bad entry is a one-line error naming the file, the line and the field.
Every file read resolves inside DIR (`core/paths.py`): a resource that is a link out of it is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError, located
from daharness.core.jsonl import iter_jsonl
from daharness.core.paths import SuiteFolder
from daharness.core.registry import suite_format
from daharness.core.suite import Suite
from daharness.core.task import (
    AnswerFormat,
    DialogueTurn,
    Gold,
    ReferenceSolution,
    ScorerSpec,
    Task,
    TaskMetadata,
    WorkspaceFile,
)
from daharness.families.interactive.loader import describe_functions
from daharness.families.interactive.release_run import DEFAULT_TIMEOUT_S, LIBRARY_FILE, TABLES
from daharness.families.interactive.scorers.choice import LETTERS
from daharness.families.interactive.scorers.private import called_functions
from daharness.families.interactive.scorers.release import correct_letter, query_options, with_history_imports

LIBRARY = LIBRARY_FILE.removesuffix(".py")
SOURCE = "Tapilot-Crossing 1.0 (Li et al., 2024), bird-bench/Tapilot-Crossing-1.0"


@dataclass(frozen=True)
class ReleaseFile:
    mode: str  # the family's mode: normal, action, private, private_action
    action: str | None  # the family's action type
    choice: bool  # multiple choice (else code generation)


FILES = {
    "action_analysis": ReleaseFile("action", "insight_mining", True),
    "action_una": ReleaseFile("action", "fast_fail", True),
    "action_bg": ReleaseFile("action", "best_guess", True),
    "action_plotqa": ReleaseFile("action", "plot_qa", True),
    "normal": ReleaseFile("normal", None, False),
    "private": ReleaseFile("private", None, False),
    "action_correction": ReleaseFile("action", "update_code", False),
    "private_action_correction": ReleaseFile("private_action", "update_code", False),
}
MULTI_CHOICE = [name for name, spec in FILES.items() if spec.choice]
CODE_GEN = [name for name, spec in FILES.items() if not spec.choice]
# the agent's session as the release's scripts start: both results folders the release's evaluator makes
# there (a reference solution saves into ./ref_result/, a reply into ./pred_result/), the workspace (which
# holds decision_company.py) importable
WORKSPACE_SETUP = (
    "import os, sys\nos.makedirs('ref_result', exist_ok=True)\nos.makedirs('pred_result', exist_ok=True)\n"
    "sys.path.insert(0, os.getcwd())\n"
)
CODE_FORMAT = "Answer with Python code in one ```python block; it runs after the code of the earlier turns."
CHOICE_FORMAT = "Answer with the letter of one option, e.g. 'Answer: A'."


@dataclass(frozen=True)
class Release:
    """Where a release's files are: `resources` maps each table and the library to its checked path."""

    dialogues: Path
    resource: Path
    resources: dict[str, Path]
    folder: SuiteFolder

    def file(self, name: str) -> Path | None:
        """The dialogue file `name`.jsonl (its checked path), None when there is none."""
        return self.folder.optional_file(f"{name}.jsonl", within=self.dialogues, what="dialogue file")


def locate(folder: Path) -> Release:
    """The release layout under `folder` (its root or its `data/`)."""
    release = SuiteFolder.at(folder)
    for data in (release.optional_folder("data"), release.root):
        dialogues = release.optional_folder("dialogue_data", within=data) if data else None
        if data and dialogues:
            resource = release.optional_folder("resource", within=data, what="resource folder")
            if resource is None:
                raise UserError(f"{folder}: no resource/ folder beside {dialogues}")
            names = [*TABLES.values(), LIBRARY_FILE]
            found = {name: release.optional_file(name, within=resource, what="resource") for name in names}
            if missing := [name for name, path in found.items() if path is None]:
                raise UserError(f"{resource}: missing {', '.join(missing)}")
            return Release(dialogues, resource, {n: p for n, p in found.items() if p}, release)
    raise UserError(f"{folder}: not a Tapilot-Crossing release (no data/dialogue_data/ folder)")


def selected_files(release: Release, files: str | None) -> list[str]:
    """The files `--files` names (comma-separated, with or without .jsonl), else every one present."""
    if files:
        names = [name.strip().removesuffix(".jsonl") for name in files.split(",") if name.strip()]
        for name in names:
            if name not in FILES:
                raise UserError(f"--files: unknown file {name!r}; known: {', '.join(FILES)}")
            if release.file(name) is None:
                raise UserError(f"--files: {release.dialogues}/{name}.jsonl not found")
        return names
    names = [name for name in FILES if release.file(name)]
    if not names:
        raise UserError(f"{release.dialogues}: none of the eight files ({', '.join(FILES)}.jsonl)")
    return names


@suite_format("tapilot", prefix="tapilot:")
def tapilot_suite(location: Path, options: Mapping[str, Any]) -> Suite:
    """The official Tapilot-Crossing files (release layout; `--files` to choose among the eight)."""
    release = locate(location)
    names = selected_files(release, options.get("files"))
    try:  # seconds per script (the release's 30)
        timeout = float(options.get("timeout_s", DEFAULT_TIMEOUT_S))
    except ValueError:
        raise UserError(f"--tapilot-timeout: not a number of seconds: {options['timeout_s']!r}") from None
    if not timeout > 0:
        raise UserError("--tapilot-timeout: must be above 0 seconds")
    cse = _cse_settings(options)
    tasks = [task for name in names for task in load_file(release, name, timeout, cse)]
    sources = {"dialogues": str(release.dialogues.resolve()), "resource": str(release.resource.resolve())}
    return Suite(f"tapilot:{location.name}", tasks, "Tapilot-Crossing, official files", sources)


def _cse_settings(options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The embedding endpoint and models of CSE / AccSE (`--tapilot-cse-url`, `--tapilot-cse-models`)."""
    url, models = options.get("cse_url"), options.get("cse_models")
    if not url and not models:
        return None
    names = [name.strip() for name in str(models or "").split(",") if name.strip()]
    if not url or len(names) != 2:
        raise UserError("CSE needs --tapilot-cse-url and --tapilot-cse-models CODET5P,ADA (two model names)")
    return {"base_url": str(url), "models": names}


def load_file(
    release: Release, name: str, timeout_s: float = DEFAULT_TIMEOUT_S, cse: dict[str, Any] | None = None
) -> list[Task]:
    path = release.file(name)
    if path is None:
        raise UserError(f"{release.dialogues}/{name}.jsonl: file not found")
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, raw in iter_jsonl(path):
        if is_library_record(raw):
            if name.startswith("private") and not tasks:
                continue  # the private library's record, line 1 of the private files
            raise located(path, "a private library record ('private_lib') is only allowed first", number)
        entry = check_entry(path, number, raw, FILES[name].choice)
        key = str(entry["data_id"])
        if key in seen:
            raise located(path, f"field 'data_id': {key} is also on line {seen[key]}", number)
        seen[key] = number
        tasks.append(entry_task(release, name, entry, timeout_s, cse))
    if not tasks:
        raise UserError(f"{path}: no entries")
    return tasks


def is_library_record(raw: dict[str, Any]) -> bool:
    return "private_lib" in raw and "data_id" not in raw


_TEXT_FIELDS = ("current_query", "reference_answer")
ROLES = ("system", "user", "assistant")  # the roles a prompt message may have
_OPTIONAL_TEXT = ("prompt_with_hist_txt", "ref_code_hist", "ref_code_all", "eval_metrics")


def check_entry(path: Path, number: int, raw: dict[str, Any], choice: bool) -> dict[str, Any]:
    """The entry's fields, checked; a bad one is a UserError naming the file, line and field."""

    def bad(field: str, why: str) -> UserError:
        return located(path, f"field {field!r}: {why}", number)

    data_id = raw.get("data_id")
    if not isinstance(data_id, int | str) or isinstance(data_id, bool) or str(data_id).strip() == "":
        raise bad("data_id", "missing; an entry needs an id (a number or a text)")
    if raw.get("domain_name") not in TABLES:
        raise bad("domain_name", f"{raw.get('domain_name')!r} is not one of {', '.join(TABLES)}")
    kinds = raw.get("result_type")
    if isinstance(kinds, str):
        kinds = [kinds] if kinds else []
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) and k for k in kinds):
        raise bad("result_type", "must be a result type or a non-empty list of them (one per intent)")
    for field in _TEXT_FIELDS:
        if not isinstance(raw.get(field), str) or not raw[field].strip():
            raise bad(field, "must be a non-empty text")
    for field in _OPTIONAL_TEXT:
        if not isinstance(raw.get(field, ""), str):
            raise bad(field, "must be a text")
    if not choice and not str(raw.get("eval_metrics", "")).strip():
        raise bad("eval_metrics", "a code-generation entry needs its evaluation code")
    messages = raw.get("prompt_with_hist_json", [])
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and m.get("role") in ROLES and isinstance(m.get("content"), str) for m in messages
    ):
        raise bad("prompt_with_hist_json", 'must be a list of {"role": ..., "content": ...} messages')
    return {
        **raw,
        "result_types": kinds,
        "intents": len(raw["result_type"]) if isinstance(raw["result_type"], list) else 1,
    }


def task_id(name: str, data_id: Any) -> str:
    return f"{name}-{data_id}"


def entry_task(
    release: Release, name: str, entry: dict[str, Any], timeout_s: float, cse: dict[str, Any] | None = None
) -> Task:
    spec = FILES[name]
    files = [WorkspaceFile(path=name, source=source) for name, source in release.resources.items()]
    data_id = entry["data_id"]
    kept = (
        "data_id",
        "domain_name",
        "result_type",
        "reference_answer",
        "ref_code_hist",
        "ref_code_all",
        "eval_metrics",
    )
    release_data = {key: entry.get(key, "") for key in kept} | {"file": name}
    history = [{"turn": 0, "code": WORKSPACE_SETUP}]
    if entry.get("ref_code_hist", "").strip():
        history.append({"turn": 1, "code": entry["ref_code_hist"]})
    gold = {"release": release_data, "history": history, "timeout_s": timeout_s}
    kinds = entry["result_types"]
    tags = [f"file:{name}", f"domain:{entry['domain_name']}", *sorted({f"result:{k}" for k in kinds})]
    if entry["intents"] > 1:
        tags.append("multi-intent")
    warnings = []
    if spec.choice:
        answer = correct_letter(entry["reference_answer"])
        if not answer:
            warnings.append(f"{name}:{data_id}: the reference answer names no correct letter (scored wrong)")
        choices = query_options(entry["current_query"])
        scorer = ScorerSpec(
            name="tapilot_choice", options={"answer": answer, "choices": choices, "intents": entry["intents"]}
        )
        answer_format = AnswerFormat(
            kind="choice", text=CHOICE_FORMAT, names=list(LETTERS[: len(choices) or 10])
        )
        reference = ReferenceSolution(language="python", code=f"print({f'Answer: {answer}'!r})\n")
        choice = answer or None
    else:
        options: dict[str, Any] = {"result_types": kinds, **({"cse": cse} if cse else {})}
        if spec.mode.startswith("private"):
            functions = sorted(describe_functions(release.resources[LIBRARY_FILE]))
            code = with_history_imports(entry.get("ref_code_hist", ""), entry["reference_answer"])
            calls = called_functions(code, LIBRARY, functions)
            options.update(library=LIBRARY, library_functions=functions, reference_calls=sorted(calls))
        scorer = ScorerSpec(name="tapilot_code", options=options)
        answer_format = AnswerFormat(kind="code", text=CODE_FORMAT)
        reference = ReferenceSolution(language="python", code=entry["reference_answer"])
        choice = None
    return Task(
        id=task_id(name, data_id),
        suite=f"tapilot:{release.dialogues.parent.name}",
        family="interactive",
        instructions=[entry["current_query"]],
        files=files,
        gold=Gold(choice=choice, data=gold),
        answer_format=answer_format,
        scorers=[scorer],
        metadata=TaskMetadata(
            category=spec.mode,
            subcategory=spec.action,
            tags=tags,
            source=SOURCE,
            source_id=f"{name}:{data_id}",
        ),
        dialogue=_dialogue(entry),
        prompt=_prompt(entry),
        reference=reference,
        warnings=warnings,
    )


# the fields of a response row that the release's evaluate.py reads besides `response` (`entry.get(key, "")`)
RELEASE_READS = ("result_type", "reference_answer", "ref_code_hist", "ref_code_all", "eval_metrics")


def as_released(task: Task, row: Mapping[str, Any]) -> Task:
    """The task as the release's evaluator scores a response row: its reference code, eval_metrics, result
    types and reference answer are the row's own (call_api.py copies them from the dialogue file, so they
    differ only when the row came from other data), a field the row lacks is empty."""
    release = dict(task.gold.data["release"])
    release.update({key: row.get(key, "") for key in RELEASE_READS})
    kinds = release["result_type"]
    spec = task.scorers[0]
    if spec.name == "tapilot_choice":
        options = {**spec.options, "answer": correct_letter(str(release["reference_answer"]))}
    else:  # the release counts len(result_type) intents for a list, else one
        types = [str(kind) for kind in kinds] if isinstance(kinds, list) and kinds else [str(kinds)]
        options = {**spec.options, "result_types": types}
    gold = task.gold.model_copy(update={"data": {**task.gold.data, "release": release}})
    scorer = spec.model_copy(update={"options": options})
    return task.model_copy(update={"gold": gold, "scorers": [scorer, *task.scorers[1:]]})


def _prompt(entry: dict[str, Any]) -> list[DialogueTurn]:
    """The release's prompt: `prompt_with_hist_json`, else its text prompt (else the request) as one user
    message, as call_api.py sends it."""
    messages = entry.get("prompt_with_hist_json") or []
    if not messages:
        text = entry.get("prompt_with_hist_txt", "").strip() or entry["current_query"]
        messages = [{"role": "user", "content": text}]
    return [DialogueTurn(role=m["role"], content=m["content"]) for m in messages]


def _dialogue(entry: dict[str, Any]) -> list[DialogueTurn]:
    """The conversation before the current request, as the release's prompt gives it (its system message,
    the current request and the assistant's opening after it, when the prompt ends with one, left out)."""
    messages = [m for m in entry.get("prompt_with_hist_json", []) if m["role"] in ("user", "assistant")]
    if len(messages) >= 2 and [m["role"] for m in messages[-2:]] == ["user", "assistant"]:
        messages = messages[:-2]  # the request, then the opening of the answer (the release's agents fill it)
    elif messages and messages[-1]["role"] == "user":
        messages = messages[:-1]
    return [DialogueTurn(role=m["role"], content=m["content"]) for m in messages]
