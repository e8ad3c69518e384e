"""The sandbox desktop on this machine.

Measures, with the bwrap backend and a desktop:
1. desktop ready: Xvfb + window manager + accessibility bus, as the controller times it, the whole sample
   start (kernel, then desktop), and Chromium's start with the first page (it starts on first use)
   (target <= 5 s);
2. observation cost per step: the median of `screenshot_a11y_tree` (screenshot + accessibility tree) on a
   page served in the sandbox (target <= 300 ms), and with LibreOffice Calc open on a sheet (--calc);
3. peak memory of one desktop sample (its control group's peak: kernel, desktop, Chromium, the page
   server, and Calc with --calc) (target <= 1 GB);
4. two desktop samples at once: whether each sees only its own page, browser and screen.

With --calc the observation's target is 60 ms and the memory's 400 MB (issue 45); --jupyter observes a
JupyterLab page in a sample of its own (target 60 ms).

Run: python benchmarks/desktop.py [--steps 10] [--calc] [--jupyter]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

import openpyxl
from desktop_helpers import serve, wait_for_window

from daharness.core.limits import Limits
from daharness.core.task import Task, WorkspaceFile
from daharness.families.workflow.screen import open_jupyterlab
from daharness.sandbox import BwrapSandbox, open_sandbox
from daharness.sandbox.desktop import apps, desktop_problem

TARGET_MS = 60  # an observation of a settled screen with an application open (issue 45)
TARGET_CALC_MB = 400  # a desktop sample with Calc open (issue 45)
LIMITS = Limits(memory_mb=3072, sample_timeout_s=1800)
PAGE = """<html><head><title>orders</title></head><body><h1>Orders</h1>
<table>{rows}</table><button>Add order</button><input aria-label="Quantity"></body></html>"""


def make_task(folder: Path, name: str) -> Task:
    book = openpyxl.Workbook()
    for row in range(1, 41):
        book.active.append([f"region {row}", row * 10, row * 1.5])
    buffer = io.BytesIO()
    book.save(buffer)
    (folder / "sales.xlsx").write_bytes(buffer.getvalue())
    files = [WorkspaceFile(path="sales.xlsx", source=folder / "sales.xlsx")]
    return Task(id=name, suite="bench", family="workspace", instructions=["x"], files=files, desktop=True)


def started(task: Task) -> tuple[BwrapSandbox, float]:
    began = time.perf_counter()
    box = open_sandbox("bwrap", task, LIMITS)
    box.start()
    return box, time.perf_counter() - began  # type: ignore[return-value]


def show_page(box: BwrapSandbox, title: str) -> None:
    rows = "".join(f"<tr><td>order {i}</td><td>{i * 7}</td></tr>" for i in range(20))
    page = PAGE.replace("<title>orders", f"<title>{title}").replace("<h1>Orders", f"<h1>{title}")
    base = serve(box, {"index.html": page.format(rows=rows)}, 8000)
    box.desktop.open_url(f"{base}/index.html")


def settled(box: BwrapSandbox, timeout_s: float = 120.0) -> None:
    """Wait until the screen's table has more than 20 rows and kept them for a second."""
    deadline, last = time.monotonic() + timeout_s, -1
    while time.monotonic() < deadline:
        rows = len(box.desktop.observe("a11y_tree").elements)
        if rows == last and rows > 20:
            return
        last = rows
        time.sleep(1)


def observation_ms(box: BwrapSandbox, steps: int) -> dict[str, float]:
    box.desktop.observe(
        "screenshot_a11y_tree"
    )  # warm: the first walk makes the applications build their trees
    times = {"screenshot": [], "a11y_tree": [], "screenshot_a11y_tree": []}
    for _ in range(steps):
        for kind, found in times.items():
            began = time.perf_counter()
            box.desktop.observe(kind)  # type: ignore[arg-type]
            found.append((time.perf_counter() - began) * 1000)
    return {kind: statistics.median(found) for kind, found in times.items()}


