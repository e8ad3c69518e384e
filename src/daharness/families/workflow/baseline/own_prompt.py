"""daharness's own wording of the baseline's prompt, for suites without a Spider2-V checkout (the built-in
one): the same placeholders, action spaces, observation spaces and step questions as the release's, written
here."""

from __future__ import annotations

from daharness.families.workflow.baseline.templates import PromptTexts

_OWN_SYSTEM = """You are an agent that carries out data science and data engineering tasks with the applications of a
Linux desktop. You know computers and the tools of data work well.
You work on a real Ubuntu desktop, one action at a time: each time you see the screen (as described below)
after your earlier actions, you answer with your next action, we carry it out, and you see the screen again;
until the task is done.

=====

How you act, and what you see:

{action_prompt}


{observation_prompt}

=====

Good to know:
1. The password of this computer is 'password' (for sudo).
2. The screen is ({screen_width}, {screen_height}) pixels.
3. Applications take time to react (running code, loading pages): use WAIT when you need to.
4. Use as few steps as you can.
5. Use the applications that are already open for you.
6. After an action that changes a lot (opening an application, clicking a button or a link), look at the
screen before going on: do not answer with a long chain of actions you have not seen the effect of.
7. Before you type, make sure the right window and field have the focus, and clear what is already there
if it should go.
8. Break the task into steps and do them one after another.
9. When an action has no effect, try another one instead of repeating it.
10. ANSWER ONLY WITH ACTIONS OF THE ACTION SPACE, NOTHING ELSE."""

_OWN_DONE = """Three special answers, each alone in its own block of 3 backticks:
- ```WAIT``` when you need to wait for the screen;
- ```FAIL``` when the task cannot be done (only when you are sure);
- ```DONE``` when the task is done."""

_OWN_PYAUTOGUI = f"""## Actions

You act with Python code that uses `pyautogui`, in a block of 3 backticks:
```python
pyautogui.click(100, 200)
```
{_OWN_DONE}

Remember:
0. `pyautogui` and `time` are imported for you; import anything else you use.
1. Do not use `pyautogui.locateCenterOnScreen` or `pyautogui.screenshot`: you see the screen already.
2. A block may hold several lines of code that act one after another, e.g.:
```
pyautogui.moveTo(100, 210)
pyautogui.dragTo(500, 200, button='left')
```
3. Put a short pause (`time.sleep(0.5)`) between actions of one block, and end a block after an action that
changes the screen a lot, to see what it did.
4. Each block runs on its own: nothing (variables, functions) is kept between blocks.
5. Work out coordinates from what you saw last.
6. Every block of 3 backticks is run as an action: write other code with other quotes."""

_OWN_PYAUTOGUI_SOM = (
    _OWN_PYAUTOGUI.replace(
        "\nRemember:",
        "\nThe name `index_N` stands for the centre (x, y) of the element marked N on the screen, e.g.\n"
        "```\npyautogui.click(index_3)\n```\nWe put the coordinates in for you.\n\nRemember:",
    )
    + "\n7. Prefer `index_N` to coordinates of your own for the marked elements."
)

_OWN_COMPUTER_13 = """## Actions

You act with JSON objects, each in its own block of 3 backticks marked json:
```json
{"action_type": "CLICK", "x": 120.5, "y": 300.0}
```
The actions and their fields (coordinates are screen pixels; a field marked optional may be left out):
- MOVE_TO: x, y
- CLICK: button ("left", "right" or "middle"; optional, left), x, y (optional, where the mouse is),
  num_clicks (1, 2 or 3; optional, 1)
- DRAG_TO: x, y (drags from where the mouse is, the left button held)
- SCROLL: clicks (positive up, negative down)
- TYPING: text
- PRESS: key (a key name of pyautogui: "enter", "tab", "a"...)
- HOTKEY: keys (a list of key names, e.g. ["ctrl", "c"])
- WAIT, FAIL (the task cannot be done), DONE (the task is done): no field, e.g.
```json
{"action_type": "DONE"}
```
Remember: only these actions are run (no code); every object needs its action_type and the fields that are
not optional; numbers as numbers (not sums); double quotes, as JSON wants; several actions may follow
each other, each in its own block."""

_OWN_TABLE = """The accessibility tree of the screen, pruned to the elements worth seeing, as a table of
tab-separated columns:
{header}
menu\tFile\t(10, 0)\t(50, 27)\t''
push-button\tRun\t(300, 40)\t(64, 30)\t''
... more rows ...
TAG is the element's kind, NAME its name, POSITION its top-left corner on the screen and SIZE its width and
height: the centre of an element at (100, 200) of size (40, 40) is (120, 220). TEXT is the text it holds
(a terminal's output, what an input field contains)."""

_TABLE_HEADER = "TAG\tNAME\tPOSITION (top-left x & y)\tSIZE (width & height)\tTEXT"

OWN_TEXTS = PromptTexts(
    origin="daharness",
    system=_OWN_SYSTEM,
    action_spaces={
        "computer_13": _OWN_COMPUTER_13,
        "pyautogui": _OWN_PYAUTOGUI,
        "pyautogui_som": _OWN_PYAUTOGUI_SOM,
    },
    observation_spaces={
        "screenshot": "## What you see\n\nAfter each action, a screenshot of the whole screen.",
        "a11y_tree": "## What you see\n\nAfter each action, " + _OWN_TABLE.format(header=_TABLE_HEADER),
        "screenshot_a11y_tree": "## What you see\n\nAfter each action, a screenshot of the whole screen, and "
        + _OWN_TABLE.format(header=_TABLE_HEADER)
        + "\nUse the table to find exact positions and texts, and the screenshot for the rest.",
        "som": "## What you see\n\nAfter each action, a screenshot of the whole screen on which the elements you "
        "can act on have a red box and a number, and "
        + _OWN_TABLE.format(header="INDEX\t" + _TABLE_HEADER)
        + "\nINDEX is the number of the element's box on the screenshot.",
    },
    task="\nYour task: {}",
    context="Documentation retrieved for this task:\n{}",
    steps={
        "screenshot": "Here is the screen now. What is your next action?",
        "a11y_tree": "Here is the screen's accessibility table now:\n{}\nWhat is your next action?",
        "screenshot_a11y_tree": "Here is the screen's accessibility table now, and its screenshot:\n{}\n"
        "What is your next action?",
        "som": "Here is the screen's accessibility table now, and its screenshot with the numbered boxes:\n{}\n"
        "What is your next action?",
    },
    no_action="(no valid action)",
    feedback={
        "intro": "Some actions of your last answer went wrong:\n",
        "body": "\nNone of your last answer's actions could be read.\n",
        "outro": "Look at what went wrong, and at the screen below, before your next action.",
        "code": "\nAction:\n```\n{}\n```\n",
        "json": "\nAction: {}\n",
        "failed": "It failed: {}\n",
        "warned": "It ran, with errors: {}\n",
    },
)
