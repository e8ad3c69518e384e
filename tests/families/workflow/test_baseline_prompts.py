"""The desktop agent's requests beside the release's `PromptAgent.predict`, step by step on the same screen
and the same scripted replies: every message (system prompt from the checkout's templates, the retrieved
documentation, the history of 3 steps, the current observation) has the same texts and the same images,
and each request carries the release's sampling. The screen is a still one (a screenshot and its
accessibility tree, as the desktop's controller gives them); the model is the scripted server."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from PIL import Image

from daharness.agents import AgentSettings, SampleLimits, make_agent
from daharness.core.desktop import DesktopView
from daharness.core.observation import Observation
from daharness.core.submission import ModelCall
from daharness.models import ModelSettings
from daharness.sandbox.desktop.views import build_view
from daharness.suites import load_suite

from .release_agent import RELEASE, release_agent, release_function
from .test_baseline_parity import _screenshot, elements_of, random_tree

pytestmark = pytest.mark.skipif(
    not RELEASE.is_dir(), reason="the release (../shared/spider2v-public) is not here"
)
EXAMPLES = RELEASE / "examples"

REPLIES = {
    "pyautogui": [
        "I click the first element.\n```python\npyautogui.click(index_1 if False else (10, 10))\n```",
        "Let me think about it first.",  # no action: the next request answers the same screen
        "```python\npyautogui.typewrite('SELECT 1;')\n```\n```WAIT```",
        "   ",
        "```python\npyautogui.press('enter')\n```",
        "```DONE```",
    ],
    "computer_13": [
        '```json\n{"action_type": "CLICK", "x": 10, "y": 10}\n```',
        '{"action_type": "MOVE_TO", "x": 5, "y": 5}',  # a reply that is JSON alone
        '```json\n{"action_type": "TYPING", "text": "a"}\n```\n```json\n{"action_type": "WAIT"}\n```',
        "```json\n{'bad': json}\n```",
        '```json\n{"action_type": "PRESS", "key": "enter"}\n```',
        "DONE",
    ],
}
SOM_REPLIES = [
    "```python\npyautogui.click(index_1)\n```",
    "Hmm.",
    "```python\npyautogui.click(index_2)\npyautogui.typewrite('x;y')\n```",
    "```python\npyautogui.moveTo(index_3)\n```",
    "```WAIT```",
    "```DONE```",
]


class StillScreen:
    """A sandbox whose desktop's screen does not change: what it shows, and the actions it was given."""

    workdir = "/home/user"

    def __init__(self, png: bytes, xml: str) -> None:
        self.png, self.elements, self.acted = png, elements_of(xml), []

    @property
    def desktop(self) -> StillScreen:
        return self

    def observe(self, observation: Any) -> DesktopView:
        return build_view(observation, None if observation == "a11y_tree" else self.png, self.elements, 0.0)

    def act(self, action: Any) -> Observation:
        self.acted.append(action)
        return Observation(kind="desktop")


def _official_requests(
    module: Any, observation: str, space: str, replies: list[str], instruction: str, context: str | None,
    png: bytes, xml: str,
) -> list[dict]:  # fmt: skip
    """The payloads the release's agent sends on the same still screen, run as lib_run_single runs it."""
    agent = module.PromptAgent(
        model="gpt-4o", action_space=space, observation_space=observation, execution_feedback=False,
        screen_size={"width": 1920, "height": 1080}, max_trajectory_length=3,
    )  # fmt: skip
    sent: list[dict] = []
    scripted = iter(replies)

    def call_llm(payload: dict) -> str:
        sent.append(json.loads(json.dumps(payload)))
        return next(scripted)

    agent.call_llm = call_llm
    agent.reset()
    obs: dict[str, Any] = {"screenshot": png, "accessibility_tree": xml}
    for _ in replies:
        _, actions = agent.predict(instruction, obs, context)
        if any(action in ("DONE", "FAIL") or (isinstance(action, dict) and action.get("action_type") in ("DONE", "FAIL"))
               for action in actions):  # fmt: skip
            break
    return sent


def _pixels(url: str) -> tuple[str, bytes]:
    image = Image.open(io.BytesIO(base64.b64decode(url.removeprefix("data:image/png;base64,"))))
    return image.mode, image.tobytes()


def _same_messages(ours: list[dict], theirs: list[dict]) -> None:
    assert [m["role"] for m in ours] == [m["role"] for m in theirs]
    for mine, official in zip(ours, theirs, strict=True):
        assert len(mine["content"]) == len(official["content"])
        for part, expected in zip(mine["content"], official["content"], strict=True):
            assert part["type"] == expected["type"]
            if part["type"] == "text":
                assert part["text"] == expected["text"]
            else:
                assert part["image_url"]["detail"] == expected["image_url"]["detail"] == "high"
                assert _pixels(part["image_url"]["url"]) == _pixels(expected["image_url"]["url"])


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield release_agent(tmp_path_factory.mktemp("tiktoken"), patch)


