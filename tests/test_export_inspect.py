"""`daharness export --format inspect`: the log is read back with Inspect AI's own reader."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from families.interactive.replies import Script
from sample_runs import SUITE, WRONG_EVERY

from daharness.agents import AgentSettings, make_agent
from daharness.models import ModelSettings
from daharness.report.build import build_report
from daharness.report.run_tasks import request_text
from daharness.runs.rundir import RunDir
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

log_api = pytest.importorskip(
    "inspect_ai.log", reason="inspect-ai is not installed (pip install 'daharness[inspect]')"
)

OLD_RUN = Path(__file__).parent / "fixtures" / "old_run_v01"


def _export(run: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daharness", "export", str(run), "--format", "inspect", str(out)],
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def react_run_dir(react_export_run: Path) -> Path:
    return react_export_run


def test_a_model_run_exports_samples_scores_and_messages(react_run_dir: Path, tmp_path: Path) -> None:
    done = _export(react_run_dir, tmp_path / "log.eval")
    assert done.returncode == 0, done.stderr
    log = log_api.read_eval_log(str(tmp_path / "log.eval"))
    assert log.status == "success" and log.eval.model == "daharness/fake-model" and log.eval.solver == "react"
    assert log.eval.task_version == 1  # the built-in closed-form suite's version
    assert [s.id for s in log.samples] == [task.id for task in SUITE.tasks[:4]] + ["dialogue-1"]
    metrics = log.results.scores[0].metrics
    wrong = sum(1 for index in range(4) if index % WRONG_EVERY == 0)
    assert metrics["accuracy"].value == pytest.approx((4 - wrong) / 5)  # the dialogue sample scores 0.5
    first = log.samples[0]
    task = SUITE.tasks[0]
    assert first.scores["daharness"].value == 0.0  # task 0 got a wrong answer
    assert first.target == " ".join(f"@{n}[{v}]" for n, v in task.gold.answers)
    roles = [m.role for m in first.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert task.instruction in first.input
    call = first.messages[roles.index("assistant")]
    assert call.tool_calls[0].function == "python" and "savefig" in call.tool_calls[0].arguments["code"]
    assert call.text.startswith("Thought: plot the data first")
    observation = first.messages[roles.index("tool")]
    assert (
        observation.tool_call_id == call.tool_calls[0].id and observation.text.splitlines()[0] == "(150, 5)"
    )  # the printed shape
    assert first.messages[-1].text.startswith("Thought: I now know the final answer")
    assert first.output.completion == first.scores["daharness"].answer
    assert log.samples[1].scores["daharness"].value == 1.0
    dialogue = log.samples[-1]
    assert [m.role for m in dialogue.messages] == ["user", "user", "assistant", "user", "assistant"]
    assert dialogue.messages[3].text == "Yes, the raw file." and dialogue.messages[3].metadata == {
        "source": "simulator"
    }
    checks = dialogue.scores["daharness"].metadata["checks"]
    assert [(c["name"], c["passed"]) for c in checks] == [
        ("names the column", True),
        ("gives the count", False),
    ]


def test_each_sample_has_its_transcript_events_and_model_usage(react_run_dir: Path, tmp_path: Path) -> None:
    assert _export(react_run_dir, tmp_path / "log.eval").returncode == 0
    log = log_api.read_eval_log(str(tmp_path / "log.eval"), resolve_attachments=True)
    first = log.samples[0]
    steps = RunDir.open_for_reading(react_run_dir).read_trajectory(first.id).steps
    assert [e.event for e in first.events] == ["sample_init", "model", "tool", "model", "score"]
    init, call, tool, answer, score = first.events
    assert init.sample.input == first.input and init.sample.target == first.target
    assert [m.text for m in call.input] == [m["content"] for m in steps[0].messages]
    assert call.output.completion == steps[0].reply and call.model == "daharness/fake-model"
    assert call.output.usage.input_tokens == steps[0].usage["prompt_tokens"] > 0
    assert call.output.usage.output_tokens == steps[0].usage["completion_tokens"] > 0
    assert call.output.message.tool_calls[0].id == tool.id  # the reply that asked for the action
    assert tool.function == "python" and "savefig" in tool.arguments["code"]
    assert tool.result.splitlines()[0] == "(150, 5)" and tool.error is None
    assert tool.timestamp >= call.completed and tool.working_time == steps[1].observation.duration_s
    assert len(answer.input) == 3 and answer.output.completion.startswith("Thought: I now know")
    assert score.score.value == 0.0 and score.target == first.target
    prompt = sum(step.usage["prompt_tokens"] for step in steps[::2])
    usage = first.model_usage["daharness/fake-model"]
    assert usage.input_tokens == prompt and usage.output_tokens > 0 and usage.total_cost == 0.0
    dialogue = log.samples[-1]
    assert [e.event for e in dialogue.events] == ["sample_init", "info", "model", "info", "model", "score"]
    assert dialogue.events[3].data == {
        "content": "Yes, the raw file.",
        "question": "Do you mean in the raw file?",
    }


WORKFLOW_TASK = "dbt-cars-origin-model"  # its check script's output is a note of the harness
LOOK_AND_STOP = [
    'Thought: look\nAction: Bash(code="ls ~/projects/garage")',
    'Action: Terminate(output="done")',
]
INTERACTIVE_TASK = "affairs-01"


def test_workflow_and_interactive_samples_start_from_the_request(tmp_path: Path) -> None:
    """A workflow agent's first user message is an observation and a dialogue agent's prompt holds the
    system text: the sample's input is the task's request in both, and no message is a harness note."""
    workflow, interactive = load_suite("workflow"), load_suite("interactive")
    with FakeOpenAI() as server:
        model = ModelSettings(model="fake-model", base_url=server.base_url, api_key_env="NO_KEY")
        options = AgentSettings(model=model, cache_mode="off")
        server.responder = lambda request: LOOK_AND_STOP[
            min(sum(m["role"] == "assistant" for m in request["messages"]), 1)
        ]
        run_suite(workflow, make_agent("workflow", options), tmp_path / "workflow", ids=[WORKFLOW_TASK])
        server.responder = Script(interactive.tasks).respond
        run_suite(interactive, make_agent("base", options), tmp_path / "interactive", ids=[INTERACTIVE_TASK])
    for name, suite, task_id in (
        ("workflow", workflow, WORKFLOW_TASK),
        ("interactive", interactive, INTERACTIVE_TASK),
    ):
        assert _export(tmp_path / name, tmp_path / f"{name}.eval").returncode == 0
        sample = log_api.read_eval_log(str(tmp_path / f"{name}.eval"), resolve_attachments=True).samples[0]
        task = next(task for task in suite.tasks if task.id == task_id)
        assert sample.input == request_text(task), name
        assert sample.messages[-1].role == "assistant", name
        assert all(m.role != "system" or "check script" not in m.text for m in sample.messages)
        kinds = [e.event for e in sample.events]
        assert kinds[0] == "sample_init" and kinds[-1] == "score" and "model" in kinds, name
        assert sample.model_usage["daharness/fake-model"].output_tokens > 0, name
    workflow_sample = log_api.read_eval_log(
        str(tmp_path / "workflow.eval"), resolve_attachments=True
    ).samples[0]
    notes = [e.data for e in workflow_sample.events if e.event == "info"]
    assert notes and notes[-1]["note"].startswith("check script")  # the checks are in the transcript
    assert [e.event for e in workflow_sample.events].count("tool") == 1  # the Bash action


def test_a_run_from_daharness_0_1_exports(tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(OLD_RUN, old)
    done = _export(old, tmp_path / "logs")
    assert done.returncode == 0, done.stderr
    log = log_api.read_eval_log(str(tmp_path / "logs" / "old.eval"))
    assert [s.id for s in log.samples] == ["1", "2", "3", "4", "5"]
    third = log.samples[2]
    assert third.scores["daharness"].value == 1.0 and third.target == "@sum_y[13]"
    assert [m.role for m in third.messages] == ["user", "assistant", "tool"]
    assert "time.sleep(3)" in third.messages[1].tool_calls[0].arguments["code"]
    assert third.messages[2].text.startswith("@sum_y[13]")
    broken = log.samples[4]
    assert broken.scores == {} and "reference solution is broken" in broken.error.message
    assert log.results.scores[0].scored_samples == 4
    began, ended = (datetime.fromisoformat(t) for t in (log.stats.started_at, log.stats.completed_at))
    assert (ended - began).total_seconds() == pytest.approx(
        build_report(RunDir.open_for_reading(old))["wall_time_s"]["elapsed"]
    )


def test_export_refuses_a_folder_that_is_no_run(tmp_path: Path) -> None:
    done = _export(tmp_path, tmp_path / "x.eval")
    assert done.returncode == 2 and "not a run directory" in done.stderr


def test_export_names_an_output_path_it_cannot_write(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    target = tmp_path / "file" / "log.eval"
    done = _export(Path(__file__).parent / "fixtures" / "old_run_v01", target)
    assert done.returncode == 2 and f"error: {target}: cannot write" in done.stderr, done.stderr


def test_a_desktop_agents_screens_export_as_images() -> None:
    """The screenshots a desktop agent sent (image parts of its messages) and those its trajectory keeps
    (each step's note) are Inspect images, in the conversation and in the model and info events."""
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageUser, ContentImage

    from daharness.core.observation import Observation
    from daharness.core.record import SampleRecord
    from daharness.core.runlog import TrajectoryFile
    from daharness.core.submission import ActionEvent, ModelCall, Note
    from daharness.export.inspect_events import events_of
    from daharness.export.inspect_log import messages_of

    png, jpeg = "data:image/png;base64,iVBORw0KGgo=", "/9j/4AAQSkZJRg=="
    observed = [
        {"role": "system", "content": "You drive a desktop."},
        {"role": "user", "content": [
            {"type": "text", "text": "Given the screenshot:"},
            {"type": "image_url", "image_url": {"url": png, "detail": "high"}},
        ]},
    ]  # fmt: skip
    steps = [
        Note(text="screen at step 1", data={"step": 1, "screenshot_jpeg": jpeg, "a11y_tree": "tag\tname"}),
        ModelCall(messages=observed, reply='```json\n{"action_type": "DONE"}\n```'),
        ActionEvent(
            kind="desktop", args={"action_type": "DONE"}, observation=Observation(kind="desktop", ok=True)
        ),
    ]
    trajectory = TrajectoryFile(id="gui-1", agent="desktop", steps=steps)
    record = SampleRecord(id="gui-1", status="scored", agent="desktop", started_at=datetime.now().isoformat(),
                          duration_s=1.0)  # fmt: skip
    messages = messages_of(trajectory, record, "vl-model")
    images = [part.image for m in messages if isinstance(m.content, list) for part in m.content
              if isinstance(part, ContentImage)]  # fmt: skip
    assert images == [png, f"data:image/jpeg;base64,{jpeg}"]
    assert messages[1].text == "Given the screenshot:" and messages[0].text == "You drive a desktop."
    screen = next(
        m for m in messages if isinstance(m, ChatMessageUser) and m.metadata == {"source": "screen"}
    )
    assert screen.text == "screen at step 1"
    events = events_of(trajectory, record, "vl-model", Sample(id="gui-1", input="drive"), None)
    model_input = next(e for e in events if e.event == "model").input
    assert isinstance(model_input[1].content[1], ContentImage) and model_input[1].content[1].image == png
    info = next(e for e in events if e.event == "info")
    assert info.data["screenshot"] == f"![screen at step 1](data:image/jpeg;base64,{jpeg})"
    assert "screenshot_jpeg" not in info.data and info.data["a11y_tree"] == "tag\tname"
    sample = EvalSample(id="gui-1", epoch=1, input="drive", target="", messages=messages, events=events)
    again = EvalSample.model_validate_json(sample.model_dump_json())
    assert [type(p).__name__ for p in again.messages[1].content] == ["ContentText", "ContentImage"]


class _ScreenshotAgent:
    """Sends two screenshots over two calls, as a desktop agent does: its calls name them by attachment."""

    name = "screens"

    def __init__(self, shots: list[bytes]) -> None:
        self.shots = shots

    def describe(self) -> dict:
        return {"name": self.name, "model": "vl-model"}

    def solve(self, task, sandbox):  # type: ignore[no-untyped-def]
        from daharness.core.submission import ModelCall, Submission, attachment_url

        def seen(step: int) -> dict:
            return {"role": "user", "content": [{"type": "text", "text": f"screen {step}"},
                    {"type": "image_url", "image_url": {"url": attachment_url(f"step-{step}.png"), "detail": "high"}}]}  # fmt: skip

        first = [{"role": "system", "content": "drive"}, seen(1)]
        second = [*first, {"role": "assistant", "content": "click"}, seen(2)]
        submission = Submission(answers=["@x[1]"])
        submission.trajectory += [
            ModelCall(messages=first, reply="click"),
            ModelCall(messages=second, reply="done"),
        ]
        submission.attachments = {
            "step-1.png": self.shots[0],
            "step-2.png": self.shots[1],
            "../out.png": b"no",
        }
        return submission


def test_the_screenshots_a_model_was_sent_are_kept_once_and_shown_in_each_call_in_order(
    tmp_path: Path,
) -> None:
    """The run keeps a sample's attachments in attachments/<id>/ (a name with a folder is left out), its
    trajectory names them, and the Inspect log shows each call's images as they were sent, in order."""
    import base64
    import io

    from PIL import Image

    shots = []
    for colour in ("red", "blue"):
        buffer = io.BytesIO()
        Image.new("RGB", (8, 8), colour).save(buffer, "PNG")
        shots.append(buffer.getvalue())
    suite = load_suite("closed-form")
    suite.tasks = suite.tasks[:1]
    run = tmp_path / "run"
    run_suite(suite, _ScreenshotAgent(shots), run)
    sample_id = suite.tasks[0].id
    kept = RunDir.open_for_reading(run).attachments_dir(sample_id)
    assert sorted(p.name for p in kept.iterdir()) == ["step-1.png", "step-2.png"]
    assert (
        not (run / "attachments" / "out.png").exists()
        and "base64" not in (run / "trajectories" / f"{sample_id}.json").read_text()
    )
    done = _export(run, tmp_path / "log.eval")
    assert done.returncode == 0, done.stderr
    sample = log_api.read_eval_log(str(tmp_path / "log.eval")).samples[0]
    calls = [event for event in sample.events if event.event == "model"]
    urls = [[part.image for m in call.input if isinstance(m.content, list) for part in m.content
             if part.type == "image"] for call in calls]  # fmt: skip
    as_sent = [f"data:image/png;base64,{base64.b64encode(shot).decode()}" for shot in shots]
    # Inspect's log keeps each image once, in the sample's attachments, however many calls show it
    assert len({url for call in urls for url in call}) == 2
    resolved = [[sample.attachments[url.removeprefix("attachment://")] for url in call] for call in urls]
    assert resolved == [as_sent[:1], as_sent]
    # training examples carry the images of their prompt as sent too
    from daharness.export.sft import examples

    example = next(examples(RunDir.open_for_reading(run)))
    assert example["messages"][1]["content"][1]["image_url"]["url"] == as_sent[0]