def interference(folder: Path) -> tuple[bool, float, list[str]]:
    """Two desktop samples at once, each in a thread of its own from start to close (as the runner runs
    samples; bwrap dies with the thread that started it): each must see only its own page, tabs and
    screen while the other runs."""
    seen: dict[str, dict] = {}
    problems: list[str] = []
    both_up = threading.Barrier(2)
    began = time.perf_counter()
    ready: list[float] = []

    def sample(name: str) -> None:
        (folder / name).mkdir()
        box, _ = started(make_task(folder / name, name))
        try:
            show_page(box, name)
            ready.append(time.perf_counter() - began)
            both_up.wait()  # from here on both desktops run
            seen[name] = {
                "tabs": [tab["title"] for tab in box.desktop.tabs()],
                "headings": [e.name for e in box.desktop.observe("a11y_tree").elements if e.tag == "heading"],
                "screenshot": box.desktop.observe("screenshot").image,
            }
            both_up.wait()
        except Exception as exc:
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            both_up.abort()
        finally:
            box.close()

    threads = [threading.Thread(target=sample, args=(name,)) for name in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, found in seen.items():
        if found["tabs"] != [name] or found["headings"] != [name]:
            problems.append(f"{name} sees tabs {found['tabs']} and headings {found['headings']}")
    if len(seen) == 2 and seen["alpha"]["screenshot"] == seen["beta"]["screenshot"]:
        problems.append("both screenshots are the same")
    return not problems, max(ready, default=float("nan")), problems


def print_observation(what: str, box: BwrapSandbox, steps: int) -> None:
    """The median observation on the screen as it is now, with the issue's target."""
    times = observation_ms(box, steps)
    rows = len(box.desktop.observe("a11y_tree").elements)
    print(
        f"observation {what}: {times['screenshot_a11y_tree']:.0f} ms (screenshot {times['screenshot']:.0f} ms, "
        f"a11y tree {times['a11y_tree']:.0f} ms, {rows} rows)  target <= {TARGET_MS} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=10, help="observations per kind (median taken)")
    parser.add_argument("--calc", action="store_true", help="also observe with LibreOffice Calc open")
    parser.add_argument("--jupyter", action="store_true", help="also observe a JupyterLab page")
    options = parser.parse_args()
    if desktop_problem():
        sys.exit(f"no desktop here: {desktop_problem()}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "one").mkdir()
        box, start_s = started(make_task(folder / "one", "one"))
        try:
            timings = box._desktop.timings  # type: ignore[union-attr]
            began = time.perf_counter()
            show_page(box, "orders")  # Chromium starts on first use
            print(
                f"desktop ready (Xvfb + WM + accessibility bus): {timings['ready_s']:.2f} s (whole sample start "
                f"with its kernel {start_s:.2f} s); Chromium started and the first page shown "
                f"{time.perf_counter() - began:.2f} s later  target <= 5 s"
            )
            page = observation_ms(box, options.steps)
            print(
                f"observation on a page: screenshot + a11y tree {page['screenshot_a11y_tree']:.0f} ms "
                f"(screenshot {page['screenshot']:.0f} ms, a11y tree {page['a11y_tree']:.0f} ms; median of "
                f"{options.steps})  target <= 300 ms"
            )
            if options.calc:
                box.desktop.start_program(apps.calc("sales.xlsx"), "calc")
                wait_for_window(box, "sales.xlsx", 300)
                time.sleep(5)  # let it finish laying out its window (the measure is of a settled screen)
                print_observation("with LibreOffice Calc open", box, options.steps)
            peak = box.resource_usage().get("memory_peak_mb")
            what = "kernel, desktop, Chromium with a page, page server" + (", Calc" if options.calc else "")
            target = TARGET_CALC_MB if options.calc else 1024
            print(f"peak memory of the desktop sample: {peak} MB ({what})  target <= {target} MB")
        finally:
            box.close()
        if options.jupyter:
            (folder / "lab").mkdir()
            box, _ = started(make_task(folder / "lab", "lab"))
            try:
                print(f"  ({open_jupyterlab(box, box.workdir)})")
                settled(box)  # its shell draws its panels for a while after its page loaded
                print_observation("of a JupyterLab page", box, options.steps)
            finally:
                box.close()
        ok, both_s, problems = interference(folder)
        verdict = "no interference" if ok else "INTERFERENCE: " + "; ".join(problems)
        print(
            f"two desktop samples at once: {verdict} (each sees only its own page, tabs and screen; "
            f"both up with their pages in {both_s:.2f} s)"
        )


if __name__ == "__main__":
    main()
