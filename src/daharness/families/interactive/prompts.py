"""Prompts of the interactive agents (Tapilot-Crossing, Appendix K), written for daharness.

Every prompt starts with the same head (the user, the tables with their first rows, the private library
when there is one) and the last five turns of the dialogue with their code, as the paper shows them;
then the current request and what the agent must do: write code (directly, after an outline, or after
pseudocode learnt from the last successful turn), pick an option, name the private functions it needs,
or ask the user one question.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from daharness.core.task import DialogueTurn, Task
from daharness.suites.user_tables import TableLimits, Unreadable, sample_table

HISTORY_TURNS = 5  # the paper shows the last 5 turns of user-code history
PREVIEW_ROWS = 3

CODE_BASE = (
    "Write the Python code that answers my latest request. Reply with the code only, in one ```python block."
)
CODE_COT = (
    "First write a step-by-step outline of how to answer my latest request, then write the code in one "
    "```python block."
)
CHOICE_BASE = "Answer my latest question: reply with the letter of the right option, as 'Answer: X'."
CHOICE_COT = (
    "Think step by step about the table, the code of the earlier turns and what it computed, then end your "
    "reply with the letter of the right option, as 'Answer: X'."
)
ASK = (
    "It is a serious task: every requirement of mine must be met without any uncertainty, and a wrong "
    "assumption makes the answer wrong. If anything in my latest request is unclear, you may ask me ONE "
    "question, between <question> and </question>. If it is all clear, reply with the words NO QUESTION."
)
RETRIEVE = (
    "Which functions of my private library `{library}` will you need to answer my latest request? Think about "
    "the steps first, then list the function names between <functions> and </functions>, separated by commas. "
    "Name only functions of the library above."
)
AIR_TEACHER = (
    "As a data science professor, you guide students to write Python code for data analysis requests. Read "
    "the latest successful interaction above: my request and the code that answered it. Write the pseudocode "
    "that leads from the request to that code: which earlier variables it reuses and why (the words of the "
    "request that call for them), and each step at the level of detail the code needs. Give the pseudocode "
    "between <pseudocode> and </pseudocode>, as indented plain steps, neither bullet points nor Python."
)
AIR_CODE = (
    "Learn from the successful example above how a request becomes pseudocode and then code. For my latest "
    "request, first write its pseudocode between <pseudocode> and </pseudocode>, then the Python code in one "
    "```python block."
)
REACT = """Answer the multiple-choice question by interleaving Thought, Code and Action steps. A step is either
Thought: what you need to find out next
Code:
```python
code that prints what you need to see
```
Action: Exec
or, once you are sure,
Thought: what the results show
Action: Terminate[X]
where X is the letter of the right option. The code runs in a Python session that keeps its variables;
the code of the earlier turns has already run in it, so their variables exist. You have at most {steps}
steps; write one step per reply and wait for its Observation.

------------------------- Example start (another table) -------------------------
{example}
------------------------- Example end -------------------------
"""
REACT_EXAMPLES = {
    "iris.csv": """The table iris.csv: sepal length (cm) | sepal width (cm) | petal length (cm) | petal width (cm) | species
[USER]: Which species has the widest petals on average?
Options:
A. setosa
B. versicolor
C. virginica
D. None of the above
Thought: compute the mean petal width of each species.
Code:
```python
import pandas as pd
iris = pd.read_csv("iris.csv")
print(iris.groupby("species")["petal width (cm)"].mean())
```
Action: Exec
Observation: species
setosa        0.246
versicolor    1.326
virginica     2.026
Thought: virginica has the largest mean petal width, option C.
Action: Terminate[C]""",
    "cars.csv": """The table cars.csv: Name | Miles_per_Gallon | Cylinders | Displacement | Horsepower | Weight_in_lbs | Acceleration | Year | Origin
