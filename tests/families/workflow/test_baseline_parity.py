"""Spider2-V's baseline agent beside the release's own functions (`release_agent.py` imports them from
../shared/spider2v-public): the same reply strings, accessibility trees and tables through both, and the
official mode agrees on every one; the corrected mode differs only where the release splits code at `;`."""

from __future__ import annotations

import io
import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from daharness.core.desktop import ScreenElement
from daharness.core.scoring import ScoringContext
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.workflow.baseline import tree
from daharness.families.workflow.baseline.replies import parse_code, parse_json_actions, parse_marked_code
from daharness.families.workflow.baseline.templates import find_checkout, read_release
from daharness.families.workflow.scorers.infeasible import infeasible
from daharness.families.workflow.scorers.inputs import LAST_ACTION, EvaluatorOptions, Source, evaluate
from daharness.sandbox.desktop.table import keeps, linearize
from daharness.sandbox.desktop.views import mark_elements

from .release_agent import RELEASE, release_agent, release_score

pytestmark = pytest.mark.skipif(
    not RELEASE.is_dir(), reason="the release (../shared/spider2v-public) is not here"
)
FENCE = "```"

PYAUTOGUI_REPLIES = [
    "DONE",
    "  WAIT\n",
    "FAIL",
    "```DONE```",
    "I am done.\n```\nDONE\n```",
    "Click it.\n```python\npyautogui.click(100, 200)\n```",
    "```python\npyautogui.click(100, 200)\n```\n```DONE```",
    "```python\npyautogui.click(100, 200)\nDONE\n```",
    "```python\npyautogui.typewrite('hello')\npyautogui.press('enter')\n```\n```python\ntime.sleep(1)\n```",
    '```python\npyautogui.typewrite("SELECT 1;")\n```',
    "```\npyautogui.hotkey('ctrl', 's'); pyautogui.press('enter')\n```",
    "```python\nfor i in range(3):\n    pyautogui.press('a'); pyautogui.press('b')\n```",
    "Then ```WAIT```",
    "The task is done. DONE",
    "I cannot do it: FAIL",
    "```bash\necho hi\n```",
    '```json\n{"action_type": "CLICK"}\n```',
    "no code at all",
    "",
    "```python\n\n```",
    "```python\npyautogui.click(1, 2)```",
    "```pyautogui.click(1, 2)```",
    "```import time\ntime.sleep(2)\n```",
    "```python\nWAIT\n```\n```python\npyautogui.scroll(-3)\n```",
    "```python\npyautogui.click(5, 5)\nFAIL\n```",
    "```python\nx = 1\n```\nsome text\n```python\ny = 2\n```\n```FAIL```",
    "DONE;",
    ";;;",
    "```python\npyautogui.write('a;b;c')\n```\n```DONE```",
    "```python\n  indented = 1\n```",
    "```python\npyautogui.click(10, 10)",
    "``` python\npyautogui.click(3, 4)\n```",
    "```PYTHON\npyautogui.click(3, 4)\n```\n```done```",
    "```python\nprint('DONE')\n```",
    "```\nDONE\nWAIT\n```",
    "Text ```inline``` more ```WAIT```",
]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield release_agent(tmp_path_factory.mktemp("tiktoken"), patch)


@pytest.mark.parametrize("reply", PYAUTOGUI_REPLIES)
def test_pyautogui_replies_read_as_the_release_reads_them(release: Any, reply: str) -> None:
    assert parse_code(reply, "official") == release.parse_code_from_string(reply)


def test_the_corrected_mode_differs_only_where_a_semicolon_was_split() -> None:
    differing = [r for r in PYAUTOGUI_REPLIES if parse_code(r, "corrected") != parse_code(r, "official")]
    assert differing and all(";" in reply for reply in differing)
    assert parse_code('```python\npyautogui.typewrite("SELECT 1;")\n```', "corrected") == [
        'pyautogui.typewrite("SELECT 1;")'
    ]
    assert parse_code('```python\npyautogui.typewrite("SELECT 1;")\n```', "official") == [
        'pyautogui.typewrite("SELECT 1\n")'  # the release's reading: the string is cut, the code breaks
    ]
    looped = "```python\nfor i in range(3):\n    pyautogui.press('a'); pyautogui.press('b')\n```"
    assert parse_code(looped, "corrected") == [
        "for i in range(3):\n    pyautogui.press('a'); pyautogui.press('b')"
    ]


