"""Whole runs through the command line with agent code that attacks the harness itself: what a sample
does stays in that sample's record, the run completes, and nothing of it outlives the run."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
from collections import Counter
from pathlib import Path

from helpers import cli, dabench_suite, group_processes, records_of, sandbox_groups, wait_until

from daharness.sandbox.scratch import PREFIX

FIXTURE_SUITE = f"dabench:{Path(__file__).parents[1] / 'fixtures' / 'runnable' / 'questions.jsonl'}"

DEEP_AND_ODD = """
import os
home = os.open(".", os.O_RDONLY)
with open(b"bad-\\xffname.txt", "wb") as handle:  # a name that is not UTF-8
    handle.write(b"odd")
os.mkdir("deep")
os.chdir("deep")
for _ in range(1100):  # deeper than Python's recursion limit, longer than the kernel's path limit
    os.mkdir("level")
    os.chdir("level")
open("bottom.txt", "w").write("x")
os.fchdir(home)
"""

SPARSE_AND_MANY = """
import os
with open("sparse.bin", "wb") as handle:  # 300 MB of nothing
    handle.truncate(300 << 20)
os.mkdir("tiny")
for number in range(1500):
    open(f"tiny/{number:04d}.txt", "w").write("x")
"""


def _env(scratch: Path) -> dict[str, str]:
    scratch.mkdir(exist_ok=True)
    return {**os.environ, "DAHARNESS_TMPDIR": str(scratch)}


def _run(suite: str, out: Path, scratch: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli("run", "--suite", suite, "--agent", "reference", "--out", str(out), *extra),
        capture_output=True,
        text=True,
        env=_env(scratch),
    )


def test_deep_trees_and_names_that_are_not_utf8_stay_in_their_sample(tmp_path: Path) -> None:
    suite = dabench_suite(tmp_path / "suite", [DEEP_AND_ODD, "pass"])
    out, scratch = tmp_path / "run", tmp_path / "scratch"
    done = _run(suite, out, scratch)
    assert done.returncode == 0, done.stderr
    records = {r["id"]: r for r in records_of(out)}
    assert {i: (r["status"], r["score"]["value"]) for i, r in records.items()} == {
        "1": ("scored", 1.0),
        "2": ("scored", 1.0),
    }
    # the odd name is recorded with its byte escaped, and saved under that name
    assert "bad-\\xffname.txt" in records["1"]["artifacts"]
    assert (out / "artifacts" / "1" / "bad-\\xffname.txt").read_bytes() == b"odd"
    assert (
        "bad-\\xffname.txt"
        in json.loads((out / "trajectories" / "1.json").read_text())["steps"][0]["observation"][
            "files_changed"
        ]
    )
    # every workspace and copy of it was removed, the 1100-deep tree included
    assert list(scratch.iterdir()) == []
    again = _run(suite, out, scratch)
    assert again.returncode == 0 and "2 of 2 samples already done" in again.stderr


def test_sparse_files_stay_sparse_and_artifacts_are_capped_with_a_notice(tmp_path: Path) -> None:
    suite = dabench_suite(tmp_path / "suite", [SPARSE_AND_MANY])
    out = tmp_path / "run"
    done = _run(suite, out, tmp_path / "scratch")
    assert done.returncode == 0, done.stderr
    line = (out / "samples.jsonl").read_text()
    record = json.loads(line)
    assert record["status"] == "scored" and len(line) < 100_000
    assert len(record["artifacts"]) == 1000 and record["artifacts"][0] == "sparse.bin"
    assert record["extra"]["notices"][0].startswith("501 files not kept in artifacts/ (caps: 1000 files")
    saved = [p for p in (out / "artifacts" / "1").rglob("*") if p.is_file()]
    assert len(saved) == 1000
    # measured on disk: 300 MB of apparent size, but the holes stayed holes
    assert (out / "artifacts" / "1" / "sparse.bin").stat().st_size == 300 << 20
    assert sum(p.stat().st_blocks * 512 for p in saved) < 20 << 20


def test_after_kill_9_the_next_daharness_removes_the_dead_runs_folders_and_groups(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    process = subprocess.Popen(
        cli(
            "run",
            "--suite",
            FIXTURE_SUITE,
            "--agent",
            "reference",
            "--out",
            str(tmp_path / "run"),
            "--ids",
            "3",
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(scratch),
    )
    wait_until(lambda: list(scratch.glob(f"{PREFIX}{process.pid}-*/daharness-3-*")), what="the workspace")
    process.send_signal(signal.SIGKILL)
    process.wait()
    left = list(scratch.glob(f"{PREFIX}{process.pid}-*"))
    assert len(left) == 1  # what kill -9 leaves: workspace, hooks and kernel copies
    wait_until(lambda: group_processes(sandbox_groups(process.pid)) == [], what="the sandbox to die")
    doctor = subprocess.run(cli("doctor"), capture_output=True, text=True, env=_env(scratch))
    assert doctor.returncode == 0, doctor.stderr
    assert f"removed the folder of a dead run: {left[0]}" in " ".join(doctor.stdout.split())
    assert not left[0].exists() and sandbox_groups(process.pid) == []


def test_twelve_random_kill_9_then_resume_give_the_records_of_a_clean_run(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    clean = _run(FIXTURE_SUITE, tmp_path / "clean", scratch)
    assert clean.returncode == 0, clean.stderr
    out = tmp_path / "killed"
    rng = random.Random(11)
    for _ in range(12):
        process = subprocess.Popen(
            cli("run", "--suite", FIXTURE_SUITE, "--agent", "reference", "--out", str(out)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_env(scratch),
        )
        started = lambda p=process: (out / "run.json").exists() or p.poll() is not None  # noqa: E731
        wait_until(started, what="the run to start")
        try:  # a random moment: starting, mid-sample, writing artifacts or a record
            process.wait(timeout=rng.uniform(0.0, 2.5))
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
    final = _run(FIXTURE_SUITE, out, scratch)
    assert final.returncode == 0, final.stderr

    def outcome(run_dir: Path) -> dict[str, tuple]:
        latest = {r["id"]: r for r in records_of(run_dir)}
        return {
            i: (r["status"], r["score"] and r["score"]["value"], r["answer"], sorted(r["artifacts"]))
            for i, r in latest.items()
        }

    assert outcome(out) == outcome(tmp_path / "clean")
    counts = Counter(r["id"] for r in records_of(out) if r["status"] == "scored")
    assert set(counts.values()) == {1}  # no sample scored twice
    assert [p.name for p in scratch.iterdir()] == []  # every killed run's folder was reaped


def test_three_samples_at_once_get_distinct_users_and_namespaces(tmp_path: Path) -> None:
    who = "import os, time\nprint(os.getuid(), os.readlink('/proc/self/ns/pid'), os.readlink('/proc/self/ns/net'))\ntime.sleep(2)"
    suite = dabench_suite(tmp_path / "suite", [who, who, who])
    out = tmp_path / "run"
    done = _run(suite, out, tmp_path / "scratch", "-j", "3")
    assert done.returncode == 0, done.stderr
    seen = []
    for record in records_of(out):
        trajectory = json.loads((out / "trajectories" / f"{record['id']}.json").read_text())
        seen.append(trajectory["steps"][0]["observation"]["stdout"].split()[:3])
    uids, pid_spaces, net_spaces = zip(*seen, strict=True)
    assert len(set(pid_spaces)) == len(set(net_spaces)) == 3
    assert os.readlink("/proc/self/ns/pid") not in pid_spaces
    assert "0" not in uids and (os.getuid() != 0 or len(set(uids)) == 3)


def test_the_html_report_escapes_what_the_agent_wrote(tmp_path: Path) -> None:
    suite = dabench_suite(tmp_path / "suite", ["pass"], answer="<script>alert('pwned')</script> @n[1]")
    out = tmp_path / "run"
    done = _run(suite, out, tmp_path / "scratch")
    assert done.returncode == 0, done.stderr
    html = (out / "report.html").read_text()
    assert "<script>alert(" not in html and "&lt;script&gt;alert(" in html
