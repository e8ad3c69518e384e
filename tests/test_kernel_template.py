"""The kernel template (sandbox/template.py): a kernel forked into a sandbox is the kernel bubblewrap
would have started there, with the data libraries already imported; anything wrong with the template
makes the sandbox start its kernel as before."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import last_line_printed, wait_until

from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.core.task import Task, WorkspaceFile
from daharness.sandbox import BwrapSandbox
from daharness.sandbox import template as template_module

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="the kernel template is used only as root")

# what a sandbox's first process is, seen from inside: everything that must not depend on how it started
PROBE = r"""
import json, os, sys
def status(field):
    for line in open('/proc/self/status'):
        if line.startswith(field + ':'):
            return line.split(':', 1)[1].strip()
def kind(fd):  # what a descriptor is (its number depends on the order the kernel opened things)
    try:
        return __import__('re').sub(r'\[\d+\]', '', os.readlink('/proc/self/fd/' + fd))
    except OSError:
        return 'gone'  # the listing's own
def mounts():
    return sorted(line.split()[4] for line in open('/proc/self/mountinfo'))
print(json.dumps({
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "cwd": os.getcwd(),
    "env": {k: v for k, v in os.environ.items() if k != "DAHARNESS_CHART_CAPTURE"},
    "fds": sorted(kind(fd) for fd in os.listdir('/proc/self/fd')), "hostname": os.uname().nodename,
    "cap_eff": status('CapEff'), "cap_prm": status('CapPrm'), "cap_amb": status('CapAmb'),
    "no_new_privs": status('NoNewPrivs'), "seccomp": status('Seccomp'), "mounts": mounts(),
    "cgroup": open('/proc/self/cgroup').read(), "own_session": os.getsid(0) in {int(p) for p in os.listdir('/proc') if p.isdigit()},
    "tmp": sorted(os.listdir('/tmp')), "limits": [__import__('resource').getrlimit(r) for r in (9, 6, 1, 0)],
    "network": sorted(line.split(':')[0].strip() for line in open('/proc/net/dev') if ':' in line),
}))
"""


@pytest.fixture
def task(tmp_path: Path) -> Task:
    (tmp_path / "data.csv").write_text("x\n1\n")
    return Task(
        id="tpl", suite="t", family="workspace", instructions=["x"],
        files=[WorkspaceFile(path="data.csv", source=tmp_path / "data.csv")],
    )  # fmt: skip


@pytest.fixture
def template_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DAHARNESS_KERNEL_TEMPLATE", "on")
    yield


def _probe(task: Task, mode: str, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, bool]:
    monkeypatch.setenv("DAHARNESS_KERNEL_TEMPLATE", mode)
    with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
        seen = box.python(PROBE)
        assert seen.ok, seen
        return json.loads(seen.stdout), box.forked_kernel


def test_a_forked_kernel_has_exactly_the_sandbox_a_started_one_has(
    task: Task, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, forked_before = _probe(task, "off", monkeypatch)
    forked, forked_now = _probe(task, "on", monkeypatch)
    assert (forked_before, forked_now) == (False, True)
    assert started["uid"] != forked["uid"]  # each sandbox its own user id
    for probe in (started, forked):
        assert probe["uid"] >= 200_000 and probe["gid"] == probe["uid"] and probe["groups"] == []
        assert probe["cap_eff"] == probe["cap_prm"] == probe["cap_amb"] == "0000000000000000"
        assert probe["no_new_privs"] == "1"
        assert probe["own_session"]  # a session made inside the sandbox (bwrap's, or the fork's own)
        probe.pop("uid"), probe.pop("gid")
    # environment, descriptors, folders, mounts, control group, limits, network: all the same (the one
    # difference, documented in template.py: a root `sleep` holds the forked kernel's namespaces)
    differing = {key: (started.get(key), forked.get(key)) for key in {*started, *forked}
                 if started.get(key) != forked.get(key)}  # fmt: skip
    assert not differing, differing


def test_forked_kernels_have_the_libraries_loaded_and_their_own_random_state(
    task: Task, template_on: None
) -> None:
    draws = []
    for number in range(2):
        with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
            assert box.forked_kernel
            if number == 0:  # the template loads scikit-learn between forks; this one waits for it
                template = template_module.current_template()
                assert template is not None and "sklearn.linear_model" in template.load_all()
            seen = box.python(
                "import sys\nloaded = sorted(m for m in ('pandas', 'sklearn.linear_model') if m in sys.modules)\n"
                "import numpy, random\nprint(loaded, numpy.random.rand(), random.random())"
            )
            assert seen.ok, seen
            draws.append(seen.stdout)
            # matplotlib's folders are the sandbox's own, as for a kernel that imports it itself
            folder = box.python("import matplotlib\nprint(matplotlib.get_configdir())")
            assert folder.stdout == "/tmp/matplotlib\n"
            # the template imports with the garbage collector paused; the kernel's runs as in any Python
            assert box.python("import gc\nprint(gc.isenabled())").stdout == "True\n"
    assert draws[0].startswith("['pandas']") or draws[0].startswith("['pandas', 'sklearn.linear_model']")
    assert draws[1].startswith("['pandas', 'sklearn.linear_model']")
    assert draws[0] != draws[1]  # numpy's and random's seeds are drawn again in each fork


def test_a_forked_kernel_that_dies_says_how_and_its_sandbox_goes_on(task: Task, template_on: None) -> None:
    with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
        assert box.forked_kernel
        died = box.python("import os\nos._exit(7)")
        assert died.error is not None and "exit status 7" in died.error.value and died.restarted
        assert box.python("print(6 * 7)").stdout == "42\n"
        processes = set(box.processes())
    assert len(processes) >= 4  # bwrap, its placeholder, the waiter and the kernel at least
    for pid in processes:  # every one has ended, the waiter outside the PID namespace too
        assert _ended(pid, 10), pid


def test_a_kernel_whose_waiter_dies_is_reaped_by_the_template(task: Task, template_on: None) -> None:
    """At a sample's end its kernel and the kernel's waiter are killed together. An orphaned kernel goes
    to the template (a child subreaper), not to PID 1, which may reap late or never (a container's):
    the sandbox's PID 1 cannot exit before the kernel is reaped, and closing waits for it to exit."""
    with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
        assert box.forked_kernel and box.python("print(6 * 7)").stdout == "42\n"
        started = template_module.current_template()
        assert started is not None
        waiter = next(pid for pid in box.processes() if _status(pid, "PPid") == str(started.pid))
        kernel = next(pid for pid in box.processes() if _status(pid, "PPid") == str(waiter))
        os.kill(waiter, signal.SIGKILL)
        wait_until(lambda: _status(kernel, "PPid") != str(waiter), 10, what="the kernel orphaned")
        assert _status(kernel, "PPid") == str(started.pid)  # not "1"
        assert box.python("print(6 * 7)").stdout == "42\n"  # the kernel itself goes on
    assert _ended(kernel, 0)


def _status(pid: int, field: str) -> str:
    """A field of the process's /proc status ("" once the process is gone)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except FileNotFoundError:
        return ""
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith(field + ":")), "")


def test_a_sandbox_ends_when_its_harness_end_of_the_pipe_closes(task: Task, template_on: None) -> None:
    """bwrap's PID 1 asks for its parent-death signal only after the sandbox's setup: a harness killed
    during the setup (kill -9) leaves it running. What holds the sandbox then still ends: its stdin, the
    harness's pipe, closes with the harness."""
    with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
        assert box.forked_kernel and box.python("print(6 * 7)").stdout == "42\n"
        processes = set(box.processes())
        assert len(processes) >= 4
        box._process.stdin.close()  # as it closes when the harness dies
        for pid in processes:
            assert _ended(pid, 10), pid


def test_a_broken_template_leaves_the_kernel_to_bwrap(task: Task, template_on: None) -> None:
    with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
        assert box.forked_kernel
    template = template_module.current_template()
    assert template is not None
    template.close()  # the template is gone: it cannot be asked any more
    try:
        with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
            assert not box.forked_kernel
            assert box.python("print('started by bwrap')").stdout == "started by bwrap\n"
        assert template.problem is not None  # later sandboxes do not ask it again
        with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
            assert not box.forked_kernel
    finally:
        template_module.forget_template()


def test_an_unknown_template_setting_is_a_one_line_error(task: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAHARNESS_KERNEL_TEMPLATE", "sometimes")
    box = BwrapSandbox(task, Limits())
    try:
        with pytest.raises(
            UserError, match=r"^DAHARNESS_KERNEL_TEMPLATE='sometimes': expected auto, on or off$"
        ):
            box.start()
    finally:
        box.close()


def test_small_memory_limits_and_off_keep_the_template_out(
    task: Task, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAHARNESS_KERNEL_TEMPLATE", "on")
    with BwrapSandbox(task, Limits(memory_mb=1024)) as box:
        assert not box.forked_kernel  # the preloaded libraries would take much of 1 GB of address space
    monkeypatch.setenv("DAHARNESS_KERNEL_TEMPLATE", "off")
    with BwrapSandbox(task, Limits()) as box:
        assert not box.forked_kernel


def test_the_template_ends_with_the_process_that_started_it(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from daharness.core.limits import Limits\n"
        "from daharness.core.task import Task\n"
        "from daharness.sandbox import BwrapSandbox\n"
        "from daharness.sandbox import template\n"
        "task = Task(id='t', suite='t', family='workspace', instructions=['x'])\n"
        "with BwrapSandbox(task, Limits()) as box:\n"
        "    assert box.forked_kernel\n"
        "    print(template.current_template().pid, flush=True)\n"
        "os._exit(0)\n"  # no atexit: the template must notice by itself that its harness is gone
    )
    env = {**os.environ, "DAHARNESS_KERNEL_TEMPLATE": "on"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert _ended(int(done.stdout.split()[-1]), 30), "the kernel template outlived its harness by 30 s"


FIRST_SANDBOX = (
    "import sys\n"
    "from daharness.core.limits import Limits\n"
    "from daharness.core.task import Task\n"
    "from daharness.sandbox import BwrapSandbox\n"
    "from daharness.sandbox import template\n"
    "from daharness.sandbox import prepare_run\n"
    "if sys.argv[1] == 'early':\n"
    "    prepare_run('bwrap', Limits())\n"
    "task = Task(id='t', suite='t', family='workspace', instructions=['x'])\n"
    "with BwrapSandbox(task, Limits()) as box:\n"
    "    seen = box.python(\"import sys\\nprint('pandas' in sys.modules, 'matplotlib' in sys.modules)\")\n"
    "    made = template.current_template()\n"
    "    print(box.forked_kernel, seen.stdout.strip(), made is not None and made.loads_later_modules)\n"
)


@pytest.mark.parametrize(
    ("start", "seen"), [("early", "True True False False"), ("auto", "False False False False")]
)
def test_a_template_started_ahead_forks_even_the_first_sandbox_without_the_later_modules(
    start: str, seen: str
) -> None:
    """`run` starts the template before it loads the suite: a one-sample run's kernel is forked with
    pandas imported, and the template does not import matplotlib and the rest meanwhile (the sample
    would wait for them); left to itself a process forks only from its third sandbox on."""
    env = {**os.environ, "DAHARNESS_KERNEL_TEMPLATE": "auto"}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_SANDBOX, start], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == seen


ONE_SAMPLE_RUN = (
    "import sys\n"
    "from rich.console import Console\n"
    "from daharness.agents import make_agent\n"
    "from daharness.runs.runner import run_suite\n"
    "from daharness.sandbox import template\n"
    "from daharness.suites import load_suite\n"
    "outcome = run_suite(load_suite('closed-form'), make_agent('reference'), __import__('pathlib').Path(sys.argv[1]),\n"
    "                    limit=1, console=Console(quiet=True))\n"
    "made = template.current_template()\n"
    "print(outcome.ran, made is not None and made.problem is None, __import__('gc').get_freeze_count() > 0)\n"
)


def test_run_suite_starts_the_template_even_for_one_sample(tmp_path: Path) -> None:
    """Not only the `run` command: a run started from Python forks its first kernel from the template too,
    and the objects its process started with are kept out of the garbage collector's passes (a full
    pass over them stopped every sample thread for 0.15 s at -j 16)."""
    env = {**os.environ, "DAHARNESS_KERNEL_TEMPLATE": "auto"}
    done = subprocess.run(
        [sys.executable, "-c", ONE_SAMPLE_RUN, str(tmp_path / "run")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "1 True True"


EARLY_START = (
    "import sys\n"
    "from daharness.cli.options import start_run_early\n"
    "from daharness.sandbox import template\n"
    "start_run_early(sys.argv[1:])\n"
    "made = template.current_template()\n"
    "heavy = [m for m in ('daharness.families', 'daharness.sandbox.bwrap', 'pydantic') if m in sys.modules]\n"
    "print(made is not None, heavy)\n"
)


@pytest.mark.parametrize(
    ("argv", "started"),
    [
        (["run", "--suite", "closed-form", "--agent", "reference"], True),
        (["run", "--suite", "closed-form", "--memory-mb=4096", "--sandbox", "bwrap"], True),
        (["run", "--suite", "closed-form", "--help"], False),
        (["run", "--suite", "closed-form", "--backend", "ray"], False),
        (["run", "--suite", "closed-form", "--sandbox", "unsafe-local"], False),
        (["run", "--suite", "closed-form", "--memory-mb", "1024"], False),
        (["suites", "check", "closed-form"], False),
    ],
)
def test_run_starts_the_template_before_it_imports_families_or_backends(
    argv: list[str], started: bool
) -> None:
    """`run` starts the template as its first step, importing nothing heavy for it (the families, the
    backends and pydantic load meanwhile); not where its options say no sandbox of this process uses it."""
    env = {**os.environ, "DAHARNESS_KERNEL_TEMPLATE": "auto"}
    assert last_line_printed(EARLY_START, *argv, env=env) == f"{started} []"


def test_a_template_started_early_is_stopped_when_the_run_cannot_use_it() -> None:
    """A template `run` started before it read its options goes when they say its sandboxes are too small."""
    script = (
        "from daharness.sandbox import template\n"
        "template.start_kernel_template(4096)\n"
        "first = template.current_template()\n"
        "template.start_kernel_template(1024)\n"
        "print(first is not None, template.current_template() is None, first._process.wait(30))\n"
    )
    env = {**os.environ, "DAHARNESS_KERNEL_TEMPLATE": "auto"}
    assert last_line_printed(script, env=env) == "True True -9"


def _ended(pid: int, within_s: float) -> bool:
    """Whether the process ends within `within_s` (its pidfd becomes readable when it does)."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ended, _, _ = select.select([handle], [], [], within_s)
    finally:
        os.close(handle)
    return bool(ended)


SCRIPTS = {
    "shows.py": "import os, sys\nprint(sys.argv, __file__, __name__, sys.path[0], sorted(os.listdir('/proc/self/fd')))\n"
    "import helper\nprint(helper.VALUE)\nraise SystemExit(3)\n",
    "helper.py": "VALUE = 42\n",
    "fails.py": "def f():\n    return 1 / 0\nf()\n",
    "broken.py": "x = (\n",
    "marked.py": "import builtins\nprint(getattr(builtins, 'MARK', 'clean'))\n",
    "draws.py": "import numpy\nprint(numpy.random.rand())\n",  # (Python's own `random` reseeds at fork)
}


def test_a_script_forked_from_the_kernel_ends_as_a_python_process_would(
    task: Task, template_on: None
) -> None:
    with BwrapSandbox(task, Limits(step_timeout_s=30)) as box:
        for name, source in SCRIPTS.items():
            assert box.write_file(name, source).ok
        for name, args in (("shows.py", ["a b"]), ("fails.py", []), ("broken.py", []), ("missing.py", [])):
            forked = box.python_script(name, args, timeout=20)
            started = box.bash(" ".join(["python", name, *(f"'{arg}'" for arg in args)]), timeout=20)
            assert (forked.stdout, forked.stderr, forked.exit_status) == (
                started.stdout, started.stderr, started.exit_status
            ), name  # fmt: skip
        assert box.history[-2].kind == "bash"  # the history says what the step means
        assert box.history[-2].args == {"command": "python missing.py"}
        draws = {box.python_script("draws.py", []).stdout for _ in range(3)}
        assert len(draws) == 3  # each script its own seeds, as each new Python process has
        assert box.write_file("loops.py", "while True:\n    pass\n").ok
        looping = box.python_script("loops.py", [], timeout=1)
        assert looping.timed_out and looping.error is not None and looping.error.name == "TimeoutError"
        # once the kernel has run code of the agent's, a script no longer starts from it
        assert box.python_script("marked.py", []).stdout == "clean\n"
        assert box.python("import builtins\nbuiltins.MARK = 'the agent was here'").ok
        assert box.python_script("marked.py", []).stdout == "clean\n"


FROM_TMP_ENVIRONMENT = (
    "import sys\n"
    "from daharness.core.limits import Limits\n"
    "from daharness.core.task import Task\n"
    "from daharness.sandbox import BwrapSandbox, prepare_run, template\n"
    "prepare_run('bwrap', Limits())\n"
    "task = Task(id='t', suite='t', family='workspace', instructions=['x'])\n"
    "with BwrapSandbox(task, Limits()) as box:\n"
    "    seen = box.python(\"import sys\\nprint('pandas' in sys.modules)\")\n"
    "    made = template.current_template()\n"
    "    made.preload_later()\n"
    "    loaded = sorted(made.load_all())\n"
    "    print(sys.prefix.startswith('/tmp/'), box.forked_kernel, seen.stdout.strip(), loaded, getattr(made, 'failed', {}))\n"
)


@contextmanager
def _python_under_tmp() -> Iterator[list[str]]:
    """A command that runs a Python of a venv made under /tmp (as CI systems and quick trials make one)
    whose site-packages holds numpy, pandas and the rest: this environment's, mounted there (a bind mount,
    in a mount namespace of the command's own: no copy, and no link that resolves out of /tmp)."""
    import shutil
    import sysconfig
    import tempfile

    import numpy

    root = Path(tempfile.mkdtemp(prefix="daharness-env-", dir="/tmp"))
    try:
        root.chmod(0o755)  # as `python -m venv /tmp/v` makes it: the sandbox's user crosses it to its Python
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
        relative = Path(sysconfig.get_path("purelib")).relative_to(sysconfig.get_path("data"))
        packages = Path(numpy.__file__).resolve().parents[1]
        mount = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
        yield ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", mount, "sh",
               str(packages), str(root / relative), str(root / "bin" / "python")]  # fmt: skip
    finally:
        shutil.rmtree(root)


def test_a_template_started_from_a_python_under_tmp_preloads_all_the_same() -> None:
    """A private /tmp hid a venv made under /tmp from the template: every preload import failed, silently,
    and each sample imported pandas itself (issue 43, item 12). Its Python's folders are mounted back."""
    import daharness

    env = {
        **os.environ,
        "DAHARNESS_KERNEL_TEMPLATE": "auto",
        "PYTHONPATH": str(Path(daharness.__file__).resolve().parents[1]),  # the harness's: not the template's
    }
    with _python_under_tmp() as python:
        done = subprocess.run(
            [*python, "-c", FROM_TMP_ENVIRONMENT], capture_output=True, text=True, env=env, timeout=300
        )
    assert done.returncode == 0, done.stderr[-3000:]
    everything = sorted({*template_module.PRELOAD, *template_module.PRELOAD_LATER})
    assert done.stdout.splitlines()[-1] == f"True True True {everything} {{}}"
    assert "could not preload" not in done.stderr


def test_a_module_the_template_cannot_preload_is_said_once_with_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from daharness.sandbox.environment import template_settings

    env, fonts = template_settings()
    made = template_module.KernelTemplate(env, fonts, later=("daharness_no_such_module",))
    try:
        with caplog.at_level("WARNING", logger="daharness.sandbox"):
            assert "daharness_no_such_module" not in made.load_all()
            made.load_all()  # asked again: said once
    finally:
        made.close()
    assert made.failed == {
        "daharness_no_such_module": "ModuleNotFoundError: No module named 'daharness_no_such_module'"
    }
    said = [record.getMessage() for record in caplog.records]
    assert said == [
        "the kernel template could not preload daharness_no_such_module (ModuleNotFoundError: No module "
        "named 'daharness_no_such_module'): each sample imports it itself, slower"
    ]