[USER]: How many cylinders do most cars have?
Options:
A. 4
B. 6
C. 8
D. None of the above
Thought: count the cars of each number of cylinders.
Code:
```python
import pandas as pd
cars = pd.read_csv("cars.csv")
print(cars["Cylinders"].value_counts())
```
Action: Exec
Observation: Cylinders
4    207
8    108
6     84
Thought: 4 cylinders is the most frequent, option A.
Action: Terminate[A]""",
}
AIR_CHOICE = (
    "The pseudocode below is the logic of the last successful turn of our conversation; use it to plan "
    "your steps.\n--- Pseudocode start ---\n{pseudocode}\n--- Pseudocode end ---\n"
)
_TAGGED = {
    tag: re.compile(rf"<{tag}>(.*?)(?:</{tag}>|$)", re.DOTALL | re.IGNORECASE)
    for tag in ("question", "functions", "pseudocode", "answer")
}


def tagged(reply: str, tag: str) -> str | None:
    """The text between <tag> and </tag> (or to the end when the closing tag is missing)."""
    match = _TAGGED[tag].search(reply)
    return match.group(1).strip() if match else None


def user_of(task: Task) -> str:
    """Who the user is (the dialogue's `user:` tag), as the paper's [USER (data scientist)]."""
    return next((tag.removeprefix("user:") for tag in task.metadata.tags if tag.startswith("user:")), "user")


def table_preview(path: Path, name: str) -> str:
    """A table's name, size and first rows, separated by ' | ' as in the paper's prompts; read with the
    caps of `suites/user_tables.py` (a table of 20,000 columns shows its first 100)."""
    if path.suffix.lower() != ".csv":
        return f"--- {name} ---"
    try:
        sample = sample_table(path, name)
    except (OSError, Unreadable):
        return f"--- {name} ---"
    frame = sample.examples(PREVIEW_ROWS, TableLimits())
    rows = [" | ".join(map(str, frame.columns)) + (f" | ... {more}" if (more := sample.left_out()) else "")]
    rows += [" | ".join(map(str, row)) for row in frame.itertuples(index=False)]
    return f"--- {name} ({sample.rows_text}) ---\n" + "\n".join(rows) + "\n..."


def head(task: Task, functions: dict[str, str] | None = None) -> str:
    """Who the user is, the tables and, for a private dialogue, the library (all of it, or `functions`)."""
    parts = [
        f"You are an AI assistant for data analysis in Python (pandas {metadata.version('pandas')}, matplotlib). "
        f"{task.constraints}".strip(),
        "The working directory holds these tables:\n"
        + "\n".join(table_preview(item.source, item.path) for item in task.files),
    ]
    for library in task.libraries:
        shown = functions if functions is not None else library.functions
        listing = "\n".join(shown.values())
        others = sorted(set(library.functions) - set(shown))
        parts.append(
            f"The user has a private library, `{library.name}` (import it like any module). Its functions:\n"
            f"{listing}" + (f"\nIts other functions: {', '.join(others)}" if others else "")
        )
    return "\n\n".join(parts)


def history(task: Task, upto: int | None = None) -> str:
    """The last turns of the dialogue (up to `upto` turns of it), the user's requests and the answers."""
    turns = task.dialogue if upto is None else task.dialogue[: 2 * upto]
    pairs = [turns[i : i + 2] for i in range(0, len(turns), 2)][-HISTORY_TURNS:]
    user = user_of(task)
    lines = [_render(turn, user) for pair in pairs for turn in pair]
    return (
        "Our conversation so far:\n" + "\n\n".join(lines)
        if lines
        else "This is the start of our conversation."
    )


def _render(turn: DialogueTurn, user: str) -> str:
    if turn.role == "user":
        return f"[USER ({user})]: {turn.content}"
    if turn.code:
        return f"[YOU (AI assistant)]:\n```python\n{turn.code.rstrip()}\n```"
    return f"[YOU (AI assistant)]: {turn.content}"


def request(task: Task, clarification: tuple[str, str] | None = None) -> str:
    """The current request with its answer format, and the clarification the user gave, if any."""
    text = f"[USER ({user_of(task)})]: {task.instructions[-1]}\n{task.answer_format.text}"
    if clarification is not None:
        question, answer = clarification
        text += f"\n[YOU (AI assistant)]: {question}\n[USER ({user_of(task)})]: {answer}"
    return text


def prompt(
    task: Task,
    instruction: str,
    *,
    functions: dict[str, str] | None = None,
    clarification: tuple[str, str] | None = None,
    before: tuple[str, ...] = (),
) -> str:
    """head + history + `before` (an example, pseudocode) + the current request + what to do."""
    parts = [head(task, functions), history(task), *before, request(task, clarification), instruction]
    return "\n\n".join(part for part in parts if part)


def last_code_turn(task: Task) -> int | None:
    """How many dialogue turns lead up to and include the last one answered with code (AIR's example)."""
    for index in range(len(task.dialogue) - 1, -1, -1):
        if task.dialogue[index].role == "assistant" and task.dialogue[index].code:
            return index // 2 + 1
    return None


def react_example(task: Task) -> str:
    """A one-shot ReAct example on a table the task does not use."""
    used = {Path(item.path).name for item in task.files}
    name = next((table for table in REACT_EXAMPLES if table not in used), next(iter(REACT_EXAMPLES)))
    return REACT_EXAMPLES[name]
