"""A Spider2-V run on the desktop at the pace of its model (issue 45, target 1).

A model server on 127.0.0.1 plays the model: each request is answered after 1 s with WAIT, WAIT, then
DONE (the reply that ends a sample, told apart by the assistant turns the request carries). `daharness
run` runs 8 samples (--epochs) of the built-in task `gui-weather-temp-range` (LibreOffice Calc on the
screen) with the `desktop` agent, at -j1 and at -j8, one after the other in this process's run.

Prints both wall times, their ratio (target >= 5x) and the machine time a sample spends besides its 3 s of
model time. With --phases (default on), one more sample runs in this process with timers on the stages
of a sample (sandbox and desktop start, the setup's steps, the agent's observations and pauses, the GUI
postconfig, the checks' restart, the scoring, the close), so that it says where the time goes.

Run: python benchmarks/desktop_run.py [--samples 8] [--jobs 8] [--no-phases] [--only-phases]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from fake_openai import FakeOpenAI

TASK = "gui-weather-temp-range"
MODEL_S = 1.0
REPLIES = ("WAIT", "WAIT", "DONE")
TARGET_RATIO = 5.0


def model_reply(request: dict[str, Any]) -> str:
    """WAIT, WAIT, DONE by the number of earlier replies the request carries, after MODEL_S."""
    time.sleep(MODEL_S)
    turns = sum(1 for message in request["messages"] if message["role"] == "assistant")
    return REPLIES[min(turns, len(REPLIES) - 1)]


def timed_run(base_url: str, samples: int, jobs: int, out: Path) -> tuple[float, list[dict[str, Any]]]:
    """`daharness run` of the task's samples at -j `jobs`: its wall time and its records."""
    command = [
        "daharness", "run", "--suite", "workflow", "--ids", TASK, "--epochs", str(samples),
        "--agent", "desktop", "--model", "fake-vl", "--base-url", base_url, "-j", str(jobs),
        "--out", str(out),
    ]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": "x"})
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"the run failed ({done.returncode}): {done.stderr[-2000:]}")
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines() if line.strip()]
    return seconds, records


def summary(records: list[dict[str, Any]]) -> str:
    scored = [r for r in records if r.get("status") == "scored"]
    peaks = [r.get("extra", {}).get("sandbox", {}).get("memory_peak_mb") or 0 for r in records]
    durations = sorted(r.get("duration_s") or 0 for r in records)
    return (
        f"{len(scored)}/{len(records)} scored, sample times {durations[0]:.1f}-{durations[-1]:.1f} s, "
        f"peak memory per sample up to {max(peaks, default=0):.0f} MB"
    )


# ---- where one sample's time goes ----------------------------------------------------------------

PHASES: dict[str, list[float]] = defaultdict(list)
SANDBOX_CPU: list[float] = []
PROGRAM_CPU: dict[str, float] = {}


def cpu_by_program(pids: list[int]) -> dict[str, float]:
    """CPU seconds of the running processes (with the children they waited for), by program name."""
    found: dict[str, float] = defaultdict(float)
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        name, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        found[name] += sum(int(value) for value in fields[11:15]) / ticks  # utime stime cutime cstime
    return dict(found)


def _timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            PHASES[name].append(time.perf_counter() - began)

    return wrapper


@contextmanager
def phase_timers() -> Iterator[None]:
    """Timers on the stages of a sample (module attributes replaced for the time of one sample)."""
    from daharness.families.workflow import family, screen
    from daharness.families.workflow.baseline import agent as desktop_agent
    from daharness.runs import pipeline
    from daharness.sandbox import bwrap
    from daharness.sandbox.desktop import session

    targets = [
        (bwrap.BwrapSandbox, "start", "sandbox start (kernel + desktop), in the background"),
        (session.DesktopSession, "start", "  desktop start (its part)"),
        (family.WorkflowFamily, "prepare", "setup (copy, open the workbook)"),
        (screen, "run_gui_step", "  GUI step"),
        (screen, "prepare_calc", "    LibreOffice's profile"),
        (screen, "wait_for_window", "    wait for a window"),
        (screen, "wait_for_cells", "    wait for the sheet's cells"),
        (pipeline, "screen_note", "screen notes (after setup, before checks)"),
        (desktop_agent.Episode, "observe", "agent: observations"),
        (desktop_agent.Episode, "ask", "agent: model calls"),
        (desktop_agent.Episode, "act", "agent: actions and their pauses"),
        (family.WorkflowFamily, "finish", "checks (postconfig, stop, restart, scripts)"),
        (family, "gui_postconfig", "  GUI postconfig step"),
        (screen, "settle", "  settle after the postconfig"),
        (screen, "stop_agent", "  stop the agent's processes"),
        (bwrap.BwrapSandbox, "interrupt", "  interrupt"),
        (bwrap.BwrapSandbox, "restart_with_overlay", "  restart for the checks"),
        (bwrap.BwrapSandbox, "snapshot", "collect the files (snapshot)"),
        (pipeline, "score_within_limits", "score"),
        (bwrap.BwrapSandbox, "close", "close the sandbox"),
    ]
    saved = [(bwrap.BwrapSandbox, "close", bwrap.BwrapSandbox.close)]
    original_close = bwrap.BwrapSandbox.close

    def close(box: Any) -> None:  # the sandbox's CPU time (its control group's), read before it goes
        if (seconds := box.cpu_seconds()) is not None:
            SANDBOX_CPU.append(seconds)
        original_close(box)

    bwrap.BwrapSandbox.close = close  # type: ignore[method-assign]
    saved.append((bwrap.BwrapSandbox, "interrupt", bwrap.BwrapSandbox.interrupt))
    original_interrupt = bwrap.BwrapSandbox.interrupt

    def interrupt(box: Any) -> None:  # what each program of the sandbox used, read before they are killed
        PROGRAM_CPU.clear()
        PROGRAM_CPU.update(cpu_by_program(box.processes()))
        original_interrupt(box)

    bwrap.BwrapSandbox.interrupt = interrupt  # type: ignore[method-assign]
    for owner, attribute, name in targets:
        if not hasattr(owner, attribute):
            print(f"(no {owner.__name__}.{attribute} to time)")
            continue
        original = getattr(owner, attribute)
        saved.append((owner, attribute, original))
        setattr(owner, attribute, _timed(name, original))
    try:
        yield
    finally:
        for owner, attribute, original in reversed(saved):  # close and interrupt are wrapped twice
            setattr(owner, attribute, original)


