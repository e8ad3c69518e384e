"""Limits of the sandbox as a whole (memory with tmpfs, processes, threads, CPU), the workspace quota,
and what is copied out, measured from the sandbox's own control groups and from file sizes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LIMITS, Exits, command_lines, followed_box
from helpers import wait_until

from daharness.core.limits import Limits
from daharness.core.task import Task
from daharness.sandbox import BwrapSandbox, cgroups
from daharness.sandbox.quota import QuotaGuard, measure


def _needs(controller: cgroups.Controller) -> None:
    if controller not in cgroups.hierarchies():
        pytest.skip(f"this machine gives sandboxes no {controller} control group (see `daharness doctor`)")


def test_tmpfs_and_processes_together_stay_within_the_sandbox_memory(task: Task) -> None:
    _needs("memory")
    limits = Limits(memory_mb=600, tmp_mb=200, shm_mb=100, step_timeout_s=60)
    with BwrapSandbox(task, limits) as box:
        tmp = box.bash("head -c 400M /dev/zero > /tmp/fill; stat -c %s /tmp/fill")
        shm = box.bash("head -c 300M /dev/zero > /dev/shm/fill; stat -c %s /dev/shm/fill")
        # each fill stops at its tmpfs's size (less what is there already: /tmp holds a font cache)
        assert "No space left on device" in tmp.stderr and (199 << 20) < int(tmp.stdout) <= 200 << 20
        assert "No space left on device" in shm.stderr and (99 << 20) < int(shm.stdout) <= 100 << 20
        # six processes of 150 MB each, beside 300 MB of tmpfs: more than 600 MB together
        box.bash(
            "for i in 1 2 3 4 5 6; do python3 -c 'import time; x = bytearray(150 << 20); time.sleep(5)' & done;"
            " wait"
        )
        group = box._cgroup
        assert group is not None
        assert group.oom_kills() >= 1  # the limit was reached, and held:
        assert group.memory_peak_bytes() <= 600 << 20  # type: ignore[operator]
        assert box.python("print(6 * 7)").stdout == "42\n"


def test_the_process_limit_counts_threads_too(box: BwrapSandbox) -> None:
    threads = box.python(
        "import threading, time\nstarted = 0\ntry:\n    for _ in range(500):\n"
        "        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n        started += 1\n"
        "except RuntimeError as exc:\n    print(started, exc)"
    )
    started, _, message = threads.stdout.partition(" ")
    assert int(started) < LIMITS.processes and "can't start new thread" in message


def test_sixty_busy_loops_left_running_are_all_under_the_sandboxs_cpu_share_and_cap(task: Task) -> None:
    """Every loop, setsid or not, is in the sandbox's CPU group, which has the same weight as any other
    sandbox's and a quota of half a CPU (what that does to a neighbour's speed: benchmarks/limits.py)."""
    _needs("cpu")
    with BwrapSandbox(task, Limits(cpus=0.5)) as box:
        started = box.bash("for i in $(seq 60); do setsid sh -c 'while :; do :; done' & done; echo started")
        assert started.stdout == "started\n"
        group = box._cgroup
        assert group is not None
        folder = group.folders["cpu"]
        wait_until(lambda: len(command_lines(box.processes())) >= 60, what="sixty loops")

        def in_cpu_group() -> set[int]:
            return {int(pid) for pid in (folder / "cgroup.procs").read_text().split()}

        # (compared until a moment when no process starts or ends between the two listings)
        wait_until(lambda: set(box.processes()) <= in_cpu_group(), what="every process in the CPU group")
        assert len(in_cpu_group()) >= 60
        if cgroups.hierarchies()["cpu"].version == 1:
            assert (folder / "cpu.cfs_quota_us").read_text().strip() == "50000"
            assert (folder / "cpu.cfs_period_us").read_text().strip() == "100000"
            assert (folder / "cpu.shares").read_text().strip() == "1024"
        else:
            assert (folder / "cpu.max").read_text().split() == ["50000", "100000"]
        pids = box.processes()
    # and the loops died with the sandbox (sixty killed processes may take a moment to finish exiting:
    # one that is exiting has already released its command line and reads as an empty one)
    wait_until(lambda: command_lines(pids) == [], 10, what="every loop gone")


def test_the_workspace_quota_stops_a_writer_and_the_agent_can_clean_up(task: Task) -> None:
    limits = Limits(workspace_mb=50, workspace_files=300, step_timeout_s=60)
    with BwrapSandbox(task, limits) as box:
        box.python("kept = 1")
        assert measure(box.workspace.root).entries == 1
        many = box.bash("mkdir many; for i in $(seq 5000); do : > many/$i; done; echo finished")
        assert many.error is not None and many.error.name == "WorkspaceQuotaExceeded" and many.restarted
        assert "delete files to get back under the quota" in many.stderr
        assert box.python("print(kept)").error is not None  # every process was stopped, the kernel too
        # still over quota, but not growing: the agent may look and clean up
        cleanup = box.bash("ls many | wc -l > /dev/null; rm -r many; echo cleaned")
        assert cleanup.error is None and cleanup.stdout == "cleaned\n"
        sparse = box.bash("truncate -s 1G sparse.bin")  # apparent size counts: 1 GB of holes is 1 GB
        assert sparse.error is not None and sparse.error.name == "WorkspaceQuotaExceeded"
        box.bash("rm sparse.bin")
        fine = box.python("open('ok.txt', 'w').write('x' * 1000); print('ok')")
        assert fine.error is None and fine.stdout == "ok\n"


def test_a_quota_kill_holds_the_lock_from_measurement_to_kill(tmp_path: Path) -> None:
    """The sandbox restarts its kernel under the lock the guard holds while it measures and kills, so a
    kill that lasts (it repeats until the group is empty) cannot reach a kernel started meanwhile (the
    cleanup step after a quota stop was once itself stopped)."""
    lock = threading.RLock()
    acting, finish = threading.Event(), threading.Event()

    def kill(reason: str) -> None:
        acting.set()
        finish.wait(10)

    guard = QuotaGuard(tmp_path, max_bytes=1024, max_entries=100, on_exceeded=kill, lock=lock)
    (tmp_path / "big.bin").write_bytes(b"x" * 4096)
    watcher = threading.Thread(target=guard.check)
    watcher.start()
    assert acting.wait(10)
    assert not lock.acquire(blocking=False)  # a restart would wait here
    finish.set()
    watcher.join(10)
    assert lock.acquire(blocking=False)
    lock.release()
    assert guard.times_exceeded == 1 and guard.check() is None  # over quota, but not growing: no kill


class _ListedBefore:
    """What os.scandir gives, listed in full before the test deletes some of it: the entries that a
    scan reads from the kernel in one batch and then stats one by one while `rm -r` deletes them."""

    def __init__(self, entries: list[os.DirEntry[str]]) -> None:
        self.entries = entries

    def __enter__(self) -> _ListedBefore:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __iter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self.entries)


def test_files_deleted_during_a_count_count_towards_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A count capped at the quota stops at the same number when files vanish between the folder's
    listing and their stat (the agent's cleanup after a quota stop): it once read 311 entries against a
    cap of 302, which the guard took for growth, and it stopped the cleanup."""
    for number in range(400):
        (tmp_path / f"{number:03}").touch()
    scandir = os.scandir

    def listed_then_deleted(path: str) -> _ListedBefore:
        entries = sorted(scandir(path), key=lambda entry: entry.name)
        for entry in entries[250:350]:  # deleted after the listing, before their stat
            os.unlink(entry.path)
        return _ListedBefore(entries)

    monkeypatch.setattr(os, "scandir", listed_then_deleted)
    assert measure(tmp_path, stop_after=301).entries == 302
    monkeypatch.undo()
    assert measure(tmp_path).entries == 300  # the 100 deleted ones are gone


