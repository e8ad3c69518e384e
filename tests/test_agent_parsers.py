"""Parsers of agent replies: DA-Code actions and DABench ReAct steps, edge cases included."""

from __future__ import annotations

import pytest

from daharness.agents.da_actions import ActionSyntaxError, DaAction, parse_da_action
from daharness.families.closed_form.agent_format import parse_react_reply


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('Thought: list files\nAction: Bash(code="ls -l")', DaAction("Bash", {"code": "ls -l"})),
        # parentheses, commas and the other quote inside the value
        ("Action: Bash(code=\"echo '(a, b)' | wc -c\")", DaAction("Bash", {"code": "echo '(a, b)' | wc -c"})),
        # an escaped delimiter is unescaped, other backslashes stay as written
        (r'Action: Bash(code="grep -E \"a\\.b\" f.txt | sed \"s/\\t/,/g\"")',
         DaAction("Bash", {"code": r'grep -E "a\\.b" f.txt | sed "s/\\t/,/g"'})),
        ("Action: Bash(code='echo \"x\"')", DaAction("Bash", {"code": 'echo "x"'})),
        ('Action: Bash(code="""python -c "print((1, 2))" """)', DaAction("Bash", {"code": 'python -c "print((1, 2))" '})),
        ('Action: SQL(file_path="shop.db", command="SELECT a, b FROM t WHERE x IN (1, 2)", output="direct")',
         DaAction("SQL", {"file_path": "shop.db", "command": "SELECT a, b FROM t WHERE x IN (1, 2)", "output": "direct"})),
        ("Action: SQL(file_path=shop.db, command=\"select 1\", output=out.csv)",
         DaAction("SQL", {"file_path": "shop.db", "command": "select 1", "output": "out.csv"})),
        ('Action: Terminate(output="@mean[1.50] @ids[1, 2]")', DaAction("Terminate", {"output": "@mean[1.50] @ids[1, 2]"})),
        ("Terminate(output=result.csv)", DaAction("Terminate", {"output": "result.csv"})),
        # the last Action: section wins
        ('Action: Bash(code="ls")\nThought: no, better\nAction: Bash(code="pwd")', DaAction("Bash", {"code": "pwd"})),
    ],
)  # fmt: skip
def test_da_actions(reply: str, expected: DaAction) -> None:
    assert parse_da_action(reply) == expected


def test_python_action_takes_the_fenced_code_block() -> None:
    reply = (
        'Thought: compute\nAction: Python(file_path="./analysis.py"):\n```python\nimport pandas as pd\n'
        'print(pd.Series([1, 2]).agg(["sum", "mean"]))\ns = "```"  # fences in a string survive\nprint(s)\n```\n'
    )
    action = parse_da_action(reply)
    assert action is not None and action.kind == "Python"
    assert action.args["file_path"] == "./analysis.py"
    assert action.args["code"].splitlines() == [
        "import pandas as pd",
        'print(pd.Series([1, 2]).agg(["sum", "mean"]))',
        's = "```"  # fences in a string survive',
        "print(s)",
    ]
    assert parse_da_action('Action: Python(filepath="a.py", code="print(1)")') == DaAction(
        "Python", {"file_path": "a.py", "code": "print(1)"}
    )


@pytest.mark.parametrize(
    "reply", ['Action: Bash(code="ls', "Action: Python(file_path='a.py')", 'Action: SQL(command="select 1")']
)
def test_broken_actions_raise_syntax_errors(reply: str) -> None:
    with pytest.raises(ActionSyntaxError):
        parse_da_action(reply)


def test_no_action_is_none() -> None:
    assert parse_da_action("Thought: I am not sure what to do yet.") is None


def test_react_action_with_code_block() -> None:
    parsed = parse_react_reply(
        "Thought: load the data\nAction: python_code_sandbox\nAction Input:\n```python\nimport pandas as pd\nprint(1)\n```"
    )
    assert parsed.action == "python_code_sandbox"
    assert parsed.code == "import pandas as pd\nprint(1)"
    assert parsed.final_answer is None


def test_react_final_answer_ends_only_without_an_action() -> None:
    done = parse_react_reply("Thought: I now know the final answer\nFinal Answer: @mean[2.00]")
    assert done.final_answer == "@mean[2.00]" and done.code is None
    # "final answer" inside a thought that still carries an action is not the end
    not_done = parse_react_reply(
        "Thought: before the final answer I must check the mean.\nAction: python_code_sandbox\n"
        "Action Input: print(df.mean())\nFinal Answer: @mean[9]"
    )
    assert not_done.final_answer is None and not_done.code == "print(df.mean())"


def test_react_text_after_a_predicted_observation_is_ignored() -> None:
    parsed = parse_react_reply(
        "Action: python_code_sandbox\nAction Input:\n```python\nprint(2)\n```\nObservation: 2\nFinal Answer: 2"
    )
    assert parsed.code == "print(2)" and parsed.final_answer is None


def test_react_reply_with_neither_is_empty() -> None:
    parsed = parse_react_reply("I think the mean is about 3.")
    assert parsed.code is None and parsed.final_answer is None and parsed.thought
