"""The `workflow` agent: DA-Code's action agent for Spider2-V style tasks, in the task's home folder.

Actions: Bash, Python, SQL and Terminate as in `da-agent`, plus CreateFile (write a whole text file from a
fenced block) and EditFile (replace one exact piece of a file's text), since workflow tasks are mostly
about editing project files (dbt models, YAML, notebooks) and saving workbooks in place.
"""

from __future__ import annotations

import json

from daharness.agents.da_actions import ACTION_SPACE, ANY_FENCE, DA_GRAMMAR, ActionGrammar, DaAction
from daharness.agents.da_agent import SYSTEM_PROMPT, DaAgent, DaAgentOptions, render_observation
from daharness.core.backend import SandboxBackend
from daharness.core.observation import Observation
from daharness.core.registry import agent
from daharness.core.submission import Submission

FILE_ACTIONS = """
## CreateFile action
CreateFile(file_path="path/to/file"):
```
the whole content of the file
```
Writes the text to the file (creating folders, overwriting the file). Example:
CreateFile(file_path="projects/shop/models/orders.sql"):
```sql
select * from {{ ref('raw_orders') }}
```

## EditFile action
EditFile(file_path="path/to/file", old=\"\"\"exact text now in the file\"\"\", new=\"\"\"its replacement\"\"\")
Replaces the one place where `old` occurs in the file with `new` (it fails when `old` occurs zero or
several times: then quote more of the surrounding text).
"""
WORKFLOW_NOTES = """You work in the task's home folder {workdir} (also ~): the files the task names are there, under the
same paths as in the task. There is no screen: desktop applications (a spreadsheet program, VS Code, a browser,
JupyterLab) are not available, so edit and save files with code instead (openpyxl for workbooks, nbformat and
`jupyter nbconvert --to notebook --execute --inplace` or nbclient for notebooks, the `dbt` command for dbt
projects). What matters is the state of the files when you terminate."""
WORKFLOW_GRAMMAR = ActionGrammar(
    {**DA_GRAMMAR.required, "CreateFile": ("file_path", "content"), "EditFile": ("file_path", "old")},
    {**DA_GRAMMAR.fenced, "CreateFile": ("content", ANY_FENCE)},
)


@agent(
    "workflow",
    "Spider2-V action agent: Bash, Python, SQL, CreateFile, EditFile, Terminate (needs --model)",
    options=DaAgentOptions,
)
class WorkflowAgent(DaAgent):
    name = "workflow"
    default_max_steps = 30
    system_prompt = SYSTEM_PROMPT.replace("# ACTIONS", WORKFLOW_NOTES + "\n\n# ACTIONS")
    action_space = ACTION_SPACE + FILE_ACTIONS
    grammar = WORKFLOW_GRAMMAR

    def _execute(self, action: DaAction, sandbox: SandboxBackend, submission: Submission) -> str:
        if action.kind == "CreateFile":
            path, content = action.args["file_path"], action.args["content"]
            observation = sandbox.write_file(path, content if content.endswith("\n") else content + "\n")
            submission.act("write_file", {"path": path, "content": content}, observation)
            return render_observation(observation) if not observation.ok else f"Wrote {path}."
        if action.kind == "EditFile":
            return self._edit(action.args, sandbox, submission)
        return super()._execute(action, sandbox, submission)

    def _edit(self, args: dict[str, str], sandbox: SandboxBackend, submission: Submission) -> str:
        """Replace the single occurrence of `old` in the file, in the sandbox (so its user owns the result)."""
        path, old, new = args["file_path"], args["old"], args.get("new", "")
        code = (
            "import json, pathlib, sys\n"
            f"path, old, new = json.loads({json.dumps(json.dumps([path, old, new]))})\n"
            "text = pathlib.Path(path).read_text()\n"
            "count = text.count(old)\n"
            "if count != 1:\n"
            "    sys.exit(f'EditFile: the text to replace occurs {count} times in {path}')\n"
            "pathlib.Path(path).write_text(text.replace(old, new, 1))\n"
            "print(f'Edited {path}.')\n"
        )
        observation: Observation = sandbox.bash(f"python - <<'DAHARNESS_EDIT'\n{code}DAHARNESS_EDIT")
        submission.act("edit_file", {"path": path, "old": old, "new": new}, observation)
        return render_observation(observation)