def test_copy_out_keeps_holes_and_leaves_what_is_over_the_quota_out(task: Task, tmp_path: Path) -> None:
    limits = Limits(workspace_mb=2048, workspace_files=100)
    with BwrapSandbox(task, limits) as box:
        box.python("open('a-holes.bin', 'wb').truncate(512 << 20)\nopen('a-holes.bin', 'r+b').write(b'data')")
        box.workspace.root.joinpath("extra").mkdir()
        for number in range(150):  # more than the quota, written behind the watcher's back
            box.workspace.root.joinpath("extra", f"{number:03d}").write_text("x")
        snapshot = box.snapshot(tmp_path / "copy")
    copied = tmp_path / "copy" / "a-holes.bin"
    assert copied.stat().st_size == 512 << 20 and copied.stat().st_blocks * 512 < 1 << 20
    assert copied.open("rb").read(4) == b"data"
    over = [entry.path for entry in snapshot.skipped if entry.kind == "over_quota"]
    assert len(snapshot.files) == 1 + 100 and len(over) == 51  # data.csv, a-holes.bin and 99 others
    assert "data.csv" in snapshot.files


def test_links_fifos_and_sockets_are_not_copied_out(task: Task, tmp_path: Path) -> None:
    with BwrapSandbox(task, LIMITS) as box:
        made = box.python(
            "import os, socket\nos.symlink('/etc/passwd', 'passwd')\nos.mkfifo('pipe')\n"
            "s = socket.socket(socket.AF_UNIX)\ns.bind('sock')\n"
            "open('plain.txt', 'w').write('x')"
        )
        assert made.error is None, made.error
        snapshot = box.snapshot(tmp_path / "copy")
    kinds = {entry.path: entry.kind for entry in snapshot.skipped}
    assert kinds == {"passwd": "symlink", "pipe": "fifo", "sock": "socket"}
    assert snapshot.files == {"data.csv", "plain.txt"}
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["data.csv", "plain.txt"]


