"""Loader of interactive suites (Tapilot-Crossing family): dialogues over tables, one task per turn.

The format is in the family's README.md. A suite folder holds `suite.json`, a folder of tables, an
optional private library and `dialogues/*.json`; every turn of a dialogue that is a task becomes one
`Task` whose history is the dialogue's earlier turns. Mistakes in the data are one-line errors naming
the file, the task and the turn. Every file the suite names resolves inside its folder (`core/paths.py`):
a dialogue naming a table that leads out is left out (`Suite.unsupported`, with the reason); a tables
folder or library that does is an error.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.jsonl import read_json, read_text
from daharness.core.paths import Refused, SuiteFolder
from daharness.core.registry import check_task_scorers, suite_format
from daharness.core.suite import Suite
from daharness.core.task import (
    AnswerFormat,
    DialogueTurn,
    Gold,
    PythonLibrary,
    ReferenceSolution,
    ScorerSpec,
    Task,
    TaskMetadata,
    WorkspaceFile,
)
from daharness.families.interactive.scorers.choice import LETTERS
from daharness.families.interactive.scorers.code import RESULT_TYPES
from daharness.families.interactive.scorers.private import called_functions
from daharness.suites.manifest import read_manifest

CODE_ACTIONS = ("update_code", "clarification")
CHOICE_ACTIONS = ("insight_mining", "fast_fail", "best_guess", "plot_qa")
ANSWERABILITY = ("answerable", "under_specified", "unanswerable")
_DIALOGUE_FIELDS = {"id", "description", "user", "tables", "private", "source", "turns"}
_TURN_FIELDS = {
    "query", "answer_type", "action", "code", "results", "choices", "answer", "clarification",
    "answerability", "task", "execute", "decoys",
}  # fmt: skip
_INTENT_FIELDS = {"type", "name", "file", "expression", "tolerance", "ignore_row_order"}
_TYPE_WORDS = {
    "dataframe": "a dataframe", "series": "a pandas Series", "scalar": "a single value", "list": "a list",
    "dict": "a dict", "tuple": "a tuple", "model": "a fitted model",
}  # fmt: skip
CODE_FORMAT = (
    "Answer with Python code in one ```python block. It runs after the code of the earlier turns, so their "
    "variables and imports are there. Leave {targets}."
)


@suite_format("interactive", prefix="interactive:")
def interactive_suite(location: Path, options: Mapping[str, Any]) -> Suite:
    """A folder of Tapilot-Crossing style dialogues (README.md)."""
    if not location.is_dir():
        raise UserError(f"{location}: not a folder of interactive dialogues")
    manifest = read_manifest(location)
    refused: dict[str, str] = {}
    tasks = load_interactive_suite(location, manifest, refused)
    return Suite(
        manifest["name"], tasks, manifest.get("description", ""), {"builtin": manifest["name"]},
        unsupported=refused,
    )  # fmt: skip


def load_interactive_suite(location: Path, manifest: dict[str, Any], refused: dict[str, str]) -> list[Task]:
    """The tasks of the suite folder `location`; a dialogue refused (`core/paths.py`) is left out, its
    file's name and the reason put into `refused`."""
    folder = SuiteFolder.at(location)
    named = str(manifest.get("tables", "tables"))
    tables = folder.optional_folder(named, what="tables folder")
    if tables is None:
        raise UserError(f"{location}/suite.json: tables folder {folder.root}/{named} not found")
    library = _library(folder, manifest)
    dialogues_name = str(manifest.get("dialogues", "dialogues"))
    dialogues = folder.optional_folder(dialogues_name, what="dialogues folder")
    names = [n for n in folder.names(dialogues) if n.endswith(".json")] if dialogues else []
    if not names:
        raise UserError(f"{location}/{dialogues_name}: no dialogues (*.json)")
    tasks: list[Task] = []
    for name in names:
        try:
            path = folder.file(name, within=dialogues, what="dialogue file")
            tasks += _dialogue_tasks(folder, path, manifest["name"], tables, library)
        except Refused as exc:
            refused[name.removesuffix(".json")] = f"refused (every turn of the dialogue): {exc}"
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise UserError(f"{dialogues}: two tasks are named {task.id}")
        seen.add(task.id)
    return tasks


