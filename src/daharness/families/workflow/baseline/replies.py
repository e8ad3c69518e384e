"""The actions of a model's reply, as the release's parsers read them (`parse_code_from_string`,
`parse_code_from_som_string`, `parse_actions_from_string` of `mm_agents/agent.py`).

pyautogui: a reply that is only WAIT, DONE or FAIL is that action; otherwise every fenced block (```, with
any one-word language tag) is an action, in order: a block that is only WAIT / DONE / FAIL is that action,
and a block whose last line is one of them is its code followed by that action (code then DONE runs the
code, then ends). A word in the prose is no action. With set-of-mark, each `index_N` of the reply (N a
mark on the screen) is bound to the centre of mark N's box, `(x + w // 2, y + h // 2)`, in front of every
block of code. computer_13: a reply that is only WAIT / DONE / FAIL is that action; otherwise every
```json block (else every ``` block) is one JSON action, in order; else the whole reply is one.

Modes (the desktop agent's `parsing` option):
- `official`: the release's reading exactly. It first splits the reply at every `;` and joins the stripped
  pieces with newlines, which breaks code with a `;` inside a string (`pyautogui.typewrite("SELECT 1;")`
  becomes two lines, the first an unterminated string) and moves a statement after `;` in an indented
  block out of it.
- `corrected` (the default): the same, without that split: the code runs as the model wrote it.
JSON replies read the same in both modes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

ParsingMode = Literal["corrected", "official"]
PARSING_MODES: tuple[ParsingMode, ...] = ("corrected", "official")
SPECIAL = ("WAIT", "DONE", "FAIL")
# a fence with an optional one-word tag (python, bash, json...) and the whitespace after it
_FENCE = re.compile(r"```(?:\w+\s+)?(.*?)```", re.DOTALL)
_JSON_FENCE = re.compile(r"```json\s+(.*?)\s+```", re.DOTALL)
_BARE_FENCE = re.compile(r"```\s+(.*?)\s+```", re.DOTALL)
_MARK = re.compile(r"index_(\d+)")

Action = str | Any  # pyautogui code, WAIT / DONE / FAIL, or a computer_13 action (a JSON value)


@dataclass(frozen=True)
class Reply:
    """What a reply asks for. `error`: why no action could be read (a JSON block that is not JSON);
    `unreadable`: the release's parser raised on it (no JSON anywhere), so that its history keeps the
    reply as "no valid action"."""

    actions: list[Action] = field(default_factory=list)
    error: str | None = None
    unreadable: bool = False


def parse_reply(
    reply: str,
    action_space: str,
    *,
    marks: list[tuple[int, int, int, int]] | None = None,
    mode: ParsingMode = "corrected",
) -> Reply:
    """The actions of `reply` for the action space (pyautogui, or computer_13 / json); `marks` are the
    set-of-mark boxes (x, y, width, height) when the observation is som."""
    if action_space != "pyautogui":
        return parse_json_actions(reply)
    if marks is not None:
        return Reply(parse_marked_code(reply, marks, mode))
    return Reply(parse_code(reply, mode))


def parse_code(reply: str, mode: ParsingMode = "corrected") -> list[str]:
    """The pyautogui actions of a reply (see the module doc)."""
    text = _split_at_semicolons(reply) if mode == "official" else reply
    if text.strip() in SPECIAL:
        return [text.strip()]
    actions: list[str] = []
    for block in _FENCE.findall(text):
        block = block.strip()
        lines = block.split("\n")
        if block in SPECIAL:
            actions.append(block)
        elif lines[-1] in SPECIAL:
            if len(lines) > 1:
                actions.append("\n".join(lines[:-1]))
            actions.append(lines[-1])
        else:
            actions.append(block)
    return actions


def parse_marked_code(
    reply: str, marks: list[tuple[int, int, int, int]], mode: ParsingMode = "corrected"
) -> list[str]:
    """The pyautogui actions of a set-of-mark reply: each `index_N` it names (every time it names it, as
    the release does) bound to the centre of mark N before each block of code."""
    bindings = ""
    for number in _MARK.findall(reply):
        index = int(number) - 1
        if 0 <= index < len(marks):
            x, y, width, height = marks[index]
            bindings += f"index_{number} = ({int(x + width // 2)}, {int(y + height // 2)})\n"
    return [action if action.strip() in SPECIAL else bindings + action for action in parse_code(reply, mode)]


def parse_json_actions(reply: str) -> Reply:
    """The computer_13 actions of a reply (see the module doc)."""
    if reply.strip() in SPECIAL:
        return Reply([reply.strip()])
    blocks = _JSON_FENCE.findall(reply) or _BARE_FENCE.findall(reply)
    if blocks:
        try:
            return Reply([json.loads(block) for block in blocks])
        except json.JSONDecodeError as exc:
            return Reply(error=f"Failed to parse JSON: {exc}")
    try:
        return Reply([json.loads(reply)])
    except json.JSONDecodeError:
        return Reply(error="Invalid response format: " + reply, unreadable=True)


def _split_at_semicolons(reply: str) -> str:
    """The release's first step: the reply cut at every `;`, each piece stripped, empty ones dropped,
    joined by newlines."""
    return "\n".join(piece.strip() for piece in reply.split(";") if piece.strip())


def is_special(action: Action, *names: str) -> bool:
    """Whether an action is one of the special ones named (all three by default): the word itself, or a
    JSON action of that type."""
    wanted = names or SPECIAL
    if isinstance(action, str):
        return action in wanted
    return isinstance(action, dict) and action.get("action_type") in wanted
