"""The texts of the baseline's prompt: the release's, read from the user's Spider2-V checkout, or
daharness's own of the same shape.

The release keeps its system, action-space and observation-space prompts in
`mm_agents/prompt_templates/{system_prompt,action_prompt,observation_prompt}.py` at the checkout's root,
as module constants built from string literals, f-strings of other constants, `+` and `.strip()`. They are
read here by parsing those files (`ast`) and evaluating only such expressions: nothing of the checkout
runs. The few sentences `PromptAgent.predict` writes around them (the task's line, the documentation's
line, each step's question) are the release's format, kept in `RELEASE_FORMATS`.

A suite without a checkout (the built-in one) gets `own_prompt.OWN_TEXTS`: daharness's wording of the same
prompt (the same placeholders, action spaces and observation spaces).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from daharness.core.errors import UserError

TEMPLATES = Path("mm_agents") / "prompt_templates"
ACTION_KEYS = ("computer_13", "pyautogui", "pyautogui_som")
OBSERVATION_KEYS = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
# how far above a `spider2v:` folder (evaluation_examples/examples/<app>/, say) its checkout's root may be
_LEVELS_UP = 5


class PromptTexts(BaseModel):
    """Every text the prompt is assembled from. `system` has the placeholders {action_prompt},
    {observation_prompt}, {screen_width} and {screen_height}; `task`, `context` and each `steps` text for
    an observation with a table have one `{}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    origin: str
    system: str
    action_spaces: dict[str, str]
    observation_spaces: dict[str, str]
    task: str  # appended to the system prompt, with the instruction
    context: str  # the second system message, with the retrieved documentation (--rag)
    steps: dict[str, str]  # the user message of a step, by observation
    no_action: str  # an earlier reply that gave no valid action, as the history shows it
    # execution feedback (off by default, as officially): intro, body (what is said of the actions),
    # outro; `code` / `json` / `failed` / `warned` / `fine` describe one action in the corrected mode
    feedback: dict[str, str]

    def flat(self) -> dict[str, str]:
        """The texts as one flat mapping (`Task.prompt_texts`)."""
        flat = {"origin": self.origin, "system": self.system, "task": self.task, "context": self.context}
        flat |= {f"action_space.{k}": v for k, v in self.action_spaces.items()}
        flat |= {f"observation_space.{k}": v for k, v in self.observation_spaces.items()}
        flat |= {f"step.{k}": v for k, v in self.steps.items()}
        flat |= {f"feedback.{k}": v for k, v in self.feedback.items()}
        return flat | {"no_action": self.no_action}

    @classmethod
    def from_flat(cls, flat: dict[str, str]) -> PromptTexts:
        def group(prefix: str) -> dict[str, str]:
            return {k.removeprefix(prefix): v for k, v in flat.items() if k.startswith(prefix)}

        return cls(
            origin=flat["origin"], system=flat["system"], task=flat["task"], context=flat["context"],
            action_spaces=group("action_space."), observation_spaces=group("observation_space."),
            steps=group("step."), no_action=flat["no_action"], feedback=group("feedback."),
        )  # fmt: skip


# ---- the release's --------------------------------------------------------------------------------------

# The sentences PromptAgent.predict (mm_agents/agent.py) formats around the templates, as the release has them.
RELEASE_FORMATS: dict[str, Any] = {
    "task": "\nYou are asked to complete the following task: {}",
    "context": "We also retrieve relevant documentation from the web to help you with the task:\n{}",
    "steps": {
        "screenshot": "Given the image of screenshot as below, what's the next step that you will do to help "
        "with the task?",
        "a11y_tree": "Given the text of accessibility tree as below:\n{}\nWhat's the next step that you will do "
        "to help with the task?",
        "screenshot_a11y_tree": "Given the text of accessibility tree and image of screenshot as below:\n{}\n"
        "What's the next step that you will do to help with the task?",
        "som": "Given the text of accessibility tree and image of screenshot with index labels as below:\n{}\n"
        "What's the next step that you will do to help with the task?",
    },
    "no_action": "No valid action",
    # add_action_infos(failed_only=True); its body says no valid action whenever some action failed
    "feedback": {
        "intro": "Here are the failed actions and their execution feedbacks of your last response:\n",
        "body": "\nNo valid action detected from your previous response.\n",
        "outro": "Please meticulously check the error messages and the execution status of the failed actions, "
        "and try to resolve them based on the latest observations below.",
        "code": "\nParsed action:\n```\n{}\n```\n",
        "json": "\nParsed action: {}\n",
        "failed": "Execution flag: Failed with error message -> {}\n",
        "warned": "Execution flag: Succeed with error message -> {}\n",
    },
}


def find_checkout(location: Path) -> Path | None:
    """The root of the Spider2-V checkout a `spider2v:` folder belongs to (the folder holding
    `mm_agents/prompt_templates/`), looking at the folder and a few above it; None when there is none."""
    location = location.resolve()
    for folder in [location, *location.parents][:_LEVELS_UP]:
        if (folder / TEMPLATES / "system_prompt.py").is_file():
            return folder
    return None


def read_release(root: Path) -> PromptTexts:
    """The release's texts from the checkout at `root`; a UserError naming the file (and line) when one
    is missing or is not made of the literals this reader evaluates."""
    folder = root / TEMPLATES
    system = _constant(folder / "system_prompt.py", "SYSTEM_PROMPT", str)
    actions = _constant(folder / "action_prompt.py", "ACTION_SPACE_PROMPTS", dict)
    observations = _constant(folder / "observation_prompt.py", "OBSERVATION_SPACE_PROMPTS", dict)
    for name, table, keys in (
        ("ACTION_SPACE_PROMPTS", actions, ACTION_KEYS),
        ("OBSERVATION_SPACE_PROMPTS", observations, OBSERVATION_KEYS),
    ):
        if missing := [key for key in keys if not isinstance(table.get(key), str)]:
            raise UserError(f"{folder}: {name} has no text for {', '.join(missing)}")
    return PromptTexts(
        origin=f"Spider2-V checkout {root}",
        system=system,
        action_spaces={key: actions[key] for key in ACTION_KEYS},
        observation_spaces={key: observations[key] for key in OBSERVATION_KEYS},
        **RELEASE_FORMATS,
    )


class _NotLiteral(Exception):
    """An expression this reader does not evaluate (anything but string literals and the like)."""


def _constant(path: Path, name: str, kind: type) -> Any:
    if not path.is_file():
        raise UserError(f"{path}: not found (a Spider2-V checkout has its prompt templates there)")
    try:
        module = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path}: not Python that can be read ({exc})") from None
    values: dict[str, Any] = {}
    line = None
    for node in module.body:
        target, value = _assignment(node)
        if target is None:
            continue
        try:
            values[target] = _evaluate(value, values)
        except _NotLiteral:
            values.pop(target, None)  # only the names asked for must be readable
            line = node.lineno if target == name else line
    if not isinstance(values.get(name), kind):
        where = f" line {line}" if line else ""
        raise UserError(
            f"{path}{where}: no {name} made of string literals (daharness reads it, never runs it)"
        )
    return values[name]


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id, node.value
    return None, None


def _evaluate(node: ast.expr, names: dict[str, Any]) -> Any:
    """The value of a string expression of the templates: literals, names of earlier ones, f-strings of
    them (no conversion but !s, no format spec), `+`, `.strip()` (or lstrip / rstrip, no argument) and
    dicts of string keys."""
    match node:
        case ast.Constant(value=str() as text):
            return text
        case ast.Name(id=name) if isinstance(names.get(name), str | dict):
            return names[name]
        case ast.JoinedStr(values=parts):
            return "".join(_part(part, names) for part in parts)
        case ast.BinOp(left=left, op=ast.Add(), right=right):
            joined = _evaluate(left, names), _evaluate(right, names)
            if not all(isinstance(side, str) for side in joined):
                raise _NotLiteral
            return joined[0] + joined[1]
        case ast.Call(func=ast.Attribute(value=value, attr="strip" | "lstrip" | "rstrip" as method), args=[],
                      keywords=[]):  # fmt: skip
            text = _evaluate(value, names)
            if not isinstance(text, str):
                raise _NotLiteral
            return getattr(text, method)()
        case ast.Dict(keys=keys, values=items):
            table = {}
            for key, item in zip(keys, items, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    raise _NotLiteral
                table[key.value] = _evaluate(item, names)
            return table
    raise _NotLiteral


def _part(node: ast.expr, names: dict[str, Any]) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (
        isinstance(node, ast.FormattedValue)
        and node.conversion in (-1, ord("s"))
        and node.format_spec is None
    ):
        value = _evaluate(node.value, names)
        if isinstance(value, str):
            return value
    raise _NotLiteral
