"""The interactive agents of Tapilot-Crossing (sections 5-6, Appendices D, E, K): base, cot, react-mc, air.

All four see the same head (tables, the private library), the last five turns of the dialogue and the
current request; they differ in how they reason:

* `base` (Model-Base): code or the option's letter directly;
* `cot` (Agent, code): a step-by-step outline, then code; for multiple choice, reasoning then the letter;
* `react-mc` (Agent, multiple choice): ReAct with the sandbox as executor, at most 5 steps, a one-shot
  example on another table; code turns as `cot`, as the paper's Agent setting;
* `air` (Inter-Agent): Adaptive Interaction Reflection. From the last successful turn of the history the
  model writes the pseudocode that led to its code; that turn becomes a one-shot example (request,
  pseudocode, code), and the model writes pseudocode then code for the current request (multiple choice:
  the pseudocode guides the ReAct steps). Without an earlier code turn it falls back to `cot` / `react-mc`.

In a private dialogue every agent first names the library functions it needs (retrieval), then sees
their documentation when it writes code. With `--clarify`, before a code answer the agent may ask the
user one question; the simulator (`--simulator-model`, else the task's scripted answer) replies, and both
are in the trajectory. Code answers are not run by the agent (the paper measures code generation); the
interactive family runs them after the agent.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import Field

from daharness.agents.budget import Budget, SampleLimits
from daharness.agents.llm import ModelAgent, StopSample, truncate
from daharness.agents.options import AgentSettings
from daharness.core.agent import AgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.observation import Observation
from daharness.core.registry import agent
from daharness.core.submission import Submission, UserTurn
from daharness.core.task import Task
from daharness.families.interactive import prompts
from daharness.families.interactive.scorers.code import extract_code
from daharness.families.interactive.simulator import LLMSimulator, ScriptedSimulator, UserSimulator
from daharness.models import ModelClient

REACT_STEPS = 5
OBSERVATION_LIMIT = 3000
_TERMINATE = re.compile(r"Terminate\s*\[\s*([A-J])\s*\]", re.IGNORECASE)
_NO_QUESTION = "NO QUESTION"


class InteractiveOptions(AgentOptions):
    clarify: bool = Field(
        False, description="The agent may ask the user one question before each code answer."
    )
    simulator_model: str | None = Field(
        None,
        description="Model of the user simulator that answers clarifying questions (default: the task's "
        "scripted answer), reached with the same endpoint options as --model.",
    )


class InteractiveAgent(ModelAgent):
    """What the four agents share: retrieval, clarification, and the two kinds of answer."""

    name: ClassVar[str] = "base"
    default_max_steps = REACT_STEPS  # ReAct steps of a multiple-choice turn (the paper's MAX STEP)
    code_style: ClassVar[str] = "base"  # base | cot | air
    choice_style: ClassVar[str] = "base"  # base | cot | react | air
    options: InteractiveOptions

    @classmethod
    def build(cls, settings: AgentSettings, options: InteractiveOptions) -> InteractiveAgent:
        simulator_model = settings.named_model(options.simulator_model)
        simulator: UserSimulator = (
            LLMSimulator(settings.client(simulator_model, "simulator"))
            if simulator_model is not None
            else ScriptedSimulator()
        )
        return cls(settings.client(settings.model, cls.name), settings.limits, options, simulator=simulator)

    def __init__(
        self,
        model: ModelClient,
        limits: SampleLimits | None = None,
        options: InteractiveOptions | None = None,
        *,
        simulator: UserSimulator | None = None,
    ) -> None:
        super().__init__(model, limits, options or InteractiveOptions())
        self.clarify = self.options.clarify
        self.simulator = simulator or ScriptedSimulator()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "simulator": self.simulator.describe()}

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        submission = Submission(stop_reason="final_answer")
        submission.trajectory.append(UserTurn(content=task.instructions[-1], source="task"))
        budget = Budget(self.limits)
        try:
            functions = self._retrieve(task, budget, submission) if task.libraries else None
            if task.answer_format.kind == "choice":
                submission.answer = self._choice(task, sandbox, budget, submission, functions)
            else:
                clarification = self._ask(task, budget, submission) if self.clarify else None
                submission.answer = extract_code(
                    self._code(task, budget, submission, functions, clarification)
                )
        except StopSample as stop:
            submission.finished, submission.stop_reason = False, stop.reason
        return submission

    def _call(
        self, content: str, budget: Budget, submission: Submission, stop: list[str] | None = None
    ) -> str:
        reply = self.ask([{"role": "user", "content": content}], budget, submission, stop=stop)
        submission.steps += 1
        return reply

    # ---- private library: retrieve the functions first ---------------------------------------------

    def _retrieve(self, task: Task, budget: Budget, submission: Submission) -> dict[str, str]:
        library = task.libraries[0]
        reply = self._call(
            prompts.prompt(task, prompts.RETRIEVE.format(library=library.name)), budget, submission
        )
        listed = prompts.tagged(reply, "functions") or ""
        names = [name for name in re.findall(r"[A-Za-z_]\w*", listed) if name in library.functions]
        return {name: library.functions[name] for name in dict.fromkeys(names)} or dict(library.functions)

    # ---- clarification -----------------------------------------------------------------------------

    def _ask(self, task: Task, budget: Budget, submission: Submission) -> tuple[str, str] | None:
        reply = self._call(prompts.prompt(task, prompts.ASK), budget, submission)
        question = prompts.tagged(reply, "question")
        if not question or question.upper() == _NO_QUESTION:
            return None
        return question, self.simulator.answer(task, question, submission)

    # ---- code --------------------------------------------------------------------------------------

    def _code(
        self,
        task: Task,
        budget: Budget,
        submission: Submission,
        functions: dict[str, str] | None,
        clarification: tuple[str, str] | None,
    ) -> str:
        style = self.code_style
        example = self._air_example(task, budget, submission) if style == "air" else None
        if style == "air" and example is None:
            style = "cot"  # no earlier code turn to learn from: the agent's own reasoning (paper, 5.3)
        if example is not None:
            instruction, before = prompts.AIR_CODE, (example,)
        else:
            instruction, before = (prompts.CODE_COT if style == "cot" else prompts.CODE_BASE), ()
        content = prompts.prompt(
            task, instruction, functions=functions, clarification=clarification, before=before
        )
        return self._call(content, budget, submission)

    def _air_pseudocode(self, task: Task, budget: Budget, submission: Submission) -> tuple[int, str] | None:
        """AIR step 1: the pseudocode behind the last successful code turn of the history."""
        turns = prompts.last_code_turn(task)
        if turns is None:
            return None
        reflection = f"{prompts.head(task)}\n\n{prompts.history(task, upto=turns)}\n\n{prompts.AIR_TEACHER}"
        reply = self._call(reflection, budget, submission)
        return turns, prompts.tagged(reply, "pseudocode") or reply.strip()

    def _air_example(self, task: Task, budget: Budget, submission: Submission) -> str | None:
        """AIR step 2: the last successful turn as a one-shot example: request, pseudocode, code."""
        found = self._air_pseudocode(task, budget, submission)
        if found is None:
            return None
        turns, pseudocode = found
        request, answer = task.dialogue[2 * turns - 2], task.dialogue[2 * turns - 1]
        return (
            "------------------------- Successful example start -------------------------\n"
            f"[USER ({prompts.user_of(task)})]: {request.content}\n[YOU (AI assistant)]:\n"
            f"<pseudocode>\n{pseudocode}\n</pseudocode>\n```python\n{(answer.code or '').rstrip()}\n```\n"
            "------------------------- Successful example end -------------------------"
        )

    # ---- multiple choice ---------------------------------------------------------------------------

    def _choice(
        self,
        task: Task,
        sandbox: SandboxBackend,
        budget: Budget,
        submission: Submission,
        functions: dict[str, str] | None,
    ) -> str:
        if self.choice_style in ("react", "air"):
            guide = None
            if self.choice_style == "air" and (found := self._air_pseudocode(task, budget, submission)):
                guide = prompts.AIR_CHOICE.format(pseudocode=found[1])
            return self._react(task, sandbox, budget, submission, functions, guide)
        instruction = prompts.CHOICE_COT if self.choice_style == "cot" else prompts.CHOICE_BASE
        return self._call(prompts.prompt(task, instruction, functions=functions), budget, submission)

    def _react(
        self,
        task: Task,
        sandbox: SandboxBackend,
        budget: Budget,
        submission: Submission,
        functions: dict[str, str] | None,
        guide: str | None,
    ) -> str:
        intro = prompts.REACT.format(steps=self.max_steps, example=prompts.react_example(task))
        before = (intro, guide) if guide else (intro,)
        messages = [
            {
                "role": "user",
                "content": prompts.prompt(task, "Begin with Thought 1.", functions=functions, before=before),
            }
        ]
        reply = ""
        for _ in range(self.max_steps):
            reply = self.ask(messages, budget, submission, stop=["Observation:"])
            submission.steps += 1
            messages.append({"role": "assistant", "content": reply})
            if (match := _TERMINATE.search(reply)) is not None:
                return f"Answer: {match.group(1).upper()}"
            code = extract_code(reply) if "```" in reply else None
            if code:
                observation = sandbox.python(code)
                submission.act("python", {"code": code}, observation)
                messages.append({"role": "user", "content": f"Observation: {_render(observation)}"})
            elif re.search(r"\bAnswer\s*:", reply):
                return reply
            else:
                messages.append(
                    {
                        "role": "user",
                        "content": "Observation: no code and no Terminate[X]; follow the step format.",
                    }
                )
        submission.finished, submission.stop_reason = False, "max_steps"
        return reply


def _render(observation: Observation) -> str:
    parts = [text for text in (observation.stdout, observation.stderr) if text.strip()]
    if observation.error:
        parts.append(observation.error.traceback or f"{observation.error.name}: {observation.error.value}")
    return truncate("\n".join(parts).strip() or "(no output; print what you want to see)", OBSERVATION_LIMIT)


@agent(
    "base",
    "Tapilot-Crossing Model-Base: code or the option's letter directly (needs --model)",
    options=InteractiveOptions,
)
class BaseAgent(InteractiveAgent):
    name = "base"


@agent(
    "cot",
    "Tapilot-Crossing Agent, zero-shot chain of thought: an outline, then code (needs --model)",
    options=InteractiveOptions,
)
class CotAgent(InteractiveAgent):
    name = "cot"
    code_style = "cot"
    choice_style = "cot"


@agent(
    "react-mc",
    "Tapilot-Crossing Agent: ReAct with the executor for multiple choice, CoT for code (needs --model)",
    options=InteractiveOptions,
)
class ReactChoiceAgent(InteractiveAgent):
    name = "react-mc"
    code_style = "cot"
    choice_style = "react"


@agent(
    "air",
    "Tapilot-Crossing Inter-Agent: Adaptive Interaction Reflection (needs --model)",
    options=InteractiveOptions,
)
class AirAgent(InteractiveAgent):
    name = "air"
    code_style = "air"
    choice_style = "air"
