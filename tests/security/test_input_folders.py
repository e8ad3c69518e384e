"""A hostile task folder tries to read the host through the paths its data names (issue 40, item 1).

End to end: a Spider2-V task folder whose setup copies `/proc/self/environ` (the harness's environment,
where its API key is) into the agent's home, run through the real command line in the real bwrap
sandbox by the reference agent, whose solution prints every file of its home. The harness runs with a
made-up key; it must appear nowhere in the run directory, and the task is refused with its reason, which
`suites check` lists and `run` notes.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

from helpers import cli, records_of

CHECK = "#!/bin/bash\necho ok\n"
CAT_HOME = 'cd ~ && for f in * .*; do [ -f "$f" ] && cat "$f"; done; echo done\n'


def _task(root: Path, task_id: str, source: str) -> None:
    """A task in the official layout whose setup copies `source` into the home as `copied`."""
    folder = root / "examples" / "attack" / task_id
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text("a\n1\n")
    (folder / "eval.sh").write_text(CHECK)
    (folder / "solution.sh").write_text(CAT_HOME)
    official = f"evaluation_examples/examples/attack/{task_id}"
    raw = {
        "id": task_id, "instruction": "Show what is in your home.", "tags": ["cli", "abstract"],
        "config": [{"type": "copyfile_from_host_to_guest",
                    "parameters": {"src": source.format(official=official), "dest": "/home/user/copied"}}],
        "evaluator": {"func": "check_include_exclude",
                      "result": {"type": "vm_script_output", "src": f"{official}/eval.sh", "dest": "/home/user/eval.sh"},
                      "expected": {"type": "rule", "rules": {"include": ["ok"]}}},
    }  # fmt: skip
    (folder / f"{task_id}.json").write_text(json.dumps(raw))


def test_a_task_that_copies_the_harness_environment_is_refused_and_leaks_nothing(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    _task(suite, "honest", "{official}/data.csv")
    _task(suite, "environ", "/proc/self/environ")
    _task(suite, "climb", "{official}/" + "../" * 20 + "etc/hostname")
    canary = f"sk-test-canary-{uuid.uuid4().hex}"
    env = {**os.environ, "OPENAI_API_KEY": canary, "DAHARNESS_LEAK_CANARY": canary}
    out = tmp_path / "run"
    done = subprocess.run(
        cli("run", "--suite", f"spider2v:{suite}", "--agent", "reference", "--out", str(out)),
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    records = {record["id"]: record for record in records_of(out)}
    assert set(records) == {"honest"}  # the two attacks never ran
    assert records["honest"]["score"]["value"] == 1.0
    assert "2 tasks cannot run here" in done.stderr
    leaked = [
        str(path.relative_to(out))
        for path in out.rglob("*")
        if path.is_file() and not path.is_symlink() and canary.encode() in path.read_bytes()
    ]
    assert leaked == []
    assert canary not in done.stdout + done.stderr
    check = subprocess.run(
        cli("suites", "check", f"spider2v:{suite}"),
        capture_output=True, text=True, env={**env, "COLUMNS": "400"}, timeout=300,
    )  # fmt: skip
    listed = check.stdout
    assert "environ" in listed and "'/proc/self/environ' is an absolute path" in listed, check.stdout
    assert "climb" in listed and "leads outside the suite folder" in listed, check.stdout
    assert canary not in check.stdout + check.stderr
