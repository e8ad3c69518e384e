"""Prompts and reply parsing of the DABench ReAct agent (InfiAgent-DABench, Tables 21, 23 and 25)."""

from __future__ import annotations

import re
from dataclasses import dataclass

TOOL_NAME = "python_code_sandbox"
TOOL_DESCRIPTION = f"{TOOL_NAME}[input]: this tool can help to run python script with python code as input."

# Table 23 of the paper, with the output folder pointed at a writable place of our workspace.
EVALUATION_PROMPT = """Answer the following questions as best you can. You have access to the following tools: {tool_description}. Use the following format: Question: the input question you must answer
Thought: you should always think about what to do
Action: the action to take, should be one of [{tool_names}]
Action Input: the input to the action
Observation: the result of the action
... (this Thought/Action/Action Input/Observation can repeat N times)
#Thought: I now know the final answer
Final Answer: the final answer to the original input question
For all outputs in code, THE print() function MUST be called
For example, when you need to call df.head(), please use print(df.head())
If you have any files outputted write them to "{output_dir}"
Do not use things like plot.show() as it will not work instead write them out "{output_dir}"
Be mindful that when creating a piece of code for execution in {tool_names},
DO NOT try to predict or complete its output.
Cease generating further and await the execution outcome from {tool_names}.
Please note that any text beginning with
"[SYSTEM NOTIFICATION] Running the above tool ..." is an output from the {tool_names} execution.
You should NEVER try to generate it.
Here is an example of using the {tool_names}:
Action: {tool_names}
Action Input:
```python
print('hello world')
```
Now Begin!
Question: {instruction}
Thought:"""

# Table 21: how an observation is handed back.
OBSERVATION_PROMPT = "Observation: [SYSTEM NOTIFICATION] Running the above tool with the following response: {output}\nThought:"
FORMAT_REMINDER = (
    "Observation: Your reply had neither an Action with an Action Input nor a Final Answer. "
    "Use the format: Action: {tool_names} / Action Input: ```python ...``` or Final Answer: ...\nThought:"
)

# Table 25: the reformat step.
REFORMAT_PROMPT = """You should strictly follow the output requirements in the Format part. Here're some examples: \\Format{{
@shapiro_wilk_statistic[test_statistic]
@shapiro_wilk_p_value[p_value]
where "test_statistic" is a number between 0 and 1 representing the Shapiro-Wilk test statistic. Rounding off the answer to two decimal places.
where "p_value" is a number between 0 and 1 representing the p-value from the Shapiro-Wilk test. Rounding off the answer to four decimal places.}}
\\Answer{{
@shapiro_wilk_statistic[0.56]
@shapiro_wilk_p_value[0.0002]}}
\\Format{{
@total_votes_outliers_num[outlier_num]
where "outlier_num" is an integer representing the number of values considered outliers in the total_votes column.}}
\\Answer{{
@total_votes_outliers[10]}}.

Your answer should contain all the "@answer_name[answer]" in the order mentioned, each "answer" should be in the range of value as required.

The format requirements of this question is:
{format}. Please give your answer:"""

_ACTION = re.compile(r"^[ \t#*]*Action[ \t]*:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_ACTION_INPUT = re.compile(r"^[ \t#*]*Action[ \t]*Input[ \t]*:[ \t]*(.*)", re.MULTILINE | re.DOTALL)
_FINAL = re.compile(r"Final[ \t]*Answer[ \t]*:[ \t]*(.*)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


@dataclass
class ReactReply:
    thought: str
    action: str | None
    code: str | None
    final_answer: str | None


def parse_react_reply(reply: str) -> ReactReply:
    """Read a ReAct reply. An action, when present, wins: the words "final answer" inside a thought, or
    a final answer the model wrote after its action (predicting the observation), do not end the task."""
    text = reply.split("\nObservation:", 1)[0]  # in case the server ignored the stop sequence
    action_match = _ACTION.search(text)
    input_match = _ACTION_INPUT.search(text)
    thought = text[: action_match.start()].strip() if action_match else text.strip()
    if action_match and input_match:
        raw = input_match.group(1)
        fenced = _FENCE.search(raw)
        code = fenced.group(1) if fenced else raw.split("\nFinal Answer", 1)[0]
        return ReactReply(thought, action_match.group(1).strip().strip("`"), code.strip("\n"), None)
    final = _FINAL.search(text)
    if final and final.group(1).strip():
        return ReactReply(thought, None, None, final.group(1).strip())
    return ReactReply(thought, None, None, None)