MARKS = [[10, 20, 30, 40], [100, 100, 51, 21], [0, 0, 1, 1]]
SOM_REPLIES = [
    "```python\npyautogui.click(index_1)\n```",
    "Click index_2 then ```python\npyautogui.click(index_2)\npyautogui.click(index_2)\n```",
    "```python\npyautogui.click(index_4)\n```",  # no such mark: not bound
    "```python\npyautogui.dragTo(index_3)\n```\n```DONE```",
    "```WAIT```",
    "index_1 is the button. DONE",
    "```python\npyautogui.click(index_0)\n```",
    "```python\npyautogui.typewrite('index_2;')\n```",
    "```python\npyautogui.moveTo(index_1); pyautogui.click(index_3)\nFAIL\n```",
]


@pytest.mark.parametrize("reply", SOM_REPLIES)
def test_set_of_mark_replies_bind_the_marks_as_the_release_does(release: Any, reply: str) -> None:
    assert parse_marked_code(
        reply, [tuple(m) for m in MARKS], "official"
    ) == release.parse_code_from_som_string(reply, MARKS)


JSON_REPLIES = [
    "DONE",
    " FAIL ",
    '```json\n{"action_type": "CLICK", "x": 1, "y": 2}\n```',
    '```json\n{"action_type": "TYPING", "text": "a"}\n```\n```json\n{"action_type": "PRESS", "key": "enter"}\n```',
    '```\n{"action_type": "SCROLL", "clicks": -3}\n```',
    '{"action_type": "DONE"}',
    '```json\n{"action_type": "FAIL"}\n```',
    "```json\n{'action_type': 'CLICK'}\n```",  # not JSON: the release returns its message
    "no action here",
    '```json\n{"action_type": "WAIT"}\n```\nthen ```json\n[1, 2]\n```',
    '```json {"action_type": "CLICK"} ```',
    '```json\n"WAIT"\n```',
]


@pytest.mark.parametrize("reply", JSON_REPLIES)
def test_computer_13_replies_read_as_the_release_reads_them(release: Any, reply: str) -> None:
    ours = parse_json_actions(reply)
    try:
        theirs = release.parse_actions_from_string(reply)
    except ValueError as raised:  # the release raises: its agent keeps no actions and an empty thought
        assert ours.unreadable and ours.actions == [] and ours.error == str(raised)
        return
    if isinstance(theirs, str):  # a block that is not JSON: the release returns the message as "actions"
        assert ours.actions == [] and ours.error == theirs and not ours.unreadable
    else:
        assert ours.actions == theirs and ours.error is None


# ---- accessibility trees ---------------------------------------------------------------------------------

STATE = "{uri:deskat:state.at-spi.gnome.org}"
COMPONENT = "{uri:deskat:component.at-spi.gnome.org}"
TAGS = ["push-button", "menu-item", "label", "entry", "table-cell", "document-frame", "image", "filler", "panel",
        "heading", "link", "paragraph", "section", "check-box", "toggle-button", "frame", "text", "unknown",
        "uiimage", "scroll-bar"]  # fmt: skip
STATES = ["showing", "visible", "enabled", "editable", "expandable", "checkable", "focused", "sensitive"]


def random_tree(seed: int, size: int = 120) -> str:
    """An accessibility tree as the release's server writes it (XML): tags, names, texts (whitespace
    too), states, images, positions before, on and past the screen, sizes of 0 and more."""
    rng = random.Random(seed)
    root = ET.Element("desktop-frame", {"name": "main"})
    nodes = [root]
    for _ in range(size):
        attributes = {"name": rng.choice(["", "", "OK", "File", "Run cell", "a b", "Ünïcode"])}
        attributes |= {f"{STATE}{s}": "true" for s in rng.sample(STATES, rng.randint(0, len(STATES)))}
        if rng.random() < 0.9:  # a component: a position and a size
            x, y = rng.choice([-5, 0, 3, 700, 1919, 1920, 2500]), rng.choice([-1, 0, 15, 500, 1079, 1200])
            width, height = rng.choice([0, 1, 30, 200, 900]), rng.choice([0, 1, 20, 300])
            attributes |= {
                f"{COMPONENT}screencoord": f"({x}, {y})",
                f"{COMPONENT}size": f"({width}, {height})",
            }
        if rng.random() < 0.2:
            attributes["image"] = "true"
        node = ET.SubElement(rng.choice(nodes), rng.choice(TAGS), attributes)
        node.text = rng.choice([None, None, None, " ", "42 boxes\n", "  padded  ", "x" * rng.randint(1, 300)])
        nodes.append(node)
    return ET.tostring(root, encoding="unicode")


