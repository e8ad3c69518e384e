"""The DA-Code action language: Bash(code=...), Python(file_path=...) + code block, SQL(file_path=...,
command=..., output=...), Terminate(output=...), and a parser that survives what models write.

The parser reads arguments like a small tokenizer, not a regular expression: quoted values may hold
parentheses, commas, the other quote, escaped quotes and backslashes; unquoted values end at a comma or
the closing parenthesis at depth 0. Only the escaped delimiter (\\" inside "...") is unescaped, so
backslashes meant for the shell or for regular expressions reach the sandbox untouched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ACTION_NAMES = ("Bash", "Python", "SQL", "Terminate")
_ACTION_MARK = re.compile(r"Action\s*:", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\r?\n")
ANY_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\r?\n")  # a block of any language (file contents)


@dataclass(frozen=True)
class ActionGrammar:
    """The actions an agent may take: the arguments each needs, and those read from a fenced block after it."""

    required: dict[str, tuple[str, ...]]
    fenced: dict[str, tuple[str, re.Pattern[str]]] = field(default_factory=dict)

    @property
    def start(self) -> re.Pattern[str]:
        return re.compile(r"\b(" + "|".join(self.required) + r")\s*\(")


ACTION_SPACE = """## Bash action
Bash(code="shell command")
Runs one non-interactive shell command in the working directory. Example: Bash(code="ls -l")

## Python action
Python(file_path="path/to/script.py"):
```python
python code
```
Writes the code to the file (overwriting it) and runs it with python. Example:
Python(file_path="hello.py"):
```python
print("hello")
```

## SQL action
SQL(file_path="path/to/database.db", command="SQL statement", output="result.csv" or "direct")
Runs the statement on a SQLite or DuckDB file; saves the result as CSV, or shows it with output="direct".

## Terminate action
Terminate(output="the answer, or the output file path")
Ends the task. Put the final answer (or the path of the file that holds it) in output. Example: Terminate(output="result.csv")
"""


@dataclass(frozen=True)
class DaAction:
    kind: str
    args: dict[str, str] = field(default_factory=dict)

    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        return self.kind, tuple(sorted(self.args.items()))


class ActionSyntaxError(ValueError):
    """The reply names an action but its arguments cannot be read."""


def parse_da_action(reply: str, grammar: ActionGrammar | None = None) -> DaAction | None:
    """The action of a reply (the last `Action:` section wins), or None when there is none."""
    grammar = grammar or DA_GRAMMAR
    start = grammar.start
    marks = list(_ACTION_MARK.finditer(reply))
    text = reply[marks[-1].end() :] if marks else reply
    match = start.search(text) or (start.search(reply) if marks else None)
    if match is None:
        return None
    source = text if start.search(text) else reply
    kind = match.group(1)
    args, end = _parse_arguments(source, match.end())
    if kind in grammar.fenced and grammar.fenced[kind][0] not in args:
        name, fence = grammar.fenced[kind]
        code = _fenced_code(source, end, fence)
        if code is None:
            raise ActionSyntaxError(f"a {kind} action needs its {name} in a ``` ... ``` block after it")
        args[name] = code
    _check_arguments(kind, args, grammar)
    return DaAction(kind, args)


def _parse_arguments(text: str, position: int) -> tuple[dict[str, str], int]:
    args: dict[str, str] = {}
    while True:
        position = _skip_space(text, position)
        if position >= len(text):
            raise ActionSyntaxError("the action's parenthesis is never closed")
        if text[position] == ")":
            return args, position + 1
        name_match = re.compile(r"(\w+)\s*=\s*").match(text, position)
        if name_match is None:
            raise ActionSyntaxError(f"expected name=value at {text[position : position + 20]!r}")
        name = "file_path" if name_match.group(1) == "filepath" else name_match.group(1)
        value, position = _read_value(text, name_match.end())
        args[name] = value
        position = _skip_space(text, position)
        if position < len(text) and text[position] == ",":
            position += 1


def _read_value(text: str, position: int) -> tuple[str, int]:
    for quote in ('"""', "'''", '"', "'", "`"):
        if text.startswith(quote, position):
            return _read_quoted(text, position + len(quote), quote)
    depth, start = 0, position
    while position < len(text):
        char = text[position]
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                break
            depth -= 1
        elif char == "," and depth == 0:
            break
        position += 1
    return text[start:position].strip(), position


def _read_quoted(text: str, position: int, quote: str) -> tuple[str, int]:
    out = []
    while position < len(text):
        if text[position] == "\\" and text.startswith(quote, position + 1):
            out.append(quote)
            position += 1 + len(quote)
        elif text[position] == "\\" and position + 1 < len(text):
            out.append(text[position : position + 2])  # any other escape reaches the sandbox as written
            position += 2
        elif text.startswith(quote, position):
            return "".join(out), position + len(quote)
        else:
            out.append(text[position])
            position += 1
    raise ActionSyntaxError(f"a {quote} string is never closed")


def _fenced_code(text: str, position: int, fence: re.Pattern[str] = _FENCE_OPEN) -> str | None:
    opening = fence.search(text, position)
    if opening is None:
        return None
    closing = text.rfind("```", opening.end())
    body = text[opening.end() : closing] if closing >= 0 else text[opening.end() :]
    return body.rstrip()


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


_REQUIRED = {"Bash": ("code",), "Python": ("code",), "SQL": ("file_path", "command"), "Terminate": ()}
DA_GRAMMAR = ActionGrammar(_REQUIRED, {"Python": ("code", _FENCE_OPEN)})


def _check_arguments(kind: str, args: dict[str, str], grammar: ActionGrammar) -> None:
    missing = [name for name in grammar.required[kind] if not args.get(name)]
    if missing:
        raise ActionSyntaxError(f"{kind} needs {', '.join(missing)}")
