"""A run directory as an Inspect AI eval log, written with the `inspect-ai` package's own log API.

Each sample becomes an `EvalSample`: its input (the request the task makes: the instruction, or the
user's question in a dialogue), the conversation (the first prompt the agent sent, every model reply,
each sandbox action as a tool call with its observation as the tool's reply, and the user's turns), the
transcript's events (see inspect_events), the model usage, the final answer as the model output, and
daharness's score (value, explanation, each check) as the score `daharness`. The run's accuracy and mean score are the log's metrics. Samples that failed in
the harness carry their error. Runs of any format version export (they are read through the run log).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.record import SampleRecord
from daharness.core.runlog import RunSpec, TrajectoryFile
from daharness.core.submission import ActionEvent, ModelCall, Note, UserTurn
from daharness.core.task import Task
from daharness.export.attachments import with_attachments
from daharness.export.inspect_events import (
    chat_message,
    events_of,
    model_usage,
    screen_content,
    tool_call_of,
)
from daharness.report.build import build_report, cannot_write
from daharness.report.run_tasks import reload_tasks, request_text
from daharness.report.trajectory import action_code, observation_text
from daharness.runs.rundir import RunDir

SCORER = "daharness"


def _inspect() -> Any:
    try:
        import inspect_ai.log
    except ImportError:
        raise UserError("--format inspect needs inspect-ai: pip install 'daharness[inspect]'") from None
    return inspect_ai


def model_name(spec: RunSpec) -> str:
    """Inspect names models provider/model; agents without a model are named after the agent."""
    model = spec.agent.get("model")
    if isinstance(model, dict):
        model = model.get("model")
    return f"daharness/{model or spec.agent.get('name', 'agent')}"


def messages_of(
    trajectory: TrajectoryFile | None, record: SampleRecord, model: str, task: Task | None = None
) -> list[Any]:
    """The conversation; the harness's notes are not part of it (they are info events)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser

    steps = trajectory.steps if trajectory else []
    messages: list[Any] = []
    first_call = next((step for step in steps if isinstance(step, ModelCall)), None)
    if first_call is not None:  # the prompt as the agent first sent it
        messages += [
            chat_message(message, model)
            for message in first_call.messages
            if message.get("role") in ("system", "user")
        ]
    for number, step in enumerate(steps, start=1):
        if isinstance(step, ModelCall):
            messages.append(ChatMessageAssistant(content=step.reply, model=model))
        elif isinstance(step, ActionEvent):
            code = action_code(step)
            call = tool_call_of(number, step)
            last = messages[-1] if messages else None
            if isinstance(last, ChatMessageAssistant) and not last.tool_calls:
                last.tool_calls = [call]  # the reply that asked for this action
            else:
                messages.append(
                    ChatMessageAssistant(content=f"({code.label})", tool_calls=[call], model=model)
                )
            messages.append(
                ChatMessageTool(
                    content=observation_text(step.observation) or "(no output)",
                    tool_call_id=call.id,
                    function=step.kind,
                )
            )
        elif isinstance(step, UserTurn):
            messages.append(ChatMessageUser(content=step.content, metadata={"source": step.source}))
        elif isinstance(step, Note) and (seen := screen_content(step)) is not None:
            messages.append(ChatMessageUser(content=seen, metadata={"source": "screen"}))  # what it saw
    if not any(isinstance(m, ChatMessageUser) for m in messages):
        request = request_text(task) if task else f"(sample {record.id}: the request is not in the run log)"
        messages.insert(0, ChatMessageUser(content=request))
    return messages


