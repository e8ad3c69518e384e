"""The `desktop` agent: Spider2-V's baseline prompting of a vision-language model on the sandbox's screen.

As the paper's baseline (and OSWorld's prompt agent it builds on): a system prompt that describes the
action space (pyautogui code, or the JSON actions of `core.desktop`) and the instruction; then, each
step, the observation (the screenshot as an image part, the accessibility tree as the paper's table, or
both, or set-of-mark), after the last `history` observations and replies, as they were. The reply's
code block (or JSON block) runs on the screen; WAIT, DONE and FAIL are the special answers.

Screenshots go to the endpoint as `image_url` parts (PNG data URLs); their tokens are counted with
OpenAI's rule for high-detail images (the endpoint's own prompt count includes them too). The
trajectory keeps each step's screenshot as a small JPEG and its table, not the data URLs of the prompt.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
from typing import Any

from daharness.agents.budget import Budget, SampleLimits
from daharness.agents.llm import ModelAgent, StopSample
from daharness.agents.options import AgentOptions
from daharness.core.backend import SandboxBackend
from daharness.core.desktop import (
    OBSERVATION_TYPES,
    DesktopView,
    ObservationType,
    is_final,
    parse_screen_action,
)
from daharness.core.errors import UserError
from daharness.core.registry import agent
from daharness.core.submission import ModelCall, Note, Submission
from daharness.core.task import Task
from daharness.models import ModelClient

ACTION_SPACES = ("pyautogui", "json")
TABLE_LIMIT = 12_000  # characters of the accessibility table in one prompt
TRAJECTORY_IMAGE_WIDTH = 960  # the screenshot kept in the trajectory: half the screen, JPEG

_PYAUTOGUI_SPACE = """You act with Python code that uses `pyautogui` (already imported, with `time`) to move the mouse
and press keys: pyautogui.click(x, y), pyautogui.doubleClick(x, y), pyautogui.rightClick(x, y),
pyautogui.moveTo(x, y), pyautogui.dragTo(x, y, duration=0.5), pyautogui.scroll(clicks),
pyautogui.typewrite("text"), pyautogui.press("enter"), pyautogui.hotkey("ctrl", "s").
Do not use pyautogui.locateCenterOnScreen or pyautogui.screenshot(): you see the screen in each observation.
Give the coordinates yourself from what you see. Each code block runs on its own: nothing is kept between steps.
Reply with your reasoning, then ONE code block:
```python
# your code
```
Special replies (alone in a code block): ```WAIT``` when you need to wait, ```FAIL``` when the task cannot be
done, ```DONE``` when it is done."""
_JSON_SPACE = """You act with one JSON action per step, as an object with an "action_type" and its parameters:
CLICK (x, y, button: left|right|middle, num_clicks: 1-3), DOUBLE_CLICK (x, y), RIGHT_CLICK (x, y), MOVE_TO (x, y),
DRAG_TO (x, y), MOUSE_DOWN, MOUSE_UP, SCROLL (clicks: positive up, negative down), TYPING (text),
PRESS (key), KEY_DOWN (key), KEY_UP (key), HOTKEY (keys: a list), WAIT (seconds), FAIL, DONE.
Keys are pyautogui's names (enter, tab, ctrl, shift, alt, a, 1, f5, ...). Coordinates are screen pixels.
Reply with your reasoning, then ONE action:
```json
{"action_type": "CLICK", "x": 100, "y": 200}
```
Reply DONE when the task is done, FAIL when it cannot be done."""
SYSTEM_PROMPT = """You are an agent that carries out data-analysis tasks on a Linux desktop ({width}x{height}).
Each step you get an observation of the screen: {what}. Then you decide the next action.
Files of the task are in {workdir}. You have at most {max_steps} steps.

# ACTION SPACE
{action_space}

