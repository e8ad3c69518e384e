"""Agent code tries to escape, exhaust or outlive its sandbox; each attempt must be contained."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from conftest import LIMITS, Exits, command_lines, followed_box
from helpers import wait_until

from daharness.core.task import Task, WorkspaceFile
from daharness.sandbox import BwrapSandbox, LocalSandbox


def test_no_network_not_even_the_hosts_loopback(box: BwrapSandbox) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    observation = box.python(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)")
    assert observation.error is not None and observation.error.name in {"ConnectionRefusedError", "OSError"}
    assert accepted == []
    dns = box.python("import socket\nsocket.getaddrinfo('example.com', 443)")
    assert dns.error is not None and dns.error.name == "gaierror"
    outside = box.python("import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3)")
    assert outside.error is not None and "unreachable" in outside.error.value.lower()
    server.close()


def test_writes_outside_the_workspace_fail_or_stay_private(box: BwrapSandbox, tmp_path: Path) -> None:
    marker = f"daharness-escape-{uuid.uuid4().hex}"
    for target in ("/etc/" + marker, "/usr/" + marker, "/" + marker, str(tmp_path / marker)):
        observation = box.python(f"open({target!r}, 'w').write('x')")
        assert observation.error is not None, target
        assert observation.error.name in {"PermissionError", "OSError", "FileNotFoundError"}, (
            observation.error
        )
        assert not Path(target).exists()
    private = box.python(f"open('/tmp/{marker}', 'w').write('x'); print('ok')")
    assert private.stdout == "ok\n"
    assert not Path("/tmp", marker).exists()  # the sandbox's /tmp is its own
    inside = box.python("open('result.csv', 'w').write('1'); print('ok')")
    assert inside.files_changed == ["result.csv"]
    assert (box.workspace.root / "result.csv").read_text() == "1"


def test_gold_files_run_directory_and_root_are_out_of_reach(
    box: BwrapSandbox, task: Task, tmp_path: Path
) -> None:
    gold = task.gold.files[0].source
    run_dir = tmp_path / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "samples.jsonl").write_text("{}\n")
    for secret in (gold, run_dir / "samples.jsonl", Path(__file__)):
        observation = box.python(f"print(open({str(secret)!r}).read())")
        assert observation.error is not None and observation.error.name == "FileNotFoundError", secret
    listing = box.python("import os\nos.listdir('/root')")
    assert listing.error is not None and listing.error.name == "PermissionError"
    search = box.bash(
        f"grep -r 'the gold answer' / 2>/dev/null | head -3; ls {task.gold.files[0].source.parent}"
    )
    assert "the gold answer" not in search.stdout
    assert box.python("import daharness").error is not None  # the package (with suite labels) is hidden


def test_environment_variables_do_not_pass_through(task: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fake-key-123")
    with BwrapSandbox(task, LIMITS) as box:
        assert box.python("import os\nprint(os.environ.get('OPENAI_API_KEY'))").stdout == "None\n"
        assert "sk-test-fake-key" not in box.bash("cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'").stdout
        names = set(box.bash("env | cut -d= -f1").stdout.split()) - {
            "PWD",
            "OLDPWD",
            "SHLVL",
            "_",
        }  # bash's own
        assert names == {"HOME", "LANG", "MKL_NUM_THREADS", "MPLBACKEND", "MPLCONFIGDIR", "OMP_NUM_THREADS",
                         "OPENBLAS_NUM_THREADS", "PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH",
                         "DAHARNESS_CHART_CAPTURE"}  # fmt: skip


def test_fork_bomb_is_stopped_by_the_process_limit(box: BwrapSandbox) -> None:
    identity = box.python("import os\nprint(os.getuid())")
    assert identity.stdout.strip() != "0"  # RLIMIT_NPROC does not bind root, so the sandbox never is
    bomb = box.python("import os\nwhile True:\n    os.fork()")
    assert bomb.error is not None and bomb.error.name == "BlockingIOError"
    # the bomb's processes go on forking in the background: the sandbox is restarted to end them
    assert bomb.restarted and "reached its limit of 48 processes" in bomb.stderr
    assert box.bash("echo alive").stdout == "alive\n"
    # children that sleep keep their slots; no more than the limit can exist
    held = box.python(
        "import os, time\nkids = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(600)\n"
        "        kids += 1\nexcept OSError:\n    pass\nprint(kids)"
    )
    assert 0 < int(held.stdout) < LIMITS.processes and held.restarted
    assert box.bash("echo alive").stdout == "alive\n"


def test_shell_fork_bomb_is_contained_and_cleaned_up(task: Task) -> None:
    box = BwrapSandbox(task, LIMITS)
    box.start()
    bomb = box.bash(":(){ :|:& };:", timeout=3)
    assert bomb.exit_status is not None or bomb.error is not None
    assert box.python("print(6 * 7)").stdout == "42\n"
    group = box._cgroup
    box.close()
    if group is not None:  # a control group can only be removed once no process is left in it
        assert not group.path.exists()


def test_memory_beyond_the_limit_is_refused(box: BwrapSandbox) -> None:
    plain = box.python("x = bytearray(8 << 30)")
    assert plain.error is not None and plain.error.name == "MemoryError"
    numpy = box.python("import numpy as np\nx = np.ones((40_000, 40_000))")
    assert numpy.error is not None and "MemoryError" in numpy.error.name
    assert box.python("y = bytearray(64 << 20); print(len(y))").stdout == f"{64 << 20}\n"


def test_infinite_loop_is_interrupted_and_state_survives(box: BwrapSandbox) -> None:
    box.python("kept = 'still here'")
    loop = box.python("while True:\n    pass", timeout=1)
    assert loop.timed_out and loop.error is not None and loop.error.name == "TimeoutError"
    assert not loop.restarted
    assert box.python("print(kept)").stdout == "still here\n"


def test_loop_that_blocks_the_interrupt_gets_the_kernel_restarted(box: BwrapSandbox) -> None:
    box.python("lost = 1")
    started = time.monotonic()
    stubborn = box.python(
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass", timeout=1
    )
    assert stubborn.restarted and stubborn.timed_out
    assert time.monotonic() - started < 10
    assert box.python("print(lost)").error.name == "NameError"  # type: ignore[union-attr]
    assert box.restarts == 1


def test_huge_output_is_cut_to_head_and_tail(box: BwrapSandbox) -> None:
    observation = box.python("print('a' * 50_000_000 + 'THE-END')")
    assert observation.truncated
    assert observation.stdout.startswith("aaaa") and observation.stdout.rstrip().endswith("THE-END")
    assert len(observation.stdout) < 2 * LIMITS.output_bytes
    assert "bytes of output cut" in observation.stdout
    shell = box.bash("head -c 100000000 /dev/zero | tr '\\0' 'b'; echo; echo tail-marker")
    assert shell.truncated and shell.stdout.rstrip().endswith("tail-marker")


def test_files_larger_than_the_limit_cannot_be_written(box: BwrapSandbox) -> None:
    observation = box.python("open('big.bin', 'wb').write(b'0' * (32 << 20))")
    assert observation.error is not None and "too large" in observation.error.value.lower()


def test_background_processes_die_with_the_sandbox(task: Task) -> None:
    box = followed_box(task)
    box.bash("nohup sleep 600 > /dev/null 2>&1 &")
    box.python("import subprocess\nsubprocess.Popen(['sleep', '600'], start_new_session=True)")
    box.bash("setsid sleep 600 < /dev/null > /dev/null 2>&1 &")

    def sleepers() -> list[str]:
        return [line for line in command_lines(box.processes()) if line.startswith("sleep 600")]

    wait_until(lambda: len(sleepers()) == 3, what="three background sleeps")
    with Exits(box.processes()) as exits:
        assert box.python("print(6 * 7)").stdout == "42\n"
        box.close()
        assert exits.running() == []  # every process the sandbox had has exited, detached ones included


def test_host_processes_are_invisible(box: BwrapSandbox) -> None:
    pids = box.python("import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")
    visible = eval(pids.stdout)
    assert len(visible) <= 4  # bwrap's init, the kernel, and what it started for this listing
    assert max(visible) < 100  # numbers of a fresh PID namespace
    assert "pytest" not in box.bash("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '").stdout
    host = os.getpid()
    kill = box.python(f"import os\nos.kill({host}, 9)")  # a host pid means nothing in the sandbox
    assert kill.error is not None and kill.error.name in {"ProcessLookupError", "PermissionError"}


def test_the_sandbox_is_refused_where_namespaces_are_missing(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", "closed-form", "--agent", "reference", "--limit", "1", "--out", str(tmp_path / "r")],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert (
        "bubblewrap cannot create namespaces here (bwrap: No permissions to create new namespace)"
        in done.stderr
    )
    assert "--sandbox unsafe-local" in done.stderr
    assert not (tmp_path / "r").exists()


def test_unsafe_local_runs_unisolated_and_says_so_on_every_run(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--suite", "closed-form", "--agent", "reference", "--ids", "0", "--sandbox", "unsafe-local",
         "--out", str(tmp_path / "r")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "runs agent code WITHOUT isolation" in done.stderr
    assert "1 right" in done.stdout
    with LocalSandbox(Task(id="u", suite="s", family="workspace", instructions=["x"]), LIMITS) as box:
        assert box.python("import os\nprint(os.getcwd())").stdout.strip() == str(box.workspace.root)
        assert box.python("print(6 * 7)").stdout == "42\n"


PROC_READER = r"""
import json, os
seen = {"files": {}, "links": []}
for pid in [name for name in os.listdir("/proc") if name.isdigit()]:
    for name in ("cmdline", "environ", "status"):
        try:
            seen["files"][f"{pid}/{name}"] = open(f"/proc/{pid}/{name}", "rb").read().decode(errors="replace")
        except OSError:
            pass
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            seen["links"].append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    except OSError:
        pass
