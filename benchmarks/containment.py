"""Containment on this machine: what hostile agent code, big outputs and a slow model server can take.

Each measurement repeats an attack of issue 11 through the real bwrap sandbox (or the real model
client) and prints what it got, measured from the sandbox's control-group accounting and from file
sizes on disk rather than from timings where it can:

1. tmpfs: 3 GB written to /tmp and 2 GB to /dev/shm (before: 5 GB of host memory);
2. memory of many processes: 16 processes of 512 MB in a 2 GB sandbox (before: RLIMIT_AS was per process);
3. copy-out of four 1 GB sparse files (before: 4 GB of dense artifacts, 48 s);
4. 100k tiny files against the workspace quota (before: 393 MB of artifacts, a 1.4 MB record line);
5. a neighbour's CPU-bound work while another sandbox runs 60 busy loops, with and without cgroups
   (before: 0.33 s became 13.9 s);
6. host-side scoring of a 95 MB output CSV (before: 2 GB RSS and 44 s in the harness);
7. a model server that trickles its reply, against a 3 s request deadline (before: no end).

Run: python benchmarks/containment.py [--only 1,5]   (needs root for the cgroup figures)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from daharness.core.limits import Limits
from daharness.core.task import Task
from daharness.sandbox import BwrapSandbox, cgroups

TASK = Task(id="bench", suite="bench", family="workspace", instructions=["bench"])
MB = 1 << 20


def report(name: str, **figures: object) -> None:
    print(json.dumps({"measure": name, **figures}), flush=True)


def tmpfs() -> None:
    with BwrapSandbox(TASK, Limits(step_timeout_s=300)) as box:
        box.bash("head -c 3G /dev/zero > /tmp/fill; head -c 2G /dev/zero > /dev/shm/fill")
        sizes = box.bash("stat -c %s /tmp/fill /dev/shm/fill").stdout.split()
        group = box._cgroup
        report(
            "tmpfs",
            written_mb=[int(s) // MB for s in sizes],
            sandbox_memory_peak_mb=group and (group.memory_peak_bytes() or 0) // MB,
            limits_mb={
                "/tmp": box.limits.tmp_mb,
                "/dev/shm": box.limits.shm_mb,
                "memory": box.limits.memory_mb,
            },
        )


def many_processes() -> None:
    with BwrapSandbox(TASK, Limits(memory_mb=2048, step_timeout_s=120)) as box:
        hog = "python3 -c 'import time; x = bytearray(512 << 20); time.sleep(3)'"
        box.bash(f"for i in $(seq 16); do {hog} & done; wait")
        group = box._cgroup
        report(
            "16 processes x 512 MB in a 2048 MB sandbox",
            sandbox_memory_peak_mb=group and (group.memory_peak_bytes() or 0) // MB,
            oom_kills=group and group.oom_kills(),
            kernel_alive=box.python("print(1)").stdout == "1\n",
        )


def sparse_copy_out() -> None:
    with BwrapSandbox(TASK, Limits(workspace_mb=8192)) as box, tempfile.TemporaryDirectory() as scratch:
        box.bash("for i in 1 2 3 4; do truncate -s 1G sparse$i.bin; done")
        started = time.perf_counter()
        snapshot = box.snapshot(Path(scratch) / "copy")
        seconds = time.perf_counter() - started
        files = [Path(scratch) / "copy" / name for name in snapshot.files]
        report(
            "copy-out of 4 x 1 GB sparse files",
            seconds=round(seconds, 2),
            apparent_mb=sum(f.stat().st_size for f in files) // MB,
            on_disk_mb=round(sum(f.stat().st_blocks * 512 for f in files) / MB, 2),
        )
    with BwrapSandbox(TASK, Limits()) as box:  # the default quota: 2048 MB of apparent size
        step = box.bash("for i in 1 2 3 4; do truncate -s 1G sparse$i.bin; done")
        report("4 x 1 GB sparse files under the default quota", stopped_by=step.error and step.error.name)


def tiny_files() -> None:
    with BwrapSandbox(TASK, Limits(step_timeout_s=300)) as box, tempfile.TemporaryDirectory() as scratch:
        step = box.bash("mkdir t; cd t; for i in $(seq 100000); do : > $i; done")
        on_disk = (
            sum(1 for _ in (box.workspace.root / "t").iterdir()) if (box.workspace.root / "t").exists() else 0
        )
        started = time.perf_counter()
        box.python("pass")
        step_seconds = time.perf_counter() - started
        snapshot = box.snapshot(Path(scratch) / "copy")
        report(
            "100k tiny files",
            stopped_by=step.error and step.error.name,
            files_when_stopped=on_disk,
            files_collected=len(snapshot.files),
            left_over_quota=sum(e.kind == "over_quota" for e in snapshot.skipped),
            next_step_s=round(step_seconds, 3),
            changed_listed=len(step.files_changed),
        )


NEIGHBOUR = """
import json, time
from daharness.core.limits import Limits
from daharness.core.task import Task
from daharness.sandbox import BwrapSandbox
task = Task(id="n", suite="b", family="workspace", instructions=["b"])
with BwrapSandbox(task, Limits()) as busy, BwrapSandbox(task, Limits()) as neighbour:
    alone = neighbour.python("import time\\nt = time.perf_counter(); sum(range(10**7)); print(time.perf_counter() - t)")
    busy.bash("for i in $(seq 60); do setsid sh -c 'while :; do :; done' & done")
    time.sleep(2)
    crowded = neighbour.python("t = time.perf_counter(); sum(range(10**7)); print(time.perf_counter() - t)")
    print(json.dumps({"alone_s": round(float(alone.stdout), 3), "beside_60_loops_s": round(float(crowded.stdout), 3)}))
