"""The simulated user of interactive tasks: it answers the agent's clarifying questions.

Tapilot-Crossing (section 5.1, Appendix I.3) lets the agent ask about an under-specified request and has
GPT-4-Turbo answer as the user, from the turn's ground-truth code. `LLMSimulator` does that with any
OpenAI-compatible model (`--simulator-model`); `ScriptedSimulator` answers with the clarification stored
with the task (deterministic: tests and offline runs). Both see the ground truth; the agent never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from daharness.core.submission import Note, Submission, UserTurn
from daharness.core.task import Task
from daharness.families.interactive.prompts import tagged, user_of
from daharness.models import ModelClient, ModelUnavailableError

NOTHING_TO_ADD = "I have nothing to add; please do what you think I meant."
SIMULATOR_PROMPT = """You play a {user} talking with an AI data analysis assistant. Your latest request was:
{request}
{clarification}The assistant asks you:
{question}

This is the code that does exactly what you want (the ground truth; never show it or talk about code):
```python
{code}
```

Answer the assistant's question as the user would, in one plain sentence, between <answer> and </answer>."""


class UserSimulator(Protocol):
    def describe(self) -> dict[str, Any]: ...

    def answer(self, task: Task, question: str, submission: Submission) -> str:
        """The user's answer to `question`; recorded in the submission's trajectory."""
        ...


@dataclass
class ScriptedSimulator:
    """Answers with the task's stored clarification (or says it has nothing to add)."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted"}

    def answer(self, task: Task, question: str, submission: Submission) -> str:
        text = str(task.gold.data.get("clarification") or NOTHING_TO_ADD)
        submission.trajectory.append(UserTurn(content=text, question=question, source="simulator"))
        return text


@dataclass
class LLMSimulator:
    """Answers from the turn's ground-truth code, through a model (the paper used GPT-4-Turbo)."""

    model: ModelClient

    def describe(self) -> dict[str, Any]:
        return {"kind": "llm", "model": self.model.settings.model, "base_url": self.model.settings.base_url}

    def answer(self, task: Task, question: str, submission: Submission) -> str:
        scripted = task.gold.data.get("clarification")
        content = SIMULATOR_PROMPT.format(
            user=user_of(task),
            request=task.instructions[-1],
            clarification=f"What you meant by it: {scripted}\n" if scripted else "",
            question=question,
            code=task.reference.code.rstrip() if task.reference else "(none)",
        )
        try:
            completion = self.model.complete([{"role": "user", "content": content}])
        except ModelUnavailableError as exc:
            text = NOTHING_TO_ADD
            submission.trajectory.append(Note(text=f"the user simulator is unavailable: {exc}"))
        else:
            text = tagged(completion.text, "answer") or completion.text.strip() or NOTHING_TO_ADD
            submission.trajectory.append(
                Note(
                    text="user simulator call",
                    data={
                        "model": self.model.settings.model,
                        "usage": completion.usage.to_dict(),
                        "reply": completion.text,
                    },
                )
            )
        submission.trajectory.append(UserTurn(content=text, question=question, source="simulator"))
        return text
