"""The `react` agent: InfiAgent-DABench's ReAct loop with a Python sandbox tool.

Thought / Action / Action Input / Observation, repeated until a `Final Answer:` (or the iteration
limit, default 10). The model is stopped at `Observation:` so that it cannot invent tool output. By
default the question's format requirement is part of the prompt; `dabench_compat` sends only question
and constraints, as the official pipeline did, and relies on the reformat step (Table 25) to produce
the `@name[value]` answers.
"""

from __future__ import annotations

from pydantic import Field

from daharness.agents.budget import Budget, SampleLimits
from daharness.agents.llm import ModelAgent, StopSample, truncate
from daharness.agents.options import AgentSettings
from daharness.core.agent import AgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.observation import Observation
from daharness.core.registry import agent
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.closed_form.agent_format import (
    EVALUATION_PROMPT,
    FORMAT_REMINDER,
    OBSERVATION_PROMPT,
    REFORMAT_PROMPT,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    parse_react_reply,
)
from daharness.models import ModelClient

OBSERVATION_LIMIT = 4000  # characters of tool output shown to the model


class ReactOptions(AgentOptions):
    dabench_compat: bool = Field(
        False, description="Send only the question and its constraints, as the official pipeline does."
    )
    reformat_model: str | None = Field(
        None,
        description="Model of the reformat step (Table 25), reached with the same endpoint options as --model.",
    )


@agent(
    "react", "InfiAgent-DABench ReAct loop with a Python sandbox tool (needs --model)", options=ReactOptions
)
class ReactAgent(ModelAgent):
    name = "react"
    default_max_steps = 10
    options: ReactOptions

    @classmethod
    def build(cls, settings: AgentSettings, options: ReactOptions) -> ReactAgent:
        client = settings.client(settings.model, cls.name)
        reformat = settings.named_model(options.reformat_model)
        return cls(
            client, settings.limits, options, settings.client(reformat, cls.name) if reformat else None
        )

    def __init__(
        self,
        model: ModelClient,
        limits: SampleLimits | None = None,
        options: ReactOptions | None = None,
        reformat_model: ModelClient | None = None,
    ) -> None:
        super().__init__(model, limits, options or ReactOptions())
        self.dabench_compat = self.options.dabench_compat
        self.reformat_model = reformat_model

    def instruction(self, task: Task, workdir: str) -> str:
        files = [f"{workdir}/{item.path}" for item in task.files]
        parts = [f"User uploaded the following files: {files}", task.instruction]
        if task.constraints:
            parts.append(task.constraints)
        if task.answer_format.text and not self.dabench_compat:
            parts.append(task.answer_format.text)
        return "\n".join(parts)

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        submission = Submission(finished=False, stop_reason="max_steps")
        budget = Budget(self.limits)
        output_made = False  # made before the first step: the first model call need not wait for the sandbox
        prompt = EVALUATION_PROMPT.format(
            tool_description=TOOL_DESCRIPTION,
            tool_names=TOOL_NAME,
            output_dir=f"{sandbox.workdir}/output/",
            instruction=self.instruction(task, sandbox.workdir),
        )
        messages = [{"role": "user", "content": prompt}]
        last_reply = ""
        try:
            while submission.steps < self.max_steps:
                last_reply = self.ask(messages, budget, submission, stop=["Observation:"])
                submission.steps += 1
                parsed = parse_react_reply(last_reply)
                messages.append({"role": "assistant", "content": last_reply})
                if parsed.code is not None:
                    if not output_made:  # in the kernel, binding no name: a shell step costs 4 ms more
                        sandbox.python("__import__('os').makedirs('output', exist_ok=True)")
                        output_made = True
                    observation = sandbox.python(parsed.code)
                    submission.act("python", {"code": parsed.code}, observation)
                    messages.append(
                        {"role": "user", "content": OBSERVATION_PROMPT.format(output=_render(observation))}
                    )
                elif parsed.final_answer is not None:
                    submission.answer, submission.finished, submission.stop_reason = (
                        parsed.final_answer,
                        True,
                        "final_answer",
                    )
                    break
                else:
                    messages.append({"role": "user", "content": FORMAT_REMINDER.format(tool_names=TOOL_NAME)})
        except StopSample as stop:
            submission.stop_reason = stop.reason
        if submission.answer is None:
            submission.answer = last_reply  # what the model last said, so a reformat can still use it
        if self.reformat_model is not None:
            self._reformat(task, submission, budget)
        return submission

    def _reformat(self, task: Task, submission: Submission, budget: Budget) -> None:
        request = f"Question: {task.instruction}\nResponse: {submission.answer}\n\n" + REFORMAT_PROMPT.format(
            format=task.answer_format.text
        )
        reformatter = ModelAgent(
            self.reformat_model
        )  # its own model; counted in the sample's usage, never stopped
        messages = [{"role": "user", "content": request}]
        submission.answer = reformatter.ask(messages, budget, submission, check_limits=False)
        submission.reformatted = True


def _render(observation: Observation) -> str:
    parts = []
    if observation.stdout:
        parts.append(f"STDOUT:\n{observation.stdout}")
    if observation.stderr:
        parts.append(f"STDERR:\n{observation.stderr}")
    if observation.error:
        parts.append(observation.error.traceback or f"{observation.error.name}: {observation.error.value}")
    if not parts:
        parts.append("STDOUT:\n(no output; use print() to see values)")
    return truncate("\n".join(parts), OBSERVATION_LIMIT)