# ---- the private library -------------------------------------------------------------------------------


def _library(folder: SuiteFolder, manifest: dict[str, Any]) -> PythonLibrary | None:
    if "library" not in manifest:
        return None
    spec = manifest["library"]
    where = f"{folder.root}/suite.json"
    if (
        not isinstance(spec, dict)
        or not isinstance(spec.get("name"), str)
        or not isinstance(spec.get("folder"), str)
    ):
        raise UserError(f'{where}: \'library\' must be {{"name": IMPORT_NAME, "folder": FOLDER}}')
    source = folder.folder(spec["folder"], what="library folder")
    folder.tree(source, what="library file")  # mounted in every sandbox: nothing in it may lead out
    name = spec["name"]
    package, module = f"{name}/__init__.py", f"{name}.py"
    code_file = folder.optional_file(package, within=source) or folder.optional_file(module, within=source)
    if code_file is None:
        raise UserError(f"{where}: library {name!r}: neither {source}/{package} nor {source}/{module} exists")
    others = set(folder.names(source)) - {name, f"{name}.py", "__pycache__"}
    if others:
        raise UserError(
            f"{where}: library folder {source} must hold only {name!r}; it also has {sorted(others)}"
        )
    return PythonLibrary(name=name, source=source, functions=describe_functions(code_file))


def describe_functions(path: Path) -> dict[str, str]:
    """Public top-level functions of a module: name -> `def name(args)` and its docstring."""
    try:
        tree = ast.parse(read_text(path))
    except SyntaxError as exc:
        raise UserError(f"{path}:{exc.lineno}: the private library does not parse: {exc.msg}") from None
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            doc = ast.get_docstring(node) or ""
            found[node.name] = f"def {node.name}({ast.unparse(node.args)}):\n" + "".join(
                f"    {line}\n" for line in doc.splitlines()
            )
    return found


# ---- dialogues -----------------------------------------------------------------------------------------


class _Where:
    """Names a place in a dialogue file for error messages."""

    def __init__(self, path: Path, dialogue: str) -> None:
        self.path, self.dialogue = path, dialogue

    def error(self, message: str, turn: int | None = None) -> UserError:
        if turn is None:
            return UserError(f"{self.path}: {message}")
        return UserError(f"{self.path}: task {task_id(self.dialogue, turn)} (turn {turn}): {message}")


def task_id(dialogue: str, turn: int) -> str:
    return f"{dialogue}-{turn:02d}"


def _dialogue_tasks(
    folder: SuiteFolder, path: Path, suite: str, tables: Path, library: PythonLibrary | None
) -> list[Task]:
    raw = read_json(path)
    where = _Where(path, path.stem)
    if not isinstance(raw, dict):
        raise where.error("expected a JSON object")
    unknown = sorted(set(raw) - _DIALOGUE_FIELDS)
    if unknown:
        raise where.error(f"unknown field {unknown[0]!r}")
    dialogue = str(raw.get("id", path.stem))
    where.dialogue = dialogue
    turns = raw.get("turns")
    if not isinstance(turns, list) or not turns:
        raise where.error("'turns' must be a non-empty list")
    names = raw.get("tables")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise where.error("'tables' must list the table files the dialogue uses")
    files = []
    for name in names:
        try:
            table = folder.file(name, within=tables, what="table")
        except Refused as exc:
            if exc.missing:
                raise where.error(f"table {name!r} not found in {tables}") from None
            raise
        files.append(WorkspaceFile(path=name, source=table))
    private = raw.get("private", False)
    if not isinstance(private, bool):
        raise where.error("'private' must be true or false")
    if private and library is None:
        raise where.error("a private dialogue needs the suite's 'library' (suite.json)")
    context = {
        "suite": suite, "dialogue": dialogue, "files": files, "private": private,
        "library": library if private else None, "user": str(raw.get("user", "data analyst")),
        "source": raw.get("source"), "description": str(raw.get("description", "")),
    }  # fmt: skip
    tasks = []
    for number, turn in enumerate(turns, start=1):
        _check_turn(where, number, turn)
        if turn.get("task", True):
            tasks.append(_turn_task(where, number, turn, turns[: number - 1], context))
    if not tasks:
        raise where.error("no turn is a task")
    return tasks