def trees(count: int = 12) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(xml, elements_of(xml)) for xml in map(random_tree, range(count))]


def elements_of(xml: str) -> list[dict[str, Any]]:
    """The elements of an XML tree as daharness's desktop reads them (dicts in document order)."""
    found = []
    for node in list(ET.fromstring(xml).iter())[1:]:
        states = [
            key.removeprefix(STATE)
            for key, value in node.attrib.items()
            if key.startswith(STATE) and value == "true"
        ]
        element = {"tag": node.tag, "name": node.get("name", ""), "text": node.text or "", "states": states,
                   "image": node.get("image") == "true"}  # fmt: skip
        if (coords := node.get(f"{COMPONENT}screencoord")) and (size := node.get(f"{COMPONENT}size")):
            (x, y), (width, height) = (
                json.loads(coords.replace("(", "[").replace(")", "]")),
                json.loads(size.replace("(", "[").replace(")", "]")),
            )
            element |= {"x": x, "y": y, "width": width, "height": height}
        found.append(element)
    return found


@pytest.mark.parametrize(("xml", "elements"), trees(), ids=[f"tree-{n}" for n in range(12)])
def test_the_node_filter_and_the_table_are_the_releases(release: Any, xml: str, elements: list[dict]) -> None:
    from mm_agents.accessibility_tree_wrap.heuristic_retrieve import filter_nodes

    theirs = filter_nodes(ET.fromstring(xml), "ubuntu", check_image=True)
    ours = [element for element in map(ScreenElement.model_validate, elements) if keeps(element)]
    assert len(ours) == len(theirs) > 0
    assert linearize(ours) == release.linearize_accessibility_tree(theirs, add_index=False)
    assert linearize(ours, index=True) == release.linearize_accessibility_tree(theirs, add_index=True)


def test_the_filter_keeps_what_daharness_left_out_before(release: Any) -> None:
    """The three differences of the earlier filter, each on one node of the release's tree."""
    from mm_agents.accessibility_tree_wrap.heuristic_retrieve import filter_nodes

    shown = {f"{STATE}showing": "true", f"{STATE}visible": "true", f"{STATE}enabled": "true"}
    nodes = [
        ("image", {"name": "", "image": "true"}, None),  # an image without a name or text
        ("push-button", {"name": "Far"}, None),  # right of the screen's edge
        ("paragraph", {"name": ""}, "   "),  # whitespace text
    ]
    root = ET.Element("desktop-frame")
    for x, (tag, attributes, text) in zip((10, 2600, 30), nodes, strict=True):
        node = ET.SubElement(root, tag, {**attributes, **shown, f"{COMPONENT}screencoord": f"({x}, 5)",
                                         f"{COMPONENT}size": "(10, 10)"})  # fmt: skip
        node.text = text
    assert len(filter_nodes(root, "ubuntu", check_image=True)) == 3
    assert all(
        keeps(ScreenElement.model_validate(e)) for e in elements_of(ET.tostring(root, encoding="unicode"))
    )