# TASK
{task}"""
_WHAT = {
    "screenshot": "a screenshot",
    "a11y_tree": "its accessibility tree, as a table (tag, name, position, size, text)",
    "screenshot_a11y_tree": "a screenshot and its accessibility tree, as a table",
    "som": "a screenshot with numbered boxes on its elements, and a table of those elements by number",
}
STEP_PROMPT = "What is the next action? Here is the screen now."
_FENCE = re.compile(r"```(?:python|py|json)?\s*\n?(.*?)```", re.DOTALL)


@agent("desktop", "Spider2-V's baseline on the sandbox's screen: screenshots and a11y tree to a VL model")
class DesktopAgent(ModelAgent):
    name = "desktop"
    default_max_steps = 15
    needs_desktop = True

    @classmethod
    def build(cls, options: AgentOptions) -> DesktopAgent:
        extra = options.extra
        return cls(
            options.client(options.model, cls.name),
            options.limits,
            observation=str(extra.get("observation", "screenshot_a11y_tree")),
            action_space=str(extra.get("action_space", "pyautogui")),
            history=int(extra.get("history", 3)),  # type: ignore[call-overload]
        )

    def __init__(
        self,
        model: ModelClient,
        limits: SampleLimits | None = None,
        *,
        observation: str = "screenshot_a11y_tree",
        action_space: str = "pyautogui",
        history: int = 3,
    ) -> None:
        super().__init__(model, limits)
        if observation not in OBSERVATION_TYPES:
            raise UserError(
                f"--observation must be one of {', '.join(OBSERVATION_TYPES)}, not {observation!r}"
            )
        if action_space not in ACTION_SPACES:
            raise UserError(f"--action-space must be one of {', '.join(ACTION_SPACES)}, not {action_space!r}")
        self.observation: ObservationType = observation  # type: ignore[assignment]
        self.action_space = action_space
        self.history = max(0, history)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "observation": self.observation,
            "action_space": self.action_space,
            "history": self.history,
        }

    def system(self, task: Task, sandbox: SandboxBackend) -> str:
        from daharness.core.desktop import SCREEN_HEIGHT, SCREEN_WIDTH

        return SYSTEM_PROMPT.format(
            width=SCREEN_WIDTH, height=SCREEN_HEIGHT, what=_WHAT[self.observation], workdir=sandbox.workdir,
            max_steps=self.max_steps, action_space=_PYAUTOGUI_SPACE if self.action_space == "pyautogui" else _JSON_SPACE,
            task="\n".join(task.instructions),
        )  # fmt: skip

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        if not getattr(sandbox, "has_desktop", False):
            raise UserError("--agent desktop needs a sandbox with a desktop (bwrap, see `daharness doctor`)")
        box: Any = sandbox
        submission = Submission(finished=False, stop_reason="max_steps")
        budget = Budget(self.limits)
        turns: list[tuple[dict[str, Any], str]] = []  # (observation message, reply)
        counts = {"images": 0, "image_tokens": 0}
        submission.evidence["desktop"] = counts
        system = {"role": "system", "content": self.system(task, sandbox)}
        try:
            while submission.steps < self.max_steps:
                view = box.observe_desktop(self.observation)
                message = observation_message(view)
                kept = turns[-self.history :] if self.history else []
                messages = [system]
                for old, reply in kept:
                    messages += [old, {"role": "assistant", "content": reply}]
                messages.append(message)
                images = sum(1 for m in messages for p in _parts(m) if p.get("type") == "image_url")
                reply = self.ask(messages, budget, submission)  # type: ignore[arg-type]
                _forget_images(submission)
                counts["images"] += images
                counts["image_tokens"] += images * image_tokens(view)
                submission.steps += 1
                submission.trajectory.append(step_note(submission.steps, view))
                turns.append((message, reply))
                action = parse_reply(reply, self.action_space)
                if action is None:
                    continue  # the next observation is the answer: nothing happened
                if action in ("DONE", "FAIL") or (not isinstance(action, str) and is_final(action)):
                    final = action if isinstance(action, str) else action.action_type
                    submission.finished = final == "DONE"
                    submission.stop_reason = "done" if final == "DONE" else "fail"
                    break
                if action == "WAIT":
                    action = parse_screen_action({"action_type": "WAIT", "seconds": 1})
                observation = box.act_on_desktop(action)
                described = action if isinstance(action, str) else action.model_dump()
                submission.act("desktop", {"action": described}, observation)
                if not observation.ok:
                    error = observation.error
                    turns[-1] = (message, f"{reply}\n(The action failed: {error.name if error else 'error'}: "
                                          f"{(error.value if error else observation.stderr)[:300]})")  # fmt: skip
        except StopSample as stop:
            submission.stop_reason = stop.reason
        return submission


def parse_reply(reply: str, action_space: str) -> Any:
    """The action of a reply: pyautogui code, a parsed JSON action, or WAIT / DONE / FAIL; None if none."""
    blocks = [block.strip() for block in _FENCE.findall(reply)]
    words = [block.upper() for block in blocks if block.upper() in ("WAIT", "DONE", "FAIL")]
    if words:
        return words[0]
    if not blocks:
        bare = reply.strip().split()[-1].upper() if reply.strip() else ""
        return bare if bare in ("WAIT", "DONE", "FAIL") else None
    if action_space == "pyautogui":
        return "\n".join(blocks)
    try:
        return parse_screen_action(json.loads(blocks[0]))
    except ValueError:  # not JSON, or not an action: the model sees nothing happen
        return None


def observation_message(view: DesktopView) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": STEP_PROMPT}]
    if view.image is not None:
        url = "data:image/png;base64," + base64.b64encode(view.image).decode()
        parts.append({"type": "image_url", "image_url": {"url": url, "detail": "high"}})
    if view.table is not None:
        table = view.table if len(view.table) <= TABLE_LIMIT else view.table[:TABLE_LIMIT] + "\n[...]"
        parts.append({"type": "text", "text": f"Accessibility tree:\n{table}"})
    return {"role": "user", "content": parts}


def image_tokens(view: DesktopView, width: int = 1920, height: int = 1080) -> int:
    """Tokens of one high-detail image by OpenAI's rule: fit in 2048x2048, shortest side 768, then 170 per
    512-pixel tile plus 85."""
    if view.image is None:
        return 0
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    width, height = width * scale, height * scale
    return 85 + 170 * math.ceil(width / 512) * math.ceil(height / 512)


def step_note(step: int, view: DesktopView) -> Note:
    """What the step saw, for the trajectory: the screenshot as a small JPEG, and the table."""
    data: dict[str, Any] = {"step": step, "observation": view.observation}
    if view.image is not None:
        data["screenshot_jpeg"] = small_jpeg(view.image)
    if view.table is not None:
        data["a11y_tree"] = view.table
    return Note(text=f"screen at step {step}", data=data)


def small_jpeg(png: bytes, width: int = TRAJECTORY_IMAGE_WIDTH) -> str:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image = image.resize((width, round(image.height * width / image.width)))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=70)
    return base64.b64encode(buffer.getvalue()).decode()


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _without_images(message: dict[str, Any]) -> dict[str, Any]:
    """An earlier observation keeps its table; its screenshot is said, not sent (as the paper's history)."""
    parts = [
        part if part.get("type") != "image_url" else {"type": "text", "text": "(an earlier screenshot)"}
        for part in _parts(message)
    ]
    return {"role": message["role"], "content": parts}


def _forget_images(submission: Submission) -> None:
    """The recorded model call keeps its messages without the screenshots' data URLs (step notes keep
    the screenshots, compressed)."""
    call = submission.trajectory[-1] if submission.trajectory else None
    if isinstance(call, ModelCall):
        call.messages = [_without_images(m) if _parts(m) else m for m in call.messages]
