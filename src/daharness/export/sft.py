"""A run's trajectories as chat-format training examples (`daharness export --format sft`, DAInstruct-style).

One JSON object per scored sample whose score reaches `min_score`: `messages` in the OpenAI chat format
(the system and user prompt the agent first sent, each model reply as an assistant message, each sandbox
action as that reply's tool call with its observation as the `tool` message, the user's later turns),
`tools` (the functions those calls name), and the sample's metadata (id, suite, family, score, model,
level, concepts, category, epoch). Samples that failed in the harness, and those no model call made (the
reference agent's), are never examples.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.record import SampleRecord
from daharness.core.runlog import TrajectoryFile
from daharness.core.submission import ActionEvent, ModelCall, UserTurn
from daharness.export.attachments import with_attachments
from daharness.export.inspect_events import tool_call_id
from daharness.report.trajectory import observation_text
from daharness.runs.rundir import RunDir


def chat_messages(trajectory: TrajectoryFile) -> list[dict[str, Any]]:
    """The conversation of one sample in the OpenAI chat format."""
    steps = trajectory.steps
    first_call = next((step for step in steps if isinstance(step, ModelCall)), None)
    messages: list[dict[str, Any]] = []
    if first_call is not None:
        messages += [
            {"role": m["role"], "content": m.get("content")}
            for m in first_call.messages
            if m.get("role") in ("system", "user")
        ]
    for number, step in enumerate(steps, start=1):
        if isinstance(step, ModelCall):
            messages.append({"role": "assistant", "content": step.reply})
        elif isinstance(step, ActionEvent):
            call = {
                "id": tool_call_id(number),
                "type": "function",
                "function": {"name": step.kind, "arguments": json.dumps(step.args)},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and "tool_calls" not in last:
                last["tool_calls"] = [call]  # the reply that asked for this action
            else:  # an action no reply asked for (the reference agent's): an assistant turn of its own
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            content = observation_text(step.observation) or "(no output)"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        elif isinstance(step, UserTurn) and (first_call is None or steps.index(first_call) < number):
            messages.append({"role": "user", "content": step.content})  # turns before it are in its prompt
    return messages


def tools_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A function definition for each tool the calls name, with the argument names they pass."""
    found: dict[str, set[str]] = {}
    for message in messages:
        for call in message.get("tool_calls", []):
            names = found.setdefault(call["function"]["name"], set())
            names.update(json.loads(call["function"]["arguments"]))
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"run {name} in the analysis sandbox",
                "parameters": {
                    "type": "object",
                    "properties": {arg: {"type": "string"} for arg in sorted(args)},
                    "required": sorted(args),
                },
            },
        }
        for name, args in sorted(found.items())
    ]


def examples(run: RunDir, min_score: float | None = None) -> Iterator[dict[str, Any]]:
    spec = run.spec()
    model = spec.agent.get("model")
    model_name = model.get("model") if isinstance(model, dict) else model
    suite = spec.suite.get("name")
    for record in sorted(run.latest_records().values(), key=lambda r: r.key):
        if not _chosen(record, min_score):
            continue
        trajectory = with_attachments(run.read_trajectory(record.key), run.attachments_dir(record.key))
        if trajectory is None or not any(isinstance(step, ModelCall) for step in trajectory.steps):
            continue  # no model wrote it (the reference agent's runs): nothing to learn from
        messages = chat_messages(trajectory)
        yield {
            "messages": messages,
            "tools": tools_of(messages),
            "metadata": {
                "id": record.id,
                "epoch": record.epoch,
                "suite": suite,
                "family": record.family,
                "score": record.score.value,  # type: ignore[union-attr]
                "model": model_name,
                "agent": record.agent,
                "level": record.level,
                "concepts": record.concepts,
                "category": record.category,
            },
        }


def _chosen(record: SampleRecord, min_score: float | None) -> bool:
    if record.status != "scored" or record.score is None or record.score.excluded:
        return False
    return min_score is None or record.score.value >= min_score


def export_sft(run_dir: Path, out: Path, min_score: float | None = None) -> int:
    """Write the examples as JSON Lines; how many were written."""
    if not (run_dir / "run.json").is_file():
        raise UserError(f"{run_dir}: not a run directory (no run.json)")
    if out.is_dir():
        raise UserError(f"{out}: a folder; name the .jsonl file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for example in examples(RunDir(run_dir), min_score):
            handle.write(json.dumps(example, ensure_ascii=False) + "\n")
            count += 1
    partial.replace(out)
    return count