def _long_table(rows: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ["cell", "Ünïcode", "数据", "emoji 🙂", "tab\tin", "x" * 40, "'quoted'", "<|endoftext|>"[:-1]]
    return "\n".join(
        f"table-cell\t{rng.choice(words)}{i}\t({i}, {i * 2})\t(30, 20)\t{rng.choice(words)!r}"
        for i in range(rows)
    )


@pytest.mark.parametrize(("rows", "limit", "seed"), [(10, 5000, 0), (2000, 5000, 1), (3000, 5000, 2),
                                                     (400, 100, 3), (50, 7, 4), (1200, 4999, 5)])  # fmt: skip
def test_the_table_is_cut_at_the_releases_token_count(release: Any, rows: int, limit: int, seed: int) -> None:
    table = _long_table(rows, seed)
    assert tree.trim(table, limit) == release.trim_accessibility_tree(table, limit)


def test_the_encoding_needs_no_network_and_is_gpt4s() -> None:
    import tiktoken

    # the same ranks tiktoken's own cl100k_base has (tiktoken checks the file's SHA-256 when it loads it)
    assert tree.gpt4_encoding().encode("What's the next step?") == [3923, 596, 279, 1828, 3094, 30]
    assert tiktoken.__version__ >= "0.12"


def _screenshot(seed: int) -> bytes:
    rng = random.Random(seed)
    image = Image.new("RGB", (1920, 1080), "white")
    draw = ImageDraw.Draw(image)
    for _ in range(60):
        x, y = rng.randrange(1900), rng.randrange(1060)
        draw.rectangle(
            (x, y, x + rng.randrange(5, 300), y + rng.randrange(5, 200)),
            fill=tuple(rng.choices(range(256), k=3)),
        )
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("seed", range(4))
def test_set_of_mark_boxes_numbers_and_pixels_are_the_releases(release: Any, seed: int) -> None:
    from mm_agents.accessibility_tree_wrap.heuristic_retrieve import draw_bounding_boxes, filter_nodes

    xml, elements = trees(seed + 1)[seed]
    png = _screenshot(seed)
    marks, drawn, image = draw_bounding_boxes(
        filter_nodes(ET.fromstring(xml), "ubuntu", check_image=True), png
    )
    rows = [e for e in map(ScreenElement.model_validate, elements) if keeps(e)]
    marked_png, marked = mark_elements(png, rows)
    assert [[e.x, e.y, e.width, e.height] for e in marked] == marks and marks
    assert linearize(marked, index=True) == release.linearize_accessibility_tree(drawn, add_index=True)
    ours, theirs = Image.open(io.BytesIO(marked_png)), Image.open(io.BytesIO(image))
    assert ours.mode == theirs.mode and ours.tobytes() == theirs.tobytes()


# ---- the prompt texts ----------------------------------------------------------------------------------------


def test_the_templates_are_read_from_the_checkout_without_running_it(release: Any) -> None:
    from mm_agents.prompt_templates import ACTION_SPACE_PROMPTS, OBSERVATION_SPACE_PROMPTS, SYSTEM_PROMPT

    root = find_checkout(RELEASE / "examples" / "excel")
    assert root == RELEASE.resolve()
    texts = read_release(root)
    assert texts.system == SYSTEM_PROMPT
    assert (
        texts.action_spaces == ACTION_SPACE_PROMPTS and texts.observation_spaces == OBSERVATION_SPACE_PROMPTS
    )


def test_a_template_that_is_not_literals_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    from daharness.core.errors import UserError

    folder = tmp_path / "mm_agents" / "prompt_templates"
    folder.mkdir(parents=True)
    for name in ("action_prompt.py", "observation_prompt.py"):
        (folder / name).write_text((RELEASE / "mm_agents" / "prompt_templates" / name).read_text())
    (folder / "system_prompt.py").write_text("import os\nSYSTEM_PROMPT = os.popen('id').read()\n")
    with pytest.raises(UserError, match=r"system_prompt.py line 2: no SYSTEM_PROMPT"):
        read_release(tmp_path)


# ---- FAIL ------------------------------------------------------------------------------------------------------

FAIL_CASES = [
    ["pyautogui.click(1, 2)", "FAIL"],
    ["pyautogui.click(1, 2)", "DONE"],
    ["FAIL"],
    ["DONE"],
    [],
    ["FAIL", "pyautogui.click(1, 2)"],
    ["WAIT"],
    [{"action_type": "FAIL"}],
    [{"action_type": "CLICK", "x": 1, "y": 1}, "FAIL"],
    ["pyautogui.click(1, 2)"],
]


def _context(actions: list[Any]) -> ScoringContext:
    submission = Submission()
    if actions:
        submission.evidence[LAST_ACTION] = actions[-1]
    task = Task(id="t", suite="s", family="workflow", instructions=["do"])
    return ScoringContext(task=task, submission=submission, files=None, mode="")


@pytest.mark.parametrize("actions", FAIL_CASES)
@pytest.mark.parametrize("metric", [0.0, 1.0])
def test_fail_scores_as_the_releases_evaluate(actions: list[Any], metric: float) -> None:
    feasible = evaluate(
        _context(actions), EvaluatorOptions(result=Source(kind="rule", value=1)), lambda r, e: (metric, "m")
    )
    assert feasible.value == release_score("compare_csv", metric, actions)
    assert infeasible(_context(actions), EvaluatorOptions()).value == release_score(
        "infeasible", metric, actions
    )
