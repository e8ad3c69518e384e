"""`daharness doctor` and run.json's `sandbox.isolation`: what they say matches this machine and the limits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import cli

from daharness.core.limits import Limits
from daharness.sandbox import cgroups, describe_isolation

RUNNABLE = Path(__file__).parent / "fixtures" / "runnable" / "questions.jsonl"


def _doctor(*args: str) -> tuple[int, dict]:
    done = subprocess.run(cli("doctor", "--json", *args), capture_output=True, text=True)
    return done.returncode, json.loads(done.stdout)


def test_doctor_names_where_each_limit_is_enforced_on_this_machine() -> None:
    code, report = _doctor()
    assert code == 0 and report["backend"] == "bwrap" and report["works"] is True
    groups = cgroups.hierarchies()
    for limit, controller in (("memory", "memory"), ("processes", "pids"), ("cpu", "cpu")):
        hierarchy = groups.get(controller)  # type: ignore[call-overload]
        expected = ("sandbox", f"cgroup v{hierarchy.version}") if hierarchy else ("process", "rlimits")
        assert (report["limits"][limit]["scope"], report["limits"][limit]["via"]) == expected, limit
    assert set(report["cgroups"]) == set(groups)
    assert report["values"]["memory_mb"] == Limits().memory_mb


def test_unsafe_local_says_it_is_not_contained() -> None:
    code, report = _doctor("--sandbox", "unsafe-local")
    assert code == 0 and "works" not in report and report["cgroups"] == {}
    assert report["limits"]["processes"] == {
        "scope": "process",
        "via": "rlimits",
        "limit": "none (not contained)",
    }
    assert report["limits"]["tmpfs"] == "the host's /tmp (not contained)"


def test_run_json_keeps_the_isolation_of_the_limits_the_run_used(tmp_path: Path) -> None:
    out = tmp_path / "run"
    options = ["--memory-mb", "1024", "--cpus", "1.5", "--workspace-files", "77", "--limit", "1"]
    done = subprocess.run(
        cli("run", "--suite", f"dabench:{RUNNABLE}", "--agent", "reference", "--out", str(out), *options),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    isolation = json.loads((out / "run.json").read_text())["sandbox"]["isolation"]
    limits = Limits(memory_mb=1024, cpus=1.5, workspace_files=77)
    assert isolation == json.loads(json.dumps(describe_isolation("bwrap", limits)))
    assert isolation["values"]["cpus"] == 1.5
    assert isolation["limits"]["workspace"] == "2048 MB and 77 files added, watched by the host"
    if "cpu" in cgroups.hierarchies():
        assert isolation["limits"]["cpu"]["limit"] == "an equal share per sandbox, at most 1.5 CPUs"


def test_a_backend_that_does_not_describe_its_isolation_is_credited_with_none() -> None:
    """A plugin backend that runs the same kernel elsewhere must not inherit the built-in sandboxes'
    claims (cgroups, rlimits): doctor and run.json say its limits are its own and not described."""
    from rich.console import Console

    from daharness.core.registry import backend
    from daharness.report.terminal import print_isolation
    from daharness.sandbox import KernelSandbox, describe_isolation

    @backend("test-undescribed-elsewhere")
    class Elsewhere(KernelSandbox):
        def launch(self):  # type: ignore[no-untyped-def]  # never started here
            raise NotImplementedError

    report = describe_isolation("test-undescribed-elsewhere", Limits(memory_mb=777))
    assert report["isolated"] is None and report["values"]["memory_mb"] == 777
    assert set(report["limits"]) == {"all"} and "cgroups" not in report
    console = Console(record=True, width=120)
    print_isolation(console, report)
    text = console.export_text()
    assert "isolation of its own, which it does not describe" in text and "rlimits" not in text
    assert describe_isolation("unsafe-local", Limits())["isolated"] is False
    assert describe_isolation("bwrap", Limits())["isolated"] is True


def test_doctor_says_whether_samples_can_have_a_desktop_and_why_not() -> None:
    from daharness.sandbox.desktop import desktop_problem

    _, report = _doctor()
    assert report["desktop"]["available"] is (desktop_problem() is None)
    assert report["desktop"]["problem"] == desktop_problem()
    assert set(report["desktop"]["programs"]) >= {"Xvfb", "openbox", "chromium", "nsenter"}
    _, local = _doctor("--sandbox", "unsafe-local")
    assert local["desktop"]["available"] is False
    assert local["desktop"]["problem"] == (
        desktop_problem() or "the unsafe-local sandbox has no desktop: use --sandbox bwrap"
    )
    shown = subprocess.run(cli("doctor"), capture_output=True, text=True).stdout
    assert ("desktop: available" in shown) is (desktop_problem() is None)