def sample_of(run: RunDir, record: SampleRecord, model: str, task: Task | None) -> Any:
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    trajectory = with_attachments(run.read_trajectory(record.key), run.attachments_dir(record.key))
    messages = messages_of(trajectory, record, model, task)
    # what the task asks; runs whose suite cannot be loaded again fall back on the first prompt
    request = request_text(task) if task else next(m for m in messages if isinstance(m, ChatMessageUser)).text
    score = record.score
    sub_answers = score.details.get("sub_answers", {}) if score else {}
    target = " ".join(f"@{name}[{entry.get('label')}]" for name, entry in sub_answers.items())
    if not target and task is not None and task.gold.answers:
        target = " ".join(f"@{name}[{value}]" for name, value in task.gold.answers)
    scores = {}
    if score is not None:
        scores[SCORER] = Score(
            value=score.value,
            answer=record.answer,
            explanation=score.explanation,
            metadata={
                "excluded": score.excluded,
                "checks": [check.model_dump() for check in score.checks],
                "details": score.details,
            },
        )
    usage = record.agent_metrics.get("usage") or {}
    sample = Sample(input=request, target=target, id=record.id)
    error = None
    if record.status == "error":
        error = EvalError(message=record.error or "error", traceback=record.error or "", traceback_ansi="")
    return EvalSample(
        id=record.id,
        epoch=record.epoch,
        input=request,
        target=target,
        messages=messages,
        events=events_of(trajectory, record, model, sample, scores.get(SCORER)),
        model_usage={model: model_usage(usage)} if usage.get("calls") else {},
        output=ModelOutput.from_content(model, record.answer or ""),
        scores=scores,
        error=error,
        metadata={
            "family": record.family,
            "category": record.category,
            "level": record.level,
            "concepts": record.concepts,
            "attempt": record.attempt,
            "artifacts": record.artifacts,
            "agent_metrics": record.agent_metrics,
        },
        total_time=record.duration_s,
        started_at=record.started_at,
        completed_at=(
            datetime.fromisoformat(record.started_at) + timedelta(seconds=record.duration_s)
        ).isoformat(),
    )


def eval_log(run: RunDir) -> Any:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelUsage

    spec = run.spec()
    tasks = reload_tasks(spec)
    report = build_report(run)
    records = sorted(run.latest_records().values(), key=lambda r: (not r.id.isdigit(), r.id.zfill(12)))
    model = model_name(spec)
    suite = str(spec.suite.get("name", "suite"))
    intervals = report["intervals"]
    metrics = {
        "accuracy": EvalMetric(name="accuracy", value=intervals["accuracy"]["value"] or 0.0),
        "mean": EvalMetric(name="mean", value=intervals["mean_score"]["value"] or 0.0),
    }
    usage = report["agent"]["usage"]
    created = spec.created_at or (records[0].started_at if records else "1970-01-01T00:00:00+00:00")
    started = min((r.started_at for r in records), default=created)
    return EvalLog(
        status="success",
        eval=EvalSpec(
            created=created,
            task=suite,
            task_version=spec.suite.get("version") or 0,  # inspect's default for an unversioned task
            dataset=EvalDataset(
                name=suite,
                samples=len({r.id for r in records}),
                sample_ids=list(dict.fromkeys(r.id for r in records)),
            ),
            model=model,
            solver=str(spec.agent.get("name")),
            tags=spec.tags or None,
            config=EvalConfig(epochs=spec.epochs),
            metadata={
                **spec.metadata,
                "daharness_run": spec.model_dump(mode="json"),
                "scoring": spec.scoring.modes,
            },
        ),
        results=EvalResults(
            total_samples=len(records),
            completed_samples=report["counts"]["scored"],
            scores=[
                EvalScore(
                    name=SCORER,
                    scorer=SCORER,
                    scored_samples=intervals["accuracy"]["n"],
                    unscored_samples=len(records) - intervals["accuracy"]["n"],
                    metrics=metrics,
                )
            ],
        ),
        stats=EvalStats(
            started_at=started,
            completed_at=(
                datetime.fromisoformat(started) + timedelta(seconds=report["wall_time_s"]["elapsed"])
            ).isoformat(),
            model_usage={
                model: ModelUsage(
                    input_tokens=usage["prompt_tokens"],
                    output_tokens=usage["completion_tokens"],
                    total_tokens=usage["prompt_tokens"] + usage["completion_tokens"],
                    total_cost=usage["cost_usd"] or None,
                )
            }
            if usage["calls"]
            else {},
        ),
        samples=[sample_of(run, record, model, tasks.get(record.id)) for record in records],
    )


def export_inspect(run_dir: Path, out: Path) -> Path:
    """Write the run as an Inspect log: `out` itself when it ends in .eval or .json, else a file in it."""
    if out.suffix not in (".eval", ".json", "") and not out.is_dir():  # `out.txt` never becomes a folder
        raise UserError(
            f"{out}: an Inspect log is a .eval or .json file; name one, or a folder to write it in"
        )
    inspect_ai = _inspect()
    run = RunDir.open_for_reading(run_dir)
    if out.suffix not in (".eval", ".json") or out.is_dir():
        out = out / f"{run_dir.resolve().name}.eval"
    log = eval_log(run)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        inspect_ai.log.write_eval_log(log, str(out))
    except OSError as exc:
        raise cannot_write(out, exc) from None
    return out