def _harness_cpu() -> float:
    """CPU seconds of this process and its waited-for children (the scoring worker's, say)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one_sample_phases(base_url: str) -> float:
    """One sample in this process with the timers on; its wall time. Prints each stage's time."""
    from daharness.agents import AgentSettings, make_agent
    from daharness.core.runlog import ScoringSettings
    from daharness.models import ModelSettings
    from daharness.runs.pipeline import SandboxSettings, run_sample
    from daharness.suites import load_suite

    task = next(t for t in load_suite("workflow").tasks if t.id == TASK)
    run = AgentSettings(model=ModelSettings(model="fake-vl", base_url=base_url), cache_mode="off")
    agent = make_agent("desktop", run, {})
    PHASES.clear()
    SANDBOX_CPU.clear()
    with phase_timers():
        began, cpu = time.perf_counter(), _harness_cpu()
        result = run_sample(task, agent, sandbox=SandboxSettings(desktop=True), scoring=ScoringSettings())
        wall, cpu = time.perf_counter() - began, _harness_cpu() - cpu
    result.discard()
    print(f"one sample in this process: {wall:.2f} s, {result.record.status}, score "
          f"{result.record.score.value if result.record.score else None}; CPU: its sandbox "
          f"{sum(SANDBOX_CPU):.2f} s, the harness and its children {cpu:.2f} s")  # fmt: skip
    programs = sorted(PROGRAM_CPU.items(), key=lambda item: -item[1])
    print(f"  CPU of the sandbox's programs before the checks ({sum(PROGRAM_CPU.values()):.2f} s): "
          + ", ".join(f"{name} {seconds:.2f}" for name, seconds in programs if seconds >= 0.05))  # fmt: skip
    for name, times in PHASES.items():
        print(f"  {name:52} {sum(times):6.2f} s  ({len(times)} call{'s' if len(times) != 1 else ''})")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--no-phases", action="store_true", help="skip the timed sample")
    parser.add_argument("--only-phases", action="store_true", help="only the timed sample")
    options = parser.parse_args()
    if options.samples < 1 or options.jobs < 1:
        parser.error("--samples and --jobs must be at least 1")
    if shutil.which("daharness") is None:
        sys.exit("daharness is not on PATH (put the venv's bin first)")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as scratch:
        server.responder = model_reply
        if not options.no_phases:
            one_sample_phases(server.base_url)
        if options.only_phases:
            return
        walls = {}
        for jobs in (1, options.jobs):
            walls[jobs], records = timed_run(
                server.base_url, options.samples, jobs, Path(scratch) / f"j{jobs}"
            )
            print(f"-j{jobs}: {walls[jobs]:.1f} s for {options.samples} samples ({summary(records)}); "
                  f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        model_s = MODEL_S * len(REPLIES)
        besides = walls[1] / options.samples - model_s
        ratio = walls[1] / walls[options.jobs]
        print(f"each sample at -j1: {walls[1] / options.samples:.1f} s, {besides:.1f} s of it besides its "
              f"{model_s:.0f} s of model time")  # fmt: skip
        verdict = "ok" if ratio >= TARGET_RATIO else "MISSED"
        print(f"-j{options.jobs} vs -j1: {ratio:.2f}x faster  target >= {TARGET_RATIO:.0f}x  {verdict}")


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # a model thread cut off at the end is no finding
    main()
