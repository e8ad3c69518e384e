"""The `da-agent` agent: DA-Code's action agent (Bash, Python files, SQL, Terminate).

Each model reply holds one Thought and one Action. Observations are the action's output, its error,
"executed successfully without output", an unacceptable-action hint, a repeated-action notice, or a
timeout notice, cut to a fixed length. The prompt keeps the task and only the last `memory_window`
steps; the agent stops after `max_steps` (default 20) replies.
"""

from __future__ import annotations

import shlex

from pydantic import Field

from daharness.agents.budget import Budget, SampleLimits
from daharness.agents.da_actions import (
    ACTION_SPACE,
    DA_GRAMMAR,
    ActionGrammar,
    ActionSyntaxError,
    DaAction,
    parse_da_action,
)
from daharness.agents.llm import ModelAgent, StopSample, truncate
from daharness.agents.options import AgentSettings
from daharness.core.agent import AgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.observation import Observation
from daharness.core.registry import agent
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.models import ModelClient

OBSERVATION_LIMIT = 2000  # characters, as the DA-Code agent
MAX_PARSE_FAILURES = 3

SYSTEM_PROMPT = """You are a data scientist who solves data tasks with shell commands, Python and SQL. You work in a Linux shell whose working directory, {workdir}, holds every file of the task; the usual Python data libraries are installed and there is no internet. Use only the actions below. You have at most {max_steps} steps.

# ACTIONS
{action_space}
# GOOD PRACTICE
1. Read the action descriptions before using them.
2. Look at the files and the data before you solve the task; check that a file exists before reading it.
3. When an action fails, read the error, fix the cause and try again.
4. For machine-learning work, check your model's quality on held-out data before you finish.
5. Before you terminate, make sure every requirement is met and every output file exists and is correct.

# REPLY FORMAT
Each reply has exactly two parts:
Thought: your reasoning about the task and what to do next
Action: one action from the list above

# TASK
{task}
"""
FIRST_OBSERVATION = "You are in the working directory now."
NO_OUTPUT = "The action executed successfully without output."
REPEATED = "The action is the same as the last one; please take a different action."
UNACCEPTABLE = (
    "Unacceptable action: {reason}. Reply with one Thought and one Action from the action list, for example "
    'Action: Bash(code="ls -l"), or end with Action: Terminate(output="...").'
)


class DaAgentOptions(AgentOptions):
    memory_window: int = Field(15, ge=1, description="Earlier steps kept in the prompt.")


@agent(
    "da-agent",
    "DA-Code action agent: Bash, Python files, SQL, Terminate (needs --model)",
    options=DaAgentOptions,
)
class DaAgent(ModelAgent):
    name = "da-agent"
    default_max_steps = 20
    system_prompt = SYSTEM_PROMPT
    action_space = ACTION_SPACE
    grammar: ActionGrammar = DA_GRAMMAR

    options: DaAgentOptions

    @classmethod
    def build(cls, settings: AgentSettings, options: DaAgentOptions) -> DaAgent:
        return cls(settings.client(settings.model, cls.name), settings.limits, options)

    def __init__(
        self, model: ModelClient, limits: SampleLimits | None = None, options: DaAgentOptions | None = None
    ) -> None:
        super().__init__(model, limits, options or DaAgentOptions())
        self.memory_window = self.options.memory_window

    def task_text(self, task: Task) -> str:
        parts = [*task.instructions]
        if task.constraints:
            parts.append(task.constraints)
        if task.answer_format.text:
            parts.append(f"Answer format: {task.answer_format.text}")
            if task.answer_format.kind == "at_name":
                parts.append('Give the final answers in Terminate(output="..."), in the format above.')
        return "\n".join(parts)

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        submission = Submission(finished=False, stop_reason="max_steps")
        budget = Budget(self.limits)
        system = self.system_prompt.format(
            workdir=sandbox.workdir,
            max_steps=self.max_steps,
            action_space=self.action_space,
            task=self.task_text(task),
        )
        history: list[dict[str, str]] = []
        observation_text = FIRST_OBSERVATION
        last_action: DaAction | None = None
        parse_failures = 0
        try:
            while submission.steps < self.max_steps:
                history.append({"role": "user", "content": f"Observation: {observation_text}"})
                window = history[-(2 * self.memory_window + 1) :]
                reply = self.ask([{"role": "system", "content": system}, *window], budget, submission)
                history.append({"role": "assistant", "content": reply})
                submission.steps += 1
                try:
                    action = parse_da_action(reply, self.grammar)
                    reason = "no action found in the reply" if action is None else ""
                except ActionSyntaxError as exc:
                    action, reason = None, str(exc)
                if action is None:
                    parse_failures += 1
                    if parse_failures >= MAX_PARSE_FAILURES:
                        submission.stop_reason = "parse_failures"
                        break
                    observation_text = UNACCEPTABLE.format(reason=reason)
                    continue
                parse_failures = 0
                if action.kind == "Terminate":
                    submission.answer = action.args.get("output", "")
                    submission.finished, submission.stop_reason = True, "terminate"
                    break
                if last_action is not None and action.key() == last_action.key():
                    observation_text = REPEATED
                    continue
                last_action = action
                observation_text = self._execute(action, sandbox, submission)
        except StopSample as stop:
            submission.stop_reason = stop.reason
        return submission

    def _execute(self, action: DaAction, sandbox: SandboxBackend, submission: Submission) -> str:
        args = action.args
        if action.kind == "Bash":
            kind, step_args = "bash", {"command": args["code"]}
            observation = sandbox.bash(args["code"])
        elif action.kind == "SQL":
            output = args.get("output", "direct")
            to_file = None if output.lower() in ("", "direct", "directly") else output
            kind, step_args = (
                "sql",
                {"database": args["file_path"], "query": args["command"], "output": to_file},
            )
            observation = sandbox.sql(args["file_path"], args["command"], output=to_file)
        else:  # Python: the file goes into the workspace and runs there
            path = args.get("file_path") or "main.py"
            written = sandbox.write_file(path, args["code"])
            submission.act(
                "write_file", {"path": path, "content": args["code"]}, written, counts=not written.ok
            )
            if not written.ok:
                return render_observation(written)
            kind, step_args = "bash", {"command": f"python {shlex.quote(path)}"}
            # `python PATH`, forked from the kernel with its libraries imported where it can be
            observation = sandbox.python_script(path, [])
        submission.act(kind, step_args, observation)
        return render_observation(observation)


def render_observation(observation: Observation) -> str:
    if observation.timed_out:
        return f"Execution timeout: the action did not finish in time and was stopped. {observation.stdout}".strip()
    parts = [text for text in (observation.stdout, observation.stderr) if text.strip()]
    if observation.error:
        parts.append(observation.error.traceback or f"{observation.error.name}: {observation.error.value}")
    if observation.exit_status not in (None, 0) and not parts:
        parts.append(f"The command failed with exit status {observation.exit_status}.")
    if not parts:
        return NO_OUTPUT
    return truncate("\n".join(parts).strip(), OBSERVATION_LIMIT)
