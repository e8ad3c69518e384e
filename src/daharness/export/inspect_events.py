"""A sample's trajectory as Inspect AI transcript events, so that `inspect view` shows it as it shows
Inspect's own logs: the sample's start, each model call (its input messages, its reply, its tokens and
cost, whether the reply came from the response cache), each sandbox action as a tool call with its
output, the user's turns and the harness's notes as info events, and the score.

Steps carry durations but no clock times: each event is placed at the sample's start plus the time of
the steps before it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from daharness.core.record import SampleRecord
from daharness.core.runlog import TrajectoryFile
from daharness.core.submission import ActionEvent, ModelCall, Note, UserTurn
from daharness.report.trajectory import observation_text


def tool_call_id(number: int) -> str:
    """The id of the tool call of step `number` (1-based), shared by the messages and the events."""
    return f"step-{number}"


def chat_content(content: Any) -> Any:
    """A message's content as Inspect's: its text, or, for a message of parts (a desktop agent's
    observation), each text part as text and each `image_url` part as an image."""
    from inspect_ai.model import ContentImage, ContentText

    if not isinstance(content, list):
        return str(content or "")
    parts: list[Any] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            if isinstance(url, str):
                parts.append(ContentImage(image=url))
        elif part.get("type") == "text":
            parts.append(ContentText(text=str(part.get("text", ""))))
    return parts


def screen_content(note: Note) -> list[Any] | None:
    """A desktop agent's step note as what it saw: the note's text and its screenshot (the trajectory
    keeps it as a small JPEG), or None for a note without one."""
    from inspect_ai.model import ContentImage, ContentText

    shot = note.data.get("screenshot_jpeg")
    if not isinstance(shot, str):
        return None
    return [ContentText(text=note.text), ContentImage(image=f"data:image/jpeg;base64,{shot}")]


def chat_message(message: dict[str, Any], model: str) -> Any:
    """A message as the agent sent it ({"role", "content"}) as Inspect's chat message."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    content = chat_content(message.get("content"))
    match message.get("role"):
        case "system":
            return ChatMessageSystem(content=content)
        case "assistant":
            return ChatMessageAssistant(content=content, model=model)
        case _:
            return ChatMessageUser(content=content)


def model_usage(usage: dict[str, Any]) -> Any:
    from inspect_ai.model import ModelUsage

    prompt, completion = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    return ModelUsage(
        input_tokens=prompt,
        output_tokens=completion,
        total_tokens=prompt + completion,
        total_cost=float(usage.get("cost_usd", 0.0)),
    )


def tool_call_of(number: int, step: ActionEvent) -> Any:
    from inspect_ai.tool import ToolCall

    return ToolCall(id=tool_call_id(number), function=step.kind, arguments=dict(step.args))


def _model_event(
    step: ModelCall, action: tuple[int, ActionEvent] | None, model: str, at: datetime, offset: float
) -> Any:
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import ChatMessageAssistant, GenerateConfig, ModelOutput
    from inspect_ai.model._model_output import ChatCompletionChoice

    calls = [tool_call_of(*action)] if action else None
    stop = "tool_calls" if calls else "max_tokens" if step.finish_reason == "length" else "stop"
    output = ModelOutput(
        model=model,
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(
                    content=step.reply, model=model, tool_calls=calls, source="generate"
                ),
                stop_reason=stop,
            )
        ],
        usage=model_usage(step.usage),
        time=step.latency_s,
    )
    return ModelEvent(
        model=model,
        input=[chat_message(message, model) for message in step.messages],
        tools=[],
        tool_choice="auto",
        config=GenerateConfig(),
        output=output,
        cache="read" if step.cached else None,
        timestamp=at,
        completed=at + timedelta(seconds=step.latency_s),
        working_start=offset,
        working_time=step.latency_s,
    )


def _tool_event(number: int, step: ActionEvent, at: datetime, offset: float) -> Any:
    from inspect_ai.event import ToolEvent
    from inspect_ai.tool import ToolCallError

    observation = step.observation
    text = observation_text(observation) or "(no output)"
    error = None
    if not observation.ok:
        kind = "timeout" if observation.timed_out else "unknown"
        error = ToolCallError(type=kind, message=text.splitlines()[-1] if text else "failed")
    return ToolEvent(
        id=tool_call_id(number),
        function=step.kind,
        arguments=dict(step.args),
        result=text,
        error=error,
        timestamp=at,
        completed=at + timedelta(seconds=observation.duration_s),
        working_start=offset,
        working_time=observation.duration_s,
    )


def events_of(
    trajectory: TrajectoryFile | None, record: SampleRecord, model: str, sample: Any, score: Any
) -> list[Any]:
    """Inspect events of one sample: `sample` is its Inspect `Sample` (input, target), `score` its
    Inspect `Score` or None."""
    from inspect_ai.event import InfoEvent, SampleInitEvent, ScoreEvent

    start = datetime.fromisoformat(record.started_at)
    offset = 0.0
    events: list[Any] = [SampleInitEvent(sample=sample, timestamp=start, working_start=0.0)]
    steps = trajectory.steps if trajectory else []
    for number, step in enumerate(steps, start=1):
        at = start + timedelta(seconds=offset)
        if isinstance(step, ModelCall):
            following = steps[number] if number < len(steps) else None
            action = (number + 1, following) if isinstance(following, ActionEvent) else None
            events.append(_model_event(step, action, model, at, offset))
            offset += step.latency_s
        elif isinstance(step, ActionEvent):
            events.append(_tool_event(number, step, at, offset))
            offset += step.observation.duration_s
        elif isinstance(step, UserTurn):
            data = {"content": step.content, "question": step.question} if step.question else step.content
            events.append(
                InfoEvent(source=f"user ({step.source})", data=data, timestamp=at, working_start=offset)
            )
        elif isinstance(step, Note):
            data = {"note": step.text, **step.data} if step.data else step.text
            if isinstance(data, dict) and isinstance(data.get("screenshot_jpeg"), str):
                # shown as the image it is: Inspect's viewer renders an info event's text as markdown
                shot = data.pop("screenshot_jpeg")
                data.pop("screenshot_raw_jpeg", None)  # set-of-mark's screen without marks: the viewer's
                data["screenshot"] = f"![{step.text}](data:image/jpeg;base64,{shot})"
            events.append(InfoEvent(source="daharness", data=data, timestamp=at, working_start=offset))
    if score is not None:
        at = start + timedelta(seconds=max(offset, record.duration_s))
        events.append(
            ScoreEvent(
                score=score, target=sample.target, scorer="daharness", timestamp=at, working_start=offset
            )
        )
    return events
