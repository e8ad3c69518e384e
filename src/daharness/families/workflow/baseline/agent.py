"""The `desktop` agent: Spider2-V's baseline as released, on the sandbox's screen.

Each step, as `lib_run_single.py` runs `PromptAgent.predict`: the request (`prompts`: the system prompt of the
checkout's templates, the documentation with --rag, the last `history` observations with their replies, the
current observation), the reply's actions (`replies`, in the `parsing` mode) run one after another on the
screen, each followed by a pause of 0.5 s (`--sleep_after_execution`); WAIT waits, DONE and FAIL end the
episode; after the actions, the screen is observed again (a reply without actions keeps the observation it
answered, as officially). At most 15 steps (model calls). Requests carry the release's sampling (temperature
0.5, top_p 0.9, max_tokens 1500) unless the run sets its own.

The record: each model call keeps its messages as sent, each screenshot named by attachment
(`attachment:step-N.png`, the PNG sent, kept once in the run's attachments/<id>/), in the order sent; each
step also has a note with a small JPEG of the screen and its table (the viewer shows them). The last action
run is kept in the evidence (`LAST_ACTION`) for the release's FAIL rule (`scorers/inputs.py`).
"""

from __future__ import annotations

import base64
import math
import time
from typing import Any, Literal

from pydantic import Field, model_validator

from daharness.agents.budget import Budget, SampleLimits
from daharness.agents.llm import ModelAgent, StopSample
from daharness.agents.options import AgentSettings
from daharness.core.agent import AgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.desktop import (
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    Desktop,
    DesktopView,
    ObservationType,
    small_jpeg,
)
from daharness.core.errors import UserError
from daharness.core.observation import Observation
from daharness.core.registry import agent
from daharness.core.submission import ModelCall, Note, Submission, attachment_url
from daharness.core.task import Task
from daharness.families.workflow.baseline import tree
from daharness.families.workflow.baseline.own_prompt import OWN_TEXTS
from daharness.families.workflow.baseline.prompts import (
    NEEDS_TABLE,
    Message,
    context_message,
    feedback_message,
    observation_message,
    request_messages,
    system_message,
)
from daharness.families.workflow.baseline.replies import ParsingMode, is_special, parse_reply
from daharness.families.workflow.baseline.templates import PromptTexts
from daharness.families.workflow.scorers.inputs import LAST_ACTION
from daharness.models import ModelClient, ModelSettings

# run_spider2v_agent.py's defaults, sent unless the run sets its own
SAMPLING = {"temperature": 0.5, "top_p": 0.9, "max_tokens": 1500}
PAUSE_S = 0.5  # --sleep_after_execution: after each action, before the screen is read again


class DesktopOptions(AgentOptions):
    """The desktop agent's options (run_spider2v_agent.py's, with its defaults but the observation's)."""

    observation: ObservationType = Field(
        "screenshot_a11y_tree",
        description="What the model sees each step: the screenshot, the accessibility tree as a table, both, or "
        "set-of-mark (the release's default).",
    )
    action_space: Literal["pyautogui", "computer_13", "json"] = Field(
        "pyautogui",
        description="How it acts: pyautogui code, or the paper's JSON actions (computer_13; json).",
    )
    history: int = Field(3, ge=0, description="Earlier observations (and replies) kept in the prompt.")
    parsing: ParsingMode = Field(
        "corrected",
        description="How replies are read: 'official' as the release's parser (it splits code at every ';'), "
        "'corrected' the same without that split.",
    )
    execution_feedback: bool = Field(
        False, description="Tell the model which actions of its last reply went wrong (off, as officially)."
    )
    tree_tokens: int = Field(
        tree.MAX_TOKENS,
        gt=0,
        description="The accessibility table is cut at this many tokens of gpt-4's encoding.",
    )

    @model_validator(mode="after")
    def _som_acts_with_code(self) -> DesktopOptions:
        if self.observation == "som" and self.action_space != "pyautogui":
            raise ValueError("--observation som needs --action-space pyautogui (as officially)")
        return self


def with_release_sampling(settings: ModelSettings | None) -> ModelSettings | None:
    """The run's model settings, with the release's sampling where the run sets none."""
    if settings is None:
        return None
    unset = {key: value for key, value in SAMPLING.items() if getattr(settings, key) is None}
    return settings.model_copy(update=unset)


