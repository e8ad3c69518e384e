"""The release's prompt settings on the official files (`tapilot:` suites): tapilot-base, -cot and -air.

Each entry carries its prompt, `prompt_with_hist_json`: the system message, the earlier turns (user
requests and the code that answered them) and the current request, sometimes followed by the opening of
the assistant's answer (the release's own agents, `methods/tapilot.py`, fill that last message in). The
three settings send that conversation as the paper's three settings (section 6.1, Appendix E.2):

* `tapilot-base` (Model-Base): the conversation exactly as the file has it (an entry without one: its
  `prompt_with_hist_txt` as one user message, as the release's `call_api.py` sends it);
* `tapilot-cot` (Agent): the same conversation with the zero-shot CoT cue, "I need first to write a
  step-by-step outline and then write the code:", as the assistant's opening (multiple choice: reason
  first, then the letter); on Plot_QA entries the chart of the history comes as a table (`chart_table`);
* `tapilot-air` (Inter-Agent): AIR. The model first writes the pseudocode behind the last turn of the
  history (that conversation plus the teacher's request, prints and pickle dumps left out of its code, as
  the release does); then one prompt holds the head, the history, that turn as a one-shot example
  (request, pseudocode, code) and the current request, for pseudocode then code (multiple choice: the
  pseudocode guides the choice). Without an earlier turn it is `tapilot-cot`, as the paper says.

The sampling is the command line's (`--temperature`, `--max-tokens`: the release uses 0 and 512).
"""

from __future__ import annotations

from typing import Any, ClassVar

from daharness.agents.budget import Budget
from daharness.agents.llm import ModelAgent, StopSample
from daharness.agents.options import AgentSettings
from daharness.core.agent import NoAgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.errors import UserError
from daharness.core.registry import agent
from daharness.core.submission import Submission, UserTurn
from daharness.core.task import Task
from daharness.families.interactive import prompts
from daharness.families.interactive.chart_table import SAVE_FIGURES, charts_as_tables

Message = dict[str, str]
COT_CUE = "I need first to write a step-by-step outline and then write the code:"  # the paper's E.2
CHOICE_COT = (
    "Think step by step about the data and the earlier turns, then give the letter of the right option "
    "between <choice> and </choice>."
)
CHART_INTRO = (
    "The chart of our conversation has been turned into the table below (the data each series plots); "
    "answer from it.\n--- Chart as a table ---\n{table}\n--- End of the table ---"
)


def release_prompt(task: Task) -> list[Message]:
    """The entry's conversation: `prompt_with_hist_json`, else its text prompt as one user message."""
    if not task.prompt:
        raise UserError(f"task {task.id}: the tapilot-* agents answer the official files only (tapilot:DIR)")
    return [{"role": turn.role, "content": turn.content} for turn in task.prompt]


def split_prompt(messages: list[Message]) -> tuple[list[Message], Message, Message | None]:
    """(the turns before the current request, the request, the assistant's opening or None)."""
    if len(messages) >= 2 and messages[-1]["role"] == "assistant" and messages[-2]["role"] == "user":
        return messages[:-2], messages[-2], messages[-1]
    if messages and messages[-1]["role"] == "user":
        return messages[:-1], messages[-1], None
    raise UserError("prompt_with_hist_json: the conversation does not end with the user's request")


class ReleaseAgent(ModelAgent):
    """One of the release's prompt settings; `setting` names it."""

    name: ClassVar[str] = "tapilot-base"
    setting: ClassVar[str] = "base"
    default_max_steps = 3

    @classmethod
    def build(cls, settings: AgentSettings, options: NoAgentOptions) -> ReleaseAgent:
        return cls(settings.client(settings.model, cls.name), settings.limits)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "setting": self.setting}

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        submission = Submission(stop_reason="final_answer")
        submission.trajectory.append(UserTurn(content=task.instructions[-1], source="task"))
        budget = Budget(self.limits)
        messages = release_prompt(task)
        try:
            submission.answer = self._answer(task, sandbox, messages, budget, submission)
        except StopSample as stop:
            submission.finished, submission.stop_reason = False, stop.reason
        return submission

    def _answer(
        self,
        task: Task,
        sandbox: SandboxBackend,
        messages: list[Message],
        budget: Budget,
        submission: Submission,
    ) -> str:
        return self._send(messages, budget, submission)

    def _send(self, messages: list[Message], budget: Budget, submission: Submission) -> str:
        reply = self.ask(messages, budget, submission)
        submission.steps += 1
        return reply

    def _prompt_parts(
        self, task: Task, sandbox: SandboxBackend, messages: list[Message], submission: Submission
    ) -> tuple[list[Message], Message, Message | None]:
        """The prompt split as `split_prompt` does, the request with the chart's table (Plot_QA) before it."""
        before, request, opening = split_prompt(messages)
        return before, self._with_chart(task, sandbox, request, submission), opening

    def _with_chart(
        self, task: Task, sandbox: SandboxBackend, request: Message, submission: Submission
    ) -> Message:
        """Plot_QA: the history's chart as a table, before the question (the paper's chart-to-table)."""
        if task.metadata.subcategory != "plot_qa":
            return request
        observation, table = charts_as_tables(sandbox)
        submission.act("python", {"code": SAVE_FIGURES, "tool": "chart_to_table"}, observation, counts=False)
        if table is None:
            return request
        return {**request, "content": f"{CHART_INTRO.format(table=table)}\n\n{request['content']}"}

    def _cot(
        self, task: Task, before: list[Message], request: Message, opening: Message | None
    ) -> list[Message]:
        if task.answer_format.kind == "choice":
            return [*before, {**request, "content": f"{request['content']}\n\n{CHOICE_COT}"}]
        if opening is not None:
            return [*before, request, {**opening, "content": COT_CUE}]
        return [*before, {**request, "content": f"{request['content']}\n\n{COT_CUE}"}]


