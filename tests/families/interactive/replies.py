"""Scripted model replies for the interactive agents on the built-in `interactive` suite.

`Script.respond` plays every role the agents and the LLM user simulator ask a model for: naming private
functions, asking a clarifying question, AIR's pseudocode, ReAct steps, the final code or letter, and
the simulator's answer. What it answers is right except for the tasks in `WRONG`, which get one kind of
wrong (or right-but-not-private) answer each, chosen so that every result type, action type and mode has
one; a clarification turn is answered right only when the prompt carries the user's clarification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from daharness.core.task import Task
from daharness.families.interactive import prompts
from daharness.families.interactive.run import code_options

# task id -> how its answer is wrong
WRONG = {
    "cars-02": "missing",  # dataframe + scalar, normal: a result left out
    "cars-03": "number",  # series
    "cars-04": "letter",  # insight mining
    "cars-05": "decoy",  # plot of another column
    "cars-06": "ambiguous",  # plot QA
    "cars-07": "number",  # model (its probe changes)
    "weather-01": "number",  # tuple
    "weather-04": "crash",  # update code, action
    "weather-06": "letter",  # best guess
    "weather-08": "letter",  # fast fail
    "diabetes-09": "number",  # clarification, dataframe
    "affairs-05": "number",  # dict (+ list)
    "macro-05": "missing",  # scalar + list
    "wine-02": "number",  # private, series
    "wine-03": "decoy",  # private: right, without the private library (AccR 0)
    "wine-07": "letter",  # private action, insight mining
    "stocks-02": "decoy",  # private: right, without the private library (AccR 0)
    "stocks-06": "number",  # private action, update code, scalar
    "wine-10": "crash",  # private action, clarification
}
RIGHT_WITHOUT_LIBRARY = {"wine-03", "stocks-02"}  # Acc 1, AccR 0


def _wrong_line(task: Task) -> str:
    """A line that changes the first data result (or drops a row of it)."""
    options = code_options(task)
    assert options is not None
    intent = next(i for i in options.intents if i.type != "plot")
    name = intent.name
    return {
        "dataframe": f"{name} = {name}.iloc[:-1]",
        "series": f"{name} = {name}.iloc[:-1]",
        "scalar": f"{name} = {name} + 1",
        "list": f"{name} = list({name})[:-1]",
        "tuple": f"{name} = tuple({name})[:-1]",
        "dict": f"{name} = dict(list({name}.items())[:-1])",
        "model": f"{name}.intercept_ = {name}.intercept_ + 1",
    }[intent.type]


def code_for(task: Task, kind: str | None) -> str:
    assert task.reference is not None
    code = task.reference.code
    options = code_options(task)
    assert options is not None
    if kind == "number":
        return f"{code}\n{_wrong_line(task)}\n"
    if kind == "missing":
        return f"{code}\ndel {options.intents[-1].name}\n"
    if kind == "crash":
        return f"{code}\nraise RuntimeError('scripted failure')\n"
    if kind == "decoy":
        return str(task.gold.data["decoys"][0]["code"])
    return code


def expected(task: Task, *, clarified: bool) -> tuple[float, float]:
    """(Acc, AccR) of the scripted answer to a task."""
    kind = WRONG.get(task.id)
    if task.metadata.subcategory == "clarification" and not clarified:
        return 0.0, 0.0  # without the user's answer, the agent guesses wrong
    if task.id in RIGHT_WITHOUT_LIBRARY:
        return 1.0, 0.0
    return (0.0, 0.0) if kind else (1.0, 1.0)


@dataclass
class Script:
    tasks: list[Task]
    calls: dict[str, int] = field(default_factory=dict)

    def _task(self, text: str) -> Task:
        """The task whose request comes last in a prompt (earlier requests are its history)."""
        found = [(text.rfind(t.instructions[-1]), t) for t in self.tasks if t.instructions[-1] in text]
        return max(found, key=lambda pair: pair[0])[1]

    def _count(self, kind: str) -> None:
        self.calls[kind] = self.calls.get(kind, 0) + 1

    def respond(self, request: dict[str, Any]) -> str:
        messages = request["messages"]
        first = messages[0]["content"]
        if first.startswith("You play a"):  # the LLM user simulator
            self._count("simulator")
            meant = re.search(r"What you meant by it: (.*)\n", first)
            return f"<answer>{meant.group(1) if meant else 'Nothing to add.'}</answer>"
        if first.rstrip().endswith(prompts.AIR_TEACHER):
            self._count("pseudocode")
            return "<pseudocode>\nLOAD the table\nCOMPUTE what the request asks\n</pseudocode>"
        task = self._task(first)
        if "Which functions of my private library" in first.rsplit("\n\n", 1)[-1]:
            self._count("retrieve")
            options = code_options(task)
            names = options.reference_calls if options else sorted(task.libraries[0].functions)[:2]
            return f"Steps first... <functions>{', '.join(names)}</functions>"
        if first.rstrip().endswith(prompts.ASK):
            self._count("ask")
            return "<question>What exactly do you mean?</question>"
        if task.answer_format.kind == "choice":
            return self._choice(task, messages)
        self._count("code")
        kind = WRONG.get(task.id)
        clarification = task.gold.data.get("clarification")
        if task.metadata.subcategory == "clarification" and clarification not in first:
            kind = kind or "number"  # a guess without the user's clarification
        return f"Outline: load, compute, keep the result.\n```python\n{code_for(task, kind)}```"

    def _choice(self, task: Task, messages: list[dict[str, Any]]) -> str:
        self._count("choice")
        kind = WRONG.get(task.id)
        right = task.gold.choice or "A"
        letter = "B" if right == "A" else "A"
        react = "Action: Terminate[X]" in messages[0]["content"]
        if kind == "ambiguous":
            return f"Thought: both look possible.\nAnswer: {right} or {letter}"
        chosen = letter if kind == "letter" else right
        if react and len(messages) == 1:
            return "Thought: look at the data first.\nCode:\n```python\nprint(sorted(name for name in globals() if not name.startswith('_')))\n```\nAction: Exec"
        if react:
            return f"Thought: the results show it.\nAction: Terminate[{chosen}]"
        return f"Reasoning about the table... Answer: {chosen}"