def test_a_file_over_the_size_limit_is_refused_even_as_holes(task: Task) -> None:
    with BwrapSandbox(task, Limits()) as box:  # the default limit: 1 GB per file
        big = box.bash("truncate -s 1536M big.bin")  # killed by SIGXFSZ, or told EFBIG
        assert big.exit_status != 0 and (box.workspace.root / "big.bin").stat().st_size == 0
        python = box.python("open('big.bin', 'wb').truncate(1536 << 20)")
        assert python.error is not None and "too large" in python.error.value.lower()
        assert (box.workspace.root / "big.bin").stat().st_size == 0


def test_the_hook_and_kernel_folders_are_read_only(box: BwrapSandbox) -> None:
    for target in ("/daharness-hooks/sitecustomize.py", "/daharness-kernel/daharness_kernel/server.py"):
        attempt = box.bash(f"echo 'import os; os.system(\"evil\")' >> {target}")
        assert attempt.exit_status != 0, target
        assert "Read-only file system" in attempt.stderr or "Permission denied" in attempt.stderr
    assert box.bash("touch /daharness-hooks/extra.py").exit_status != 0


def test_nul_bytes_are_error_observations_and_the_kernel_keeps_its_variables(box: BwrapSandbox) -> None:
    box.python("kept = 41")
    for observation in (
        box.bash("echo a\0b"),
        box.write_file("a\0b.txt", "x"),
        box.sql("shop\0.db", "select 1"),
        box.python("x = 1\0"),
    ):
        assert observation.error is not None and not observation.restarted, observation
    assert box.python("print(kept + 1)").stdout == "42\n" and box.restarts == 0


def test_no_orphan_survives_from_children_that_ignore_sigterm_double_fork_or_setsid(task: Task) -> None:
    box = followed_box(task)
    box.bash("(trap '' TERM HUP INT; exec sleep 601) > /dev/null 2>&1 &")
    box.bash("( (sleep 602 > /dev/null 2>&1 &) & )")
    box.python("import os\nif os.fork() == 0:\n    os.setsid()\n    os.execvp('sleep', ['sleep', '603'])")
    wanted = {"sleep 601", "sleep 602", "sleep 603"}

    def sleepers() -> set[str]:
        return {line.strip() for line in command_lines(box.processes())} & wanted

    wait_until(lambda: sleepers() == wanted, what="three stubborn sleeps")
    with Exits(box.processes()) as exits:
        box.close()
        assert exits.running() == []


def test_another_harness_closing_its_sandbox_leaves_this_ones_kernel_alive(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom daharness.sandbox import BwrapSandbox\nfrom daharness.core.task import Task\n"
        "box = BwrapSandbox(Task(id='u', suite='s', family='workspace', instructions=['x']))\nbox.start()\n"
        "print(box.python('import os; print(os.getuid())').stdout.strip(), flush=True)\n"
        "for line in sys.stdin:\n"
        "    if line.strip() == 'close':\n        box.close()\n        print('closed', flush=True)\n"
        "    else:\n        print(box.python(line).stdout.strip(), flush=True)\n"
    )
    harnesses = [
        subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    first, second = harnesses
    uids = [h.stdout.readline().strip() for h in harnesses]  # type: ignore[union-attr]
    assert "0" not in uids and (os.getuid() != 0 or uids[0] != uids[1])
    first.stdin.write("close\n")  # type: ignore[union-attr]
    first.stdin.flush()  # type: ignore[union-attr]
    assert first.stdout.readline().strip() == "closed"  # type: ignore[union-attr]
    second.stdin.write("print(6 * 7)\n")  # type: ignore[union-attr]
    second.stdin.flush()  # type: ignore[union-attr]
    assert second.stdout.readline().strip() == "42"  # type: ignore[union-attr]
    for harness in harnesses:
        harness.stdin.close()  # type: ignore[union-attr]
        harness.wait(timeout=30)


def test_killing_a_group_waits_for_its_processes_to_have_exited() -> None:
    # A control group stops listing a process when it begins to exit; freeing 512 MB then takes it far
    # longer than a kill takes to send. A listing that drops the process at once stands for that group.
    holder = "import sys; b = b'x' * (512 << 20); print('ready', flush=True); sys.stdin.read()"
    with subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as child:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        listings = iter([[child.pid]])
        with Exits([child.pid]) as exits:
            cgroups.kill_until_gone(lambda: next(listings, []), wait_s=10)
            assert exits.running() == []  # it is a zombie by now, its memory given back
        assert child.wait() == -signal.SIGKILL
