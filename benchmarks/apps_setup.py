"""Spider2-V's applications on this machine: one Dagster, one Airflow and one Superset task of the shared
desktop tasks, each set up as a sample is (bwrap sandbox, the task's database server, its official
init.sh through the stand-ins, the health checks of its `*_webui_init` steps), run idle, then checked
(every process stopped, the setup's services started again, eval.sh).

Prints per task: setup time (sandbox start to the agent's first step; targets: Dagster <= 30 s, Airflow
and Superset <= 60 s), the whole sample's time, and its control group's peak memory (target <= 1.5 GB).
One task at a time (the machine has 2 cores). Needs scripts/setup-apps.sh.

Run: python benchmarks/apps_setup.py [--shared DIR] [--ids ID,ID,ID]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

from daharness.core.backend import SandboxBackend
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.workflow.apps import app_of, missing
from daharness.families.workflow.loader import spider2v_suite
from daharness.runs.pipeline import SandboxSettings, solve_and_collect

DEFAULT_IDS = {  # one task of each application whose services the setup starts
    "dagster": "28b33444-3b68-4147-94a1-5bf6cb276305",
    "airflow": "28467077-983e-4848-9ba3-75848872ee1e",
    "superset": "77df6495-2dd5-4318-a358-eb9b5ffb6671",
}
TARGET_S = {"dagster": 30.0, "airflow": 60.0, "superset": 60.0}
TARGET_MB = 1536


class StopwatchAgent:
    """Does nothing; notes when the agent's turn starts (the setup is over)."""

    name = "stopwatch"

    def __init__(self) -> None:
        self.started_at = 0.0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def solve(self, task: Task, sandbox: SandboxBackend) -> Submission:
        self.started_at = time.perf_counter()
        return Submission(stop_reason="idle")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=Path("/work/shared/spider2v-desktop"))
    parser.add_argument("--ids", default=",".join(DEFAULT_IDS.values()))
    args = parser.parse_args()
    suite = spider2v_suite(args.shared, {})
    wanted = args.ids.split(",")
    for task in [t for t in suite.tasks if t.id in wanted]:
        app = app_of(task) or "?"
        if problem := missing(app):
            print(f"{app} {task.id[:8]}: skipped, {problem}")
            continue
        agent, usage = StopwatchAgent(), {}
        start = time.perf_counter()
        _, snapshot = solve_and_collect(task, agent, SandboxSettings(), usage)
        total = time.perf_counter() - start
        shutil.rmtree(snapshot.root.parent, ignore_errors=True)
        setup = agent.started_at - start
        peak = usage.get("memory_peak_mb")
        verdict = "ok" if setup <= TARGET_S[app] and (peak or 0) <= TARGET_MB else "MISSED"
        print(
            f"{app:8} {task.id[:8]}: setup {setup:5.1f} s (target <= {TARGET_S[app]:.0f}), sample {total:5.1f} s "
            f"(with the checks' restart), peak memory {peak} MB (target <= {TARGET_MB}) {verdict}"
        )
    for task_id, why in suite.unsupported.items():
        if task_id in wanted:
            print(f"{task_id[:8]}: unsupported, {why}")


if __name__ == "__main__":
    main()
