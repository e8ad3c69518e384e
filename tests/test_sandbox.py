"""The sandbox as agents use it: a persistent kernel, Bash, SQL on SQLite and DuckDB, files, budgets."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from daharness.core.limits import Limits
from daharness.core.task import Task, WorkspaceFile
from daharness.sandbox import BwrapSandbox, SandboxNotStarted


@pytest.fixture
def box(tmp_path: Path) -> Iterator[BwrapSandbox]:
    with sqlite3.connect(tmp_path / "shop.db") as db:
        db.execute("create table orders (id integer, amount real)")
        db.executemany("insert into orders values (?, ?)", [(1, 9.5), (2, 20.0), (3, 0.5)])
    with duckdb.connect(str(tmp_path / "sales.duckdb")) as db:
        db.execute("create table sales as select range as day, range * 2 as units from range(5)")
    (tmp_path / "data.csv").write_text("x,y\n1,2\n3,4\n")
    task = Task(
        id="sb", suite="t", family="workspace", instructions=["x"],
        files=[WorkspaceFile(path=name, source=tmp_path / name) for name in ("shop.db", "sales.duckdb", "data.csv")],
    )  # fmt: skip
    with BwrapSandbox(task, Limits(step_timeout_s=20, sample_timeout_s=120)) as sandbox:
        yield sandbox


def test_python_state_persists_like_a_notebook(box: BwrapSandbox) -> None:
    assert box.python("import pandas as pd\ndf = pd.read_csv('data.csv')").ok
    shown = box.python("int(df['x'].sum()) * 10")  # a final bare expression is shown
    assert shown.stdout == "40\n"
    assert box.python("total = int(df.y.sum())\nprint(total)").stdout == "6\n"
    assert box.python("total + 1").stdout == "7\n"


def test_errors_carry_name_value_and_traceback(box: BwrapSandbox) -> None:
    failed = box.python("def f():\n    return {}['missing']\nf()")
    assert failed.error is not None and failed.error.name == "KeyError"
    assert failed.error.value == "'missing'"
    assert 'File "<cell>", line 2, in f' in failed.error.traceback
    syntax = box.python("def broken(:")
    assert syntax.error is not None and syntax.error.name == "SyntaxError"
    assert box.python("raise SystemExit(3)").error.name == "SystemExit"  # type: ignore[union-attr]
    assert box.python("print('still alive')").stdout == "still alive\n"


def test_stdout_and_stderr_include_output_of_child_processes(box: BwrapSandbox) -> None:
    observation = box.python(
        "import os, sys\nprint('py out')\nprint('py err', file=sys.stderr)\nstatus = os.system('echo from-shell')"
    )
    assert observation.stdout == "py out\nfrom-shell\n"
    assert observation.stderr == "py err\n"


def test_bash_reports_exit_status_and_files(box: BwrapSandbox) -> None:
    observation = box.bash("wc -l < data.csv; echo oops >&2; mkdir -p out && echo 1 > out/a.txt; exit 4")
    assert observation.stdout == "3\n" and observation.stderr == "oops\n"
    assert observation.exit_status == 4 and not observation.ok
    assert observation.files_changed == ["out/a.txt"]
    assert box.bash("python -c 'print(2 ** 10)'").stdout == "1024\n"


def test_a_bash_command_past_its_timeout_is_killed_with_its_children(box: BwrapSandbox) -> None:
    slow = box.bash("sleep 30 & echo started; wait", timeout=0.5)
    assert slow.timed_out and slow.exit_status is None and slow.stdout == "started\n"
    assert slow.error is not None and slow.error.name == "TimeoutError"
    # the session was killed: no `sleep` is left, and the next command runs and ends at once
    after = box.bash("ps -eo comm | grep -c '^sleep$'; exit 3", timeout=5)
    assert after.stdout == "0\n" and after.exit_status == 3 and not after.timed_out


def test_sql_on_sqlite_and_duckdb(box: BwrapSandbox) -> None:
    table = box.sql("shop.db", "select id, amount from orders where amount > 1 order by id")
    assert table.ok
    assert table.stdout.splitlines()[0].split() == ["id", "|", "amount"]
    assert "(2 rows)" in table.stdout
    written = box.sql("sales.duckdb", "select sum(units) as total from sales", output="total.csv")
    assert written.ok and written.files_changed == ["total.csv"]
    assert (box.workspace.root / "total.csv").read_text().splitlines() == ["total", "20"]
    change = box.sql("shop.db", "insert into orders values (4, 1.0)")
    assert "without output" in change.stdout
    assert "(4 rows)" in box.sql("shop.db", "select * from orders").stdout
    bad = box.sql("shop.db", "select nope from orders")
    assert bad.error is not None and "no such column" in bad.error.value
    missing = box.sql("absent.db", "select 1")
    assert missing.error is not None and missing.error.name == "FileNotFoundError"


def test_matplotlib_figures_are_saved_without_a_display(box: BwrapSandbox) -> None:
    observation = box.python(
        "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [1, 3])\nplt.savefig('chart.png')\nprint(plt.get_backend())"
    )
    assert observation.stdout.strip().lower() == "agg"
    assert observation.files_changed == ["chart.png"]  # its captured data goes to the host, not here
    assert (box.workspace.root / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_sample_time_budget_ends_all_further_steps(tmp_path: Path) -> None:
    task = Task(id="t", suite="t", family="workspace", instructions=["x"])
    with BwrapSandbox(task, Limits(step_timeout_s=5, sample_timeout_s=1.5)) as box:
        assert box.python("import time\ntime.sleep(3)").timed_out  # the step gets only what is left
        refused = box.python("print(1)")
        assert refused.error is not None and "used up" in refused.error.value


def test_charts_are_captured_as_data_in_the_kernel_and_in_child_pythons(box: BwrapSandbox) -> None:
    import hashlib
    import json

    saved = box.python(
        "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [1, 3])\nplt.title('Sales')\nplt.savefig('bar.png')"
    )
    assert saved.files_changed == ["bar.png"]  # the capture travels over the kernel's channel
    box.write_file(
        "plot.py", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 4])\nplt.savefig('line.png')\n"
    )
    assert box.bash("python plot.py").ok
    index = [json.loads(line) for line in (box.captures.folder / "index.jsonl").read_text().splitlines()]
    assert [(entry["file"], entry["event"]) for entry in index] == [
        ("bar.png", "savefig"),
        ("line.png", "savefig"),
    ]
    bar = json.loads((box.captures.folder / "0.json").read_text())
    assert bar["axes"][0]["type"] == "bar" and bar["axes"][0]["title"] == "Sales"
    image = (box.workspace.root / "bar.png").read_bytes()
    assert bar["image"]["sha256"] == index[0]["sha256"] == hashlib.sha256(image).hexdigest()
    assert bar["image"]["size"] == [640, 480] and bar["image"]["format"] == "PNG"
    line = json.loads((box.captures.folder / "1.json").read_text())
    assert line["axes"][0]["type"] == "line" and line["axes"][0]["series"][0]["y"] == [1, 2, 4]


def test_a_python_from_a_venv_under_tmp_runs_in_the_sandbox(tmp_path: Path) -> None:
    import site
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as folder:  # the sandbox mounts its own /tmp
        venv = Path(folder) / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        # the new venv sees this environment's packages (daharness, pandas) through a .pth file, which
        # works whether the tests themselves run in a venv or not
        inner = next(venv.glob("lib/python3*/site-packages"))
        adds = "; ".join(f"site.addsitedir({folder!r})" for folder in site.getsitepackages())
        (inner / "outer.pth").write_text(f"import site; {adds}\n")  # .pth files there (editable installs) too
        script = (
            "from daharness.sandbox import BwrapSandbox\n"
            "from daharness.core.task import Task\n"
            "with BwrapSandbox(Task(id='v', suite='s', family='workspace', instructions=['x'])) as box:\n"
            "    print(box.python('import sys, pandas; print(sys.prefix)').stdout.strip())\n"
        )
        done = subprocess.run([str(venv / "bin" / "python"), "-c", script], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(venv)


def test_an_overlay_covers_the_workspace_read_only_and_leaves_nothing_behind(
    box: BwrapSandbox, tmp_path: Path
) -> None:
    from daharness.core.backend import OverlayBlocked, ReadOnlyOverlay

    (tmp_path / "rc").write_text("harness\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "tool.sh").write_text("echo tool\n")
    box.bash("echo agent > rc && mkdir -p deep/er && echo kept > deep/other && ln -s /etc linked")
    with pytest.raises(OverlayBlocked, match="linked is a link"):  # a mount there would follow it
        box.restart_with_overlay(ReadOnlyOverlay(files={"linked/passwd": tmp_path / "rc"}))
    overlay = ReadOnlyOverlay(
        files={
            "rc": tmp_path / "rc",
            "absent": tmp_path / "rc",
            "deep/er/x": tmp_path / "rc",
            "tools": tmp_path / "tools",
        },
        env={"CHECK_VARIABLE": "set"},
    )
    box.restart_with_overlay(overlay)
    seen = box.bash(
        "cat rc absent deep/er/x tools/tool.sh; echo $CHECK_VARIABLE; echo x > rc || echo read-only"
    )
    assert seen.stdout.split() == ["harness", "harness", "harness", "echo", "tool", "set", "read-only"]
    snapshot = box.snapshot(tmp_path / "collected")
    # the agent's file is kept, and nothing the mounts needed is left in the workspace
    assert (snapshot.root / "rc").read_text() == "agent\n"
    assert snapshot.changed == ("deep/other", "rc")
    left = {path.name for path in box.workspace.root.rglob("*")} - {"data.csv", "sales.duckdb", "shop.db"}
    assert left == {"deep", "er", "linked", "other", "rc"}


def test_matplotlib_starts_from_the_harness_font_list_instead_of_scanning_every_font(
    box: BwrapSandbox,
) -> None:
    from daharness.sandbox.font_cache import font_list

    made = font_list()
    assert made is not None and made[0].startswith("fontlist-v")
    shown = box.python("import os, matplotlib.pyplot\nprint(sorted(os.listdir(os.environ['MPLCONFIGDIR'])))")
    assert shown.ok, shown.error
    assert "building the font cache" not in shown.stderr
    assert made[0] in shown.stdout
    # the sandbox's own copy, which it may change; the harness's list stays as it was
    assert box.python(f"open('/tmp/matplotlib/{made[0]}', 'a').write(' ')").ok
    assert box.python("import os; os.access('/daharness-kernel', os.W_OK)").stdout == "False\n"


def test_a_kernel_that_dies_says_how_and_a_fresh_one_takes_over(box: BwrapSandbox) -> None:
    exited = box.python("import os\nos._exit(7)")
    assert exited.error is not None and exited.error.name == "KernelDied" and exited.restarted
    assert exited.error.value.startswith("the kernel exited (exit status 7)")
    killed = box.python("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert killed.error is not None and "the kernel exited (killed by signal SIGSEGV" in killed.error.value
    assert box.python("print('fresh')").stdout == "fresh\n" and box.restarts == 2


def test_reaping_zombies_survives_threads_that_end_meanwhile() -> None:
    """The kernel reaps between steps by reading /proc/self/task/*/children; a thread that ended between
    the listing and the read raised FileNotFoundError out of the kernel's loop: "the kernel exited
    (exit status 1)" on a loaded machine, in CI."""
    import importlib
    import sys
    import threading

    sys.path.insert(0, str(Path(__file__).parents[1] / "src" / "daharness" / "sandbox"))
    try:
        processes = importlib.import_module("daharness_kernel.processes")
    finally:
        sys.path.pop(0)
    done = threading.Event()

    def churn() -> None:  # threads that start and end all the time, as a library's pool may
        while not done.is_set():
            for thread in [threading.Thread(target=lambda: None) for _ in range(20)]:
                thread.start()
                thread.join()

    churner = threading.Thread(target=churn)
    churner.start()
    try:
        for _ in range(3000):  # about 7 of 3000 failed before the fix
            processes.reap_untracked_zombies()
    finally:
        done.set()
        churner.join()


def test_a_sandbox_started_in_the_background_outlives_the_thread_that_asked(tmp_path: Path) -> None:
    """`start_soon` returns before the kernel is up (the sample's first model call overlaps it), and
    the sandbox lives on after the thread that asked ends: bwrap's --die-with-parent follows the thread
    that started it, so the start must not run in a thread that ends."""
    task = Task(id="bg", suite="t", family="workspace", instructions=["x"])
    box = BwrapSandbox(task, Limits(step_timeout_s=20))
    try:
        with box._life_lock:  # a start cannot finish while this is held: start_soon must not wait for it
            asker = threading.Thread(target=box.start_soon)
            asker.start()
            asker.join(20)
            assert not asker.is_alive()
        assert box.python("print(6 * 7)").stdout == "42\n"
        assert box.restarts == 0  # the kernel that answered is the one started in the background
    finally:
        box.close()


def test_a_background_start_that_fails_is_the_hosts_error_at_the_first_use(tmp_path: Path) -> None:
    task = Task(id="bg", suite="t", family="workspace", instructions=["x"])
    box = BwrapSandbox(task, Limits(step_timeout_s=20, memory_mb=8))  # no Python starts in 8 MB
    try:
        box.start_soon()
        with pytest.raises(SandboxNotStarted, match="did not start"):
            box.python("print(1)")
        assert box.processes() == []  # what only reads does not raise it again
    finally:
        box.close()