@agent(
    "desktop",
    "Spider2-V's baseline agent as released, on the sandbox's screen (needs --model)",
    options=DesktopOptions,
    needs_desktop=True,
)
class DesktopAgent(ModelAgent):
    name = "desktop"
    default_max_steps = 15
    options: DesktopOptions

    @classmethod
    def build(cls, settings: AgentSettings, options: DesktopOptions) -> DesktopAgent:
        return cls(settings.client(with_release_sampling(settings.model), cls.name), settings.limits, options)

    def __init__(
        self, model: ModelClient, limits: SampleLimits | None = None, options: DesktopOptions | None = None
    ) -> None:
        super().__init__(model, limits, options or DesktopOptions())
        self.observation: ObservationType = self.options.observation
        # "json" is daharness's earlier name of the paper's JSON actions
        self.action_space = (
            "computer_13" if self.options.action_space == "json" else self.options.action_space
        )
        self.history = self.options.history

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "action_space": self.action_space}

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        if sandbox.desktop is None:
            raise UserError("--agent desktop needs a sandbox with a desktop (bwrap, see `daharness doctor`)")
        episode = Episode(self, task, sandbox.desktop)
        try:
            episode.run()
        except StopSample as stop:
            episode.submission.stop_reason = stop.reason
        return episode.submission


class Episode:
    """One sample's steps (the state `PromptAgent` and `run_single_example` keep)."""

    def __init__(self, agent: DesktopAgent, task: Task, desktop: Desktop) -> None:
        self.agent, self.screen = agent, desktop
        self.options = agent.options
        texts = task.prompt_texts
        self.texts = PromptTexts.from_flat(texts) if "system" in texts else OWN_TEXTS
        instruction = texts.get("task.instruction", task.instruction)
        screen = (SCREEN_WIDTH, SCREEN_HEIGHT)
        self.system = system_message(self.texts, agent.action_space, agent.observation, screen, instruction)
        documentation = texts.get("task.documentation")
        self.context = context_message(self.texts, documentation) if documentation else None
        self.submission = Submission(finished=False, stop_reason="max_steps")
        self.counts = {"images": 0, "image_tokens": 0}
        self.submission.evidence["desktop"] = self.counts
        self.history: list[tuple[Message, str]] = []
        self.images: dict[str, str] = {}  # attachment name -> data URL, for the requests
        self.feedback: Message | None = None

    def run(self) -> None:
        agent, submission = self.agent, self.submission
        budget = Budget(agent.limits)
        view, fresh, image = self.observe(), True, None
        while submission.steps < agent.max_steps:
            step = submission.steps + 1
            if fresh:
                image = self.attach(view, step)
                submission.trajectory.append(step_note(step, view))
            table = (
                tree.trim(view.table or "", self.options.tree_tokens)
                if agent.observation in NEEDS_TABLE
                else None
            )
            current = observation_message(self.texts, agent.observation, table, image)
            marks = (
                [(e.x, e.y, e.width, e.height) for e in view.elements] if agent.observation == "som" else None
            )
            messages = request_messages(
                self.system, self.context, self.history, self.texts, current, agent.history, self.feedback
            )
            reply = self.ask(messages, budget)
            submission.steps = step
            parsed = parse_reply(reply, agent.action_space, marks=marks, mode=self.options.parsing)
            self.history.append((current, "" if parsed.unreadable else reply))
            self.forget_images(image)
            if parsed.error:
                submission.trajectory.append(
                    Note(text=f"no action read from the reply: {parsed.error[:300]}")
                )
            if self.act(parsed.actions):
                return
            # a reply without actions is answered with the same observation, not a new one (as officially)
            fresh = bool(parsed.actions)
            if fresh:
                view = self.observe()

    def observe(self) -> DesktopView:
        return self.screen.observe(self.agent.observation)

    def attach(self, view: DesktopView, step: int) -> str | None:
        """The observation's screenshot kept as an attachment; its reference (None without one)."""
        if view.image is None:
            return None
        name = f"step-{step}.png"
        self.submission.attachments[name] = view.image
        self.images[attachment_url(name)] = "data:image/png;base64," + base64.b64encode(view.image).decode()
        return attachment_url(name)

    def ask(self, messages: list[Message], budget: Budget) -> str:
        """One request with the screenshots as data URLs; recorded with them named by attachment."""
        sent = [_with_images(message, self.images) for message in messages]
        images = sum(1 for m in sent for part in m["content"] if part.get("type") == "image_url")
        reply = self.agent.ask(sent, budget, self.submission)  # type: ignore[arg-type]
        call = self.submission.trajectory[-1]
        if isinstance(call, ModelCall):
            call.messages = messages
        self.counts["images"] += images
        self.counts["image_tokens"] += images * image_tokens()
        return reply

    def forget_images(self, current: str | None) -> None:
        """Only the screenshots a later request can send stay in memory as data URLs (their files stay)."""
        kept = {current} | {
            part.get("image_url", {}).get("url")
            for observed, _ in (self.history[-self.agent.history :] if self.agent.history else [])
            for part in observed["content"]
        }
        for url in [url for url in self.images if url not in kept]:
            del self.images[url]

    def act(self, actions: list[Any]) -> bool:
        """Run a reply's actions in order; True when one ended the episode (DONE, FAIL)."""
        submission, infos = self.submission, []
        for action in actions:
            kept = action
            if self.options.parsing == "corrected" and isinstance(action, dict) and is_special(action):
                kept = action["action_type"]  # a JSON FAIL is FAIL (officially the dict is not, for scoring)
            submission.evidence[LAST_ACTION] = kept
            if is_special(action, "DONE", "FAIL"):
                submission.act("desktop", {"action": kept}, Observation(kind="desktop"), counts=False)
                done = is_special(action, "DONE")
                submission.finished, submission.stop_reason = done, "done" if done else "fail"
                return True
            if is_special(action, "WAIT"):
                time.sleep(PAUSE_S)
                observation = Observation(kind="desktop")
                submission.act("desktop", {"action": kept}, observation, counts=False)
            else:
                observation = self.screen.act(action)
                submission.act("desktop", {"action": action}, observation)
            infos.append(execution_info(observation))
            time.sleep(PAUSE_S)
        self.feedback = (
            feedback_message(self.texts, self.agent.action_space, actions, infos, self.options.parsing)
            if self.options.execution_feedback and infos
            else None
        )
        return False


