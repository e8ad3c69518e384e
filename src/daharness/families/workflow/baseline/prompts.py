"""The messages of each request, assembled as the release's `PromptAgent.predict` assembles them.

1. system: the system prompt (the action space's prompt, `<space>_som` with set-of-mark, and the
   observation's, with the screen size) followed by the task's line with the instruction;
2. system, with `--rag`: the retrieved documentation;
3. the last `history` steps (3 by default), each the user message of its observation as it was sent (table
   and screenshot) and the reply (stripped; "No valid action" when the release could not parse it);
4. with execution feedback (off, as officially), what went wrong in the last step's actions;
5. the user message of the current observation: its question with the table, then the screenshot.

Every content is a list of parts (`{"type": "text"}`, `{"type": "image_url", "image_url": {"url": data URL,
"detail": "high"}}`), as the release sends them.
"""

from __future__ import annotations

import json
from typing import Any

from daharness.families.workflow.baseline.templates import PromptTexts

Message = dict[str, Any]
NEEDS_TABLE = ("a11y_tree", "screenshot_a11y_tree", "som")
NEEDS_IMAGE = ("screenshot", "screenshot_a11y_tree", "som")


def system_message(
    texts: PromptTexts, action_space: str, observation: str, screen: tuple[int, int], instruction: str
) -> Message:
    key = f"{action_space}_som" if "som" in observation else action_space
    prompt = texts.system.format(
        action_prompt=texts.action_spaces[key],
        observation_prompt=texts.observation_spaces[observation],
        screen_width=screen[0],
        screen_height=screen[1],
    )
    return _message("system", prompt + texts.task.format(instruction))


def context_message(texts: PromptTexts, context: str) -> Message:
    return _message("system", texts.context.format(context))


def observation_message(
    texts: PromptTexts, observation: str, table: str | None, image_url: str | None
) -> Message:
    """A step's user message: the question (with the table, for the observations that have one), then the
    screenshot (as a data URL, or a reference to it)."""
    question = texts.steps[observation]
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": question.format(table) if observation in NEEDS_TABLE else question}
    ]
    if observation in NEEDS_IMAGE:
        parts.append({"type": "image_url", "image_url": {"url": image_url, "detail": "high"}})
    return {"role": "user", "content": parts}


def reply_message(texts: PromptTexts, thought: str) -> Message:
    """An earlier reply as the history shows it ("" when the release could not parse it)."""
    return _message("assistant", thought.strip() if thought else texts.no_action)


def request_messages(
    system: Message,
    context: Message | None,
    history: list[tuple[Message, str]],
    texts: PromptTexts,
    current: Message,
    keep: int = 3,
    feedback: Message | None = None,
) -> list[Message]:
    """The whole request: the last `keep` steps of `history` (observation message, reply) between the
    system messages and the current observation."""
    messages = [system, *([context] if context else [])]
    for observed, thought in history[-keep:] if keep else []:
        messages += [observed, reply_message(texts, thought)]
    return [*messages, *([feedback] if feedback else []), current]


def _message(role: str, text: str) -> Message:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def feedback_message(
    texts: PromptTexts, action_space: str, actions: list[Any], infos: list[dict[str, str]], mode: str
) -> Message | None:
    """Execution feedback on the last step's actions (`infos`: one per action run, {"status": "success" |
    "error", "error": what it printed on stderr, "message": why it failed}); None when none went wrong.
    The release's message (official mode) says only that no valid action was detected, whatever failed;
    the corrected one shows each action that went wrong and how."""
    wrong = [
        (action, info)
        for action, info in zip(actions, infos, strict=False)
        if info.get("status") == "error" or info.get("error", "").strip()
    ]
    if not wrong:
        return None
    said = texts.feedback
    body = said["body"] if mode == "official" else ""
    for action, info in wrong if mode != "official" else []:
        shown = (
            said["code"].format(action)
            if action_space == "pyautogui"
            else said["json"].format(json.dumps(action, ensure_ascii=False))
        )
        if info.get("status") == "error":
            flag = said["failed"].format(info.get("message", "").strip())
        else:
            flag = said["warned"].format(info.get("error", "").strip())
        body += shown + flag
    return _message("user", said["intro"] + body + said["outro"])