def _joined(value: Any) -> Any:
    """Code may be written as one string or as a list of lines."""
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value) + "\n"
    return value


def _check_turn(where: _Where, number: int, turn: Any) -> None:
    if not isinstance(turn, dict):
        raise where.error("a turn must be a JSON object", number)
    unknown = sorted(set(turn) - _TURN_FIELDS)
    if unknown:
        raise where.error(f"unknown field {unknown[0]!r}", number)
    for flag in ("task", "execute"):
        if not isinstance(turn.get(flag, True), bool):
            raise where.error(f"{flag!r} must be true or false", number)
    if not isinstance(turn.get("decoys", []), list):
        raise where.error("'decoys' must be a list", number)
    turn["code"] = _joined(turn.get("code"))
    for decoy in turn.get("decoys", []):
        if isinstance(decoy, dict):
            decoy["code"] = _joined(decoy.get("code"))
    for field in ("query", "code"):
        if not isinstance(turn.get(field), str) or not turn[field].strip():
            raise where.error(f"field {field!r} must be a non-empty string", number)
    answer_type = turn.get("answer_type", "code")
    action = turn.get("action")
    if answer_type == "code":
        if action not in (None, *CODE_ACTIONS):
            raise where.error(
                f"a code turn's action must be one of {', '.join(CODE_ACTIONS)} (or none), not {action!r}",
                number,
            )
        _check_results(where, number, turn.get("results"))
    elif answer_type == "choice":
        if action not in CHOICE_ACTIONS:
            raise where.error(
                f"a choice turn's action must be one of {', '.join(CHOICE_ACTIONS)}, not {action!r}", number
            )
        choices = turn.get("choices")
        if (
            not isinstance(choices, list)
            or not 2 <= len(choices) <= len(LETTERS)
            or not all(isinstance(c, str) for c in choices)
        ):
            raise where.error(f"'choices' must list 2 to {len(LETTERS)} option texts", number)
        if turn.get("answer") not in LETTERS[: len(choices)]:
            raise where.error(f"'answer' must be one of the letters {LETTERS[: len(choices)]}", number)
    else:
        raise where.error(f"unknown answer type {answer_type!r} (code or choice)", number)
    if turn.get("answerability", "answerable") not in ANSWERABILITY:
        raise where.error(f"'answerability' must be one of {', '.join(ANSWERABILITY)}", number)
    for index, decoy in enumerate(turn.get("decoys", [])):
        if (
            not isinstance(decoy, dict)
            or not isinstance(decoy.get("label"), str)
            or not isinstance(decoy.get("code"), str)
        ):
            raise where.error(f'decoys[{index}] must be {{"label": ..., "code": ...}}', number)


def _check_results(where: _Where, number: int, results: Any) -> None:
    if not isinstance(results, list) or not results:
        raise where.error("a code turn needs 'results': the intents its code leaves behind", number)
    for index, intent in enumerate(results):
        if not isinstance(intent, dict):
            raise where.error(f"results[{index}] must be a JSON object", number)
        unknown = sorted(set(intent) - _INTENT_FIELDS)
        if unknown:
            raise where.error(f"results[{index}]: unknown field {unknown[0]!r}", number)
        if intent.get("type") not in RESULT_TYPES:
            raise where.error(
                f"results[{index}]: unknown result type {intent.get('type')!r} (known: {', '.join(RESULT_TYPES)})",
                number,
            )
        target = "file" if intent["type"] == "plot" else "name"
        if not isinstance(intent.get(target), str) or not intent[target]:
            raise where.error(f"results[{index}]: a {intent['type']} result needs {target!r}", number)


def _mode(private: bool, action: str | None) -> str:
    if private:
        return "private_action" if action else "private"
    return "action" if action else "normal"