def _with_images(message: Message, images: dict[str, str]) -> Message:
    parts = message["content"]
    if not any(part.get("type") == "image_url" for part in parts):
        return message
    sent = []
    for part in parts:
        url = part.get("image_url", {}).get("url") if part.get("type") == "image_url" else None
        sent.append(
            {**part, "image_url": {**part["image_url"], "url": images[url]}} if url in images else part
        )
    return {**message, "content": sent}


def execution_info(observation: Observation) -> dict[str, str]:
    """An action's outcome as the release's controller reports it: code that raised ran (`success`) with its
    error output; an action that could not run at all (a timeout, an invalid JSON action) is an `error`."""
    error = observation.error
    text = (
        observation.stderr + (f"\n{error.traceback or f'{error.name}: {error.value}'}" if error else "")
    ).strip()
    if observation.timed_out or (error is not None and error.name == "InvalidAction"):
        return {"status": "error", "message": text}
    return {"status": "success", "output": observation.stdout, "error": text}


def image_tokens(width: int = SCREEN_WIDTH, height: int = SCREEN_HEIGHT) -> int:
    """Tokens of one high-detail image by OpenAI's rule: fit in 2048x2048, shortest side 768, then 170 per
    512-pixel tile plus 85."""
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    return 85 + 170 * math.ceil(width * scale / 512) * math.ceil(height * scale / 512)


def step_note(step: int, view: DesktopView) -> Note:
    """What the step saw, for the trajectory and the viewer: the screenshot as a small JPEG, and the table."""
    data: dict[str, Any] = {"step": step, "observation": view.observation}
    if view.image is not None:
        data["screenshot_jpeg"] = small_jpeg(view.image)
        data["attachment"] = f"step-{step}.png"
    if view.raw_image is not None and view.elements:  # som with marks: the viewer can show the screen without
        data["screenshot_raw_jpeg"] = small_jpeg(view.raw_image)
    if view.table is not None:
        data["a11y_tree"] = view.table
    return Note(text=f"screen at step {step}", data=data)