"""


def cpu_neighbour() -> None:
    for label, env in (("cgroups", {}), ("rlimits only", {"DAHARNESS_CGROUPS": "off"})):
        done = subprocess.run(
            [sys.executable, "-c", NEIGHBOUR], capture_output=True, text=True, env={**os.environ, **env}
        )
        figures = (
            json.loads(done.stdout.strip().splitlines()[-1])
            if done.returncode == 0
            else {"error": done.stderr[-300:]}
        )
        report(f"neighbour's 10**7-step loop, {label}", **figures)


def big_scoring() -> None:
    import numpy as np
    import pandas as pd

    from daharness.core.backend import Snapshot
    from daharness.core.runlog import ScoringSettings
    from daharness.core.submission import Submission
    from daharness.core.task import Gold, GoldFile, ScorerSpec
    from daharness.runs.bounded_scoring import score_within_limits

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "files").mkdir()
        rng = np.random.default_rng(3)
        pd.DataFrame(rng.random((1_000_000, 5)), columns=list("abcde")).to_csv(
            root / "files" / "out.csv", index=False
        )
        pd.DataFrame(rng.random((10, 5)), columns=list("abcde")).to_csv(root / "gold.csv", index=False)
        size = (root / "files" / "out.csv").stat().st_size // MB
        task = Task(
            id="t", suite="b", family="workspace", instructions=["b"],
            scorers=[ScorerSpec(name="table", options={"file": "out.csv"})],
            gold=Gold(files=[GoldFile(name="out.csv", source=root / "gold.csv")]),
        )  # fmt: skip
        snapshot = Snapshot(root / "files", frozenset({"out.csv"}), ("out.csv",))
        for label, limits in (
            ("default caps", Limits()),
            ("file cap raised to 128 MB", Limits(score_file_mb=128)),
        ):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            started = time.perf_counter()
            score = score_within_limits(task, Submission(answers=[""]), snapshot, ScoringSettings(), limits)
            report(
                f"table scorer on a {size} MB output, {label}",
                seconds=round(time.perf_counter() - started, 2),
                value=score.value,
                explanation=score.explanation[:120],
                harness_peak_rss_growth_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
                - before,
            )


def trickling_model() -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
    from fake_openai import FakeOpenAI, Trickle

    from daharness.models import ModelClient, ModelSettings, ModelUnavailableError

    with FakeOpenAI() as server:
        server.script([Trickle(interval_s=2.0)] * 3)
        client = ModelClient(ModelSettings(model="m", base_url=server.base_url, timeout_s=3, max_retries=2))
        started = time.perf_counter()
        try:
            client.complete([{"role": "user", "content": "hi"}])
            outcome = "answered"
        except ModelUnavailableError as exc:
            outcome = str(exc).split(": ", 1)[1]
        report(
            "model server trickling 1 byte / 2 s, timeout_s=3, max_retries=2",
            seconds=round(time.perf_counter() - started, 1),
            outcome=outcome,
        )


MEASURES = [tmpfs, many_processes, sparse_copy_out, tiny_files, cpu_neighbour, big_scoring, trickling_model]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", help="comma-separated measure numbers, e.g. 1,5")
    chosen = parser.parse_args().only
    report(
        "machine",
        cgroups={name: h.describe() for name, h in cgroups.hierarchies().items()},
        cpus=os.cpu_count(),
    )
    for number, measure in enumerate(MEASURES, start=1):
        if chosen and str(number) not in chosen.split(","):
            continue
        measure()


if __name__ == "__main__":
    main()