def _shown(turn: dict[str, Any]) -> list[DialogueTurn]:
    """How an earlier turn appears in a later turn's history."""
    query = turn["query"]
    if turn.get("clarification"):
        query += f"\n(Asked to clarify, the user said: {turn['clarification']})"
    if turn.get("answer_type", "code") == "choice":
        options = "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(turn["choices"]))
        letter = turn["answer"]
        answer = f"Answer: {letter}. {turn['choices'][LETTERS.index(letter)]}"
        return [
            DialogueTurn(role="user", content=f"{query}\n\nOptions:\n{options}"),
            DialogueTurn(role="assistant", content=answer),
        ]
    return [
        DialogueTurn(role="user", content=query),
        DialogueTurn(role="assistant", content="", code=turn["code"]),
    ]


def _targets(results: list[dict[str, Any]]) -> str:
    parts = []
    for intent in results:
        if intent["type"] == "plot":
            parts.append(f"the plot saved as `{intent['file']}` (with matplotlib's savefig)")
        else:
            parts.append(f"`{intent['name']}` ({_TYPE_WORDS[intent['type']]})")
    return ("these results: " if len(parts) > 1 else "this result: ") + "; ".join(parts)


def _turn_task(
    where: _Where, number: int, turn: dict[str, Any], earlier: list[dict[str, Any]], context: dict[str, Any]
) -> Task:
    dialogue, library = context["dialogue"], context["library"]
    answer_type = turn.get("answer_type", "code")
    action = turn.get("action")
    mode = _mode(context["private"], action)
    history = [
        {"turn": i, "code": past["code"]}
        for i, past in enumerate(earlier, start=1)
        if past.get("answer_type", "code") == "code" and past.get("execute", True)
    ]
    shown = [line for past in earlier for line in _shown(past)]
    gold: dict[str, Any] = {
        "dialogue": dialogue, "turn": number, "history": history, "clarification": turn.get("clarification"),
        "decoys": list(turn.get("decoys", [])), "answerability": turn.get("answerability", "answerable"),
    }  # fmt: skip
    tags = [
        f"answer:{answer_type}", f"answerability:{gold['answerability']}", f"dialogue:{dialogue}",
        f"user:{context['user']}",
    ]  # fmt: skip
    if answer_type == "code":
        results = turn["results"]
        scorer_options: dict[str, Any] = {"intents": results}
        if library is not None:
            functions = sorted(library.functions)
            calls = sorted(called_functions(turn["code"], library.name, functions))
            if not calls:
                raise where.error(
                    f"a private turn's reference code calls no function of {library.name}", number
                )
            scorer_options.update(library=library.name, library_functions=functions, reference_calls=calls)
        scorers = [ScorerSpec(name="interactive_code", options=scorer_options)]
        answer_format = AnswerFormat(
            kind="code",
            text=CODE_FORMAT.format(targets=_targets(results)),
            names=[str(i.get("file") if i["type"] == "plot" else i["name"]) for i in results],
        )
        tags += sorted({f"result:{intent['type']}" for intent in results})
        if len(results) > 1:
            tags.append("multi-intent")
        choice = None
    else:
        choices = turn["choices"]
        options = "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(choices))
        scorers = [ScorerSpec(name="choice", options={"answer": turn["answer"], "choices": choices})]
        answer_format = AnswerFormat(
            kind="choice",
            text=f"Options:\n{options}\n\nAnswer with the letter of one option, e.g. 'Answer: A'.",
            names=list(LETTERS[: len(choices)]),
        )
        choice = turn["answer"]
    task = Task(
        id=task_id(dialogue, number),
        suite=context["suite"],
        family="interactive",
        instructions=[turn["query"]],
        constraints=f"The user is a {context['user']}. {context['description']}".strip(),
        files=context["files"],
        gold=Gold(choice=choice, data=gold),
        answer_format=answer_format,
        scorers=scorers,
        metadata=TaskMetadata(
            category=mode,
            subcategory=action,
            tags=tags,
            source=context["source"],
            source_id=f"{dialogue}#{number}",
        ),
        dialogue=shown,
        reference=ReferenceSolution(language="python", code=turn["code"]),
        libraries=[library] if library is not None else [],
    )
    try:
        check_task_scorers(task)
    except UserError as exc:
        raise where.error(str(exc).removeprefix(f"task {task.id}: "), number) from None
    return task
