"""Trajectory events as people read them: the code of an action, its language, its observation as text.

Shared by the viewer and the exporters, so that a step reads the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from daharness.core.observation import Observation
from daharness.core.submission import ActionEvent


@dataclass(frozen=True)
class ActionCode:
    language: str  # a Pygments lexer name: python, bash, sql, text
    code: str
    label: str  # what the action did, in a few words


def action_code(event: ActionEvent) -> ActionCode:
    args = event.args
    match event.kind:
        case "python":
            return ActionCode("python", str(args.get("code", "")), "python")
        case "bash":
            return ActionCode("bash", str(args.get("command", "")), "bash")
        case "sql":
            output = f" → {args['output']}" if args.get("output") else ""
            return ActionCode(
                "sql", str(args.get("query", "")), f"sql on {args.get('database', '?')}{output}"
            )
        case "write_file":
            path = str(args.get("path", ""))
            language = "python" if path.endswith(".py") else "sql" if path.endswith(".sql") else "text"
            return ActionCode(language, str(args.get("content", "")), f"write {path}")
        case _:
            return ActionCode("text", "\n".join(f"{k} = {v}" for k, v in args.items()), event.kind)


def observation_text(observation: Observation) -> str:
    """stdout, stderr and the error of an action, with what cut or stopped it."""
    parts = [observation.stdout.rstrip("\n")] if observation.stdout else []
    if observation.stderr:
        parts.append(f"[stderr]\n{observation.stderr.rstrip()}")
    if observation.error is not None:
        parts.append(
            observation.error.traceback.rstrip() or f"{observation.error.name}: {observation.error.value}"
        )
    if observation.exit_status not in (None, 0):
        parts.append(f"[exit status {observation.exit_status}]")
    if observation.timed_out:
        parts.append("[timed out]")
    if observation.truncated:
        parts.append("[output truncated]")
    if observation.restarted:
        parts.append("[the sandbox kernel was restarted]")
    return "\n".join(parts)
