"""Make the gold files of a workspace suite by running each task's reference solution.

For suite authors: after writing or changing a task's `solution.py`, run

    python scripts/make_workspace_gold.py src/daharness/families/workspace/suite [TASK_ID ...]

Each solution runs in a scratch copy of its task's `source/` folder; the files named in the task's
`outputs` are then copied into `gold/`, replacing their earlier versions; other gold files (such as
the hidden targets of ML tasks, written by the data export) are left alone. Charts are captured with the
matplotlib hook, so a saved `chart.png` also yields its data in `chart.png.json`. Review the diff.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CAPTURE = Path(__file__).resolve().parents[1] / "src" / "daharness" / "sandbox" / "chart_capture.py"
RUNNER = (
    "import importlib.util, os, runpy, sys\n"
    "if os.path.exists(sys.argv[1]):\n"
    "    spec = importlib.util.spec_from_file_location('chart_capture', sys.argv[1])\n"
    "    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); module.install('.')\n"
    "runpy.run_path(sys.argv[2], run_name='__main__')\n"
)


def make_gold(task_dir: Path) -> list[str]:
    task = json.loads((task_dir / "task.json").read_text())
    solution = task_dir / "solution.py"
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "work"
        shutil.copytree(task_dir / "source", work)
        if solution.is_file():
            command = [sys.executable, "-c", RUNNER, str(CAPTURE), str(solution)]
        else:
            command = ["bash", str(task_dir / "solution.sh")]
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"{task_dir.name}: solution failed\n{done.stderr}")
        gold = task_dir / "gold"
        gold.mkdir(exist_ok=True)  # other gold files (e.g. hidden ML targets) stay as they are
        copied = []
        for name in task.get("outputs", []):
            for produced in [work / name, work / f"{name}.json"]:
                if produced.is_file():
                    target = gold / produced.relative_to(work)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(produced, target)
                    copied.append(str(produced.relative_to(work)))
            if not (work / name).is_file():
                raise SystemExit(f"{task_dir.name}: the solution did not write {name}")
        if done.stdout.strip():
            (gold / "answer.txt").write_text(done.stdout.strip() + "\n")
        return copied


def main() -> None:
    suite = Path(sys.argv[1]).resolve()
    wanted = set(sys.argv[2:])
    for task_dir in sorted((suite / "tasks").iterdir()):
        if task_dir.is_dir() and (not wanted or task_dir.name in wanted):
            print(task_dir.name, make_gold(task_dir))


if __name__ == "__main__":
    main()