@agent(
    "tapilot-base",
    "Tapilot-Crossing files: the release's Model-Base prompt, prompt_with_hist_json (needs --model)",
)
class ReleaseBaseAgent(ReleaseAgent):
    name = "tapilot-base"
    setting = "base"


@agent(
    "tapilot-cot",
    "Tapilot-Crossing files: the release's prompt with the CoT cue; Plot_QA charts as tables (needs --model)",
)
class ReleaseCotAgent(ReleaseAgent):
    name = "tapilot-cot"
    setting = "cot"

    def _answer(
        self,
        task: Task,
        sandbox: SandboxBackend,
        messages: list[Message],
        budget: Budget,
        submission: Submission,
    ) -> str:
        before, request, opening = self._prompt_parts(task, sandbox, messages, submission)
        return self._send(self._cot(task, before, request, opening), budget, submission)


@agent(
    "tapilot-air",
    "Tapilot-Crossing files: AIR on the release's prompt (pseudocode of the last turn first; needs --model)",
)
class ReleaseAirAgent(ReleaseCotAgent):
    name = "tapilot-air"
    setting = "air"

    def _answer(
        self,
        task: Task,
        sandbox: SandboxBackend,
        messages: list[Message],
        budget: Budget,
        submission: Submission,
    ) -> str:
        before, request, opening = self._prompt_parts(task, sandbox, messages, submission)
        turns = [m for m in before if m["role"] != "system"]
        if len(turns) < 2 or (turns[-2]["role"], turns[-1]["role"]) != ("user", "assistant"):
            return self._send(self._cot(task, before, request, opening), budget, submission)  # turn 1: CoT
        teacher = [*(_without_output(m) for m in before), {"role": "user", "content": prompts.AIR_TEACHER}]
        reflection = self._send(teacher, budget, submission)
        pseudocode = prompts.tagged(reflection, "pseudocode") or reflection.strip()
        if task.answer_format.kind == "choice":
            guided = (
                f"{prompts.AIR_CHOICE.format(pseudocode=pseudocode)}\n{request['content']}\n\n{CHOICE_COT}"
            )
            return self._send([*before, {**request, "content": guided}], budget, submission)
        head = "\n\n".join(m["content"] for m in before if m["role"] == "system")
        history = "\n\n".join(_rendered(m) for m in turns[:-2]) or "(no earlier turns)"
        example = (
            "------------------------- Successful example start -------------------------\n"
            f"{_rendered(turns[-2])}\n\n[YOU (AI assistant)]:\n<pseudocode>\n{pseudocode}\n</pseudocode>\n"
            f"{turns[-1]['content'].strip()}\n"
            "------------------------- Successful example end -------------------------"
        )
        parts = [
            head,
            f"Our conversation before the example:\n{history}",
            example,
            _rendered(request),
            prompts.AIR_CODE,
        ]
        return self._send(
            [{"role": "user", "content": "\n\n".join(p for p in parts if p)}], budget, submission
        )


def _without_output(message: Message) -> Message:
    """An assistant turn without its printing and pickle-dumping lines (the release's AIR teacher input)."""
    if message["role"] != "assistant":
        return message
    kept = [
        line for line in message["content"].split("\n") if "print(" not in line and "pickle.dump" not in line
    ]
    return {**message, "content": "\n".join(kept)}


def _rendered(message: Message) -> str:
    speaker = "[USER]" if message["role"] == "user" else "[YOU (AI assistant)]"
    return f"{speaker}: {message['content'].strip()}"