@pytest.mark.parametrize(
    ("observation", "space"),
    [
        ("screenshot_a11y_tree", "pyautogui"),
        ("a11y_tree", "pyautogui"),
        ("screenshot", "computer_13"),
        ("som", "pyautogui"),
        ("screenshot_a11y_tree", "computer_13"),
    ],
)
def test_each_request_is_the_releases(release: Any, observation: str, space: str) -> None:
    suite = load_suite(f"spider2v:{EXAMPLES}", rag=True)
    task = next(t for t in suite.tasks if "task.documentation" in t.prompt_texts)
    config = next(EXAMPLES.glob(f"*/{task.id}/{task.id}.json"))
    get_context = release_function(
        RELEASE / "agent_ref" / "run_spider2v_agent.py", "get_retrieved_context", os=os
    )
    context = get_context(str(config))
    instruction = json.loads(config.read_text())["instruction"]
    xml, png = random_tree(3), _screenshot(3)
    replies = SOM_REPLIES if observation == "som" else REPLIES[space]
    theirs = _official_requests(release, observation, space, replies, instruction, context, png, xml)

    screen = StillScreen(png, xml)
    with FakeOpenAI() as server:
        server.script([])
        scripted = iter(replies)
        server.responder = lambda request: next(scripted)
        settings = ModelSettings(model="fake-vl", base_url=server.base_url)
        run = AgentSettings(model=settings, cache_mode="off", limits=SampleLimits(max_steps=15))
        options = {"observation": observation, "action_space": space, "history": 3, "parsing": "official"}
        submission = make_agent("desktop", run, options).solve(task, screen)  # type: ignore[arg-type]
        requests = list(server.requests)
    assert len(requests) == len(theirs) == len(replies)
    for ours, official in zip(requests, theirs, strict=True):
        _same_messages(ours["messages"], official["messages"])
        assert (
            {k: ours[k] for k in ("temperature", "top_p", "max_tokens")}
            == {k: official[k] for k in ("temperature", "top_p", "max_tokens")}
            == {"temperature": 0.5, "top_p": 0.9, "max_tokens": 1500}
        )
    assert submission.stop_reason == "done" and submission.steps == len(replies)
    # the record: each call's messages as sent, the screenshots named by attachment, kept once each
    calls = [event for event in submission.trajectory if isinstance(event, ModelCall)]
    recorded = json.dumps([call.messages for call in calls])
    assert "data:image/png" not in recorded
    if observation != "a11y_tree":
        shown = [part["image_url"]["url"] for call in calls for m in call.messages for part in m["content"]
                 if part["type"] == "image_url"]  # fmt: skip
        assert shown and all(url.startswith("attachment:step-") for url in shown)
        assert set(submission.attachments) == {url.removeprefix("attachment:") for url in shown}


def test_a_run_that_sets_its_own_sampling_keeps_it(tmp_path: Path) -> None:
    from daharness.families.workflow.baseline.agent import with_release_sampling

    settings = with_release_sampling(ModelSettings(model="m", temperature=0.0, max_tokens=300))
    assert settings is not None
    assert (settings.temperature, settings.top_p, settings.max_tokens) == (0.0, 0.9, 300)


def test_after_a_reply_without_json_the_release_stops_and_daharness_goes_on(release: Any) -> None:
    """A computer_13 reply with no JSON at all: the release keeps an empty thought but no actions, and its
    next step fails its own assertion (the example ends in an error, without a result); daharness goes on,
    the history showing "No valid action" for that reply, as the release's history would."""
    xml, png = random_tree(1), _screenshot(1)
    replies = ["no JSON here", "DONE"]
    with pytest.raises(AssertionError, match="number of observations and actions"):
        _official_requests(release, "a11y_tree", "computer_13", replies, "do it", None, png, xml)
    task = load_suite(f"spider2v:{EXAMPLES}").tasks[0]
    with FakeOpenAI() as server:
        scripted = iter(replies)
        server.responder = lambda request: next(scripted)
        settings = ModelSettings(model="fake-vl", base_url=server.base_url)
        run = AgentSettings(model=settings, cache_mode="off")
        options = {"observation": "a11y_tree", "action_space": "computer_13", "parsing": "official"}
        submission = make_agent("desktop", run, options).solve(task, StillScreen(png, xml))  # type: ignore[arg-type]
        second = server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": [{"type": "text", "text": "No valid action"}]}
    assert submission.stop_reason == "done"