seen["mountinfo"] = open("/proc/self/mountinfo").read()
seen["kernel"] = open("/proc/cmdline").read()
open("proc.json", "w").write(json.dumps(seen))
"""


def test_no_host_path_is_readable_in_proc(tmp_path: Path) -> None:
    """/proc shows the sandbox's processes: their command lines, environments and descriptors, and the
    sources of the mounts, name no host folder of daharness (scratch, masked paths, install, a private
    library, the kernel and hooks); the one mount from a host folder is the workspace itself."""
    import daharness
    from daharness.sandbox.bwrap import mounted_roots
    from daharness.sandbox.scratch import process_scratch
    from daharness.suites import load_suite

    interactive = next(task for task in load_suite("interactive").tasks if task.libraries)
    library = interactive.libraries[0]
    (tmp_path / "data.csv").write_text("a\n1\n")
    task = Task(
        id="proc", suite="security", family="workspace", instructions=["look"],
        files=[WorkspaceFile(path="data.csv", source=tmp_path / "data.csv")], libraries=[library],
    )  # fmt: skip
    with BwrapSandbox(task, LIMITS) as box:
        found = box.python(PROC_READER)
        assert found.ok, found.error
        seen = json.loads(box.read_file("proc.json"))
        workspace = str(box.workspace.root)
        copied = box.python("print(open('/daharness-lib/0/decision_kit/__init__.py').read()[:2000], end='')")
        assert copied.stdout == (library.source / "decision_kit" / "__init__.py").read_text()[:2000]
    sources = {}
    for line in seen["mountinfo"].splitlines():
        fields = line.split()
        sources[fields[4]] = fields[3]  # mount point -> the mounted folder's path on its filesystem
    roots = [f"{root}/" for root in mounted_roots()]
    hidden = [point for point in sources if point.startswith(tuple(roots))]  # masks over installed data
    assert any(point.endswith("sklearn/datasets/data") for point in hidden)
    package = str(Path(daharness.__file__).resolve().parent)
    secret = [str(process_scratch()), workspace, package, str(library.source), *hidden]
    assert len(seen["files"]) >= 4 and any("python" in text for text in seen["files"].values())
    for where, text in [*seen["files"].items(), *(("fd", link) for link in seen["links"])]:
        assert not [path for path in secret if path in text], (where, text[:300])
    assert not [link for link in seen["links"] if "memfd" in link]  # bwrap's options were closed
    command_lines = [text for where, text in seen["files"].items() if where.endswith("cmdline")]
    assert not [text for text in command_lines if '"uid"' in text or "--bind" in text]  # nor its settings
    assert seen["kernel"] == ""  # the host kernel's boot arguments
    assert sources.pop("/workspace") == workspace.removeprefix(_filesystem_root(workspace))
    for point, source in sources.items():
        assert not [path for path in [str(process_scratch()), package, str(library.source)] if path in source]
        # a whole filesystem, the same path as outside (system, Python), a node of /dev or /proc, or a
        # file bwrap copied in from memory
        internal = source in ("/", "/newroot", point) or point.endswith(source)
        assert internal or source.startswith(("/bindfile", "/usr/")), (point, source)
    assert {"/daharness-kernel", "/daharness-hooks", "/daharness-lib/0"} <= set(sources)


def _filesystem_root(path: str) -> str:
    """The mount point of the host filesystem holding `path` (mountinfo gives paths relative to it)."""
    best = "/"
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
            best = point
    return "" if best == "/" else best
