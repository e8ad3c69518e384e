"""What isolation and which limits this machine gives a sandbox: printed by `daharness doctor` and kept
in every run's run.json, so that a result says how contained the code that produced it was."""

from __future__ import annotations

import os
import subprocess
from dataclasses import asdict
from typing import Any

from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.sandbox import cgroups
from daharness.sandbox.bwrap import check_bwrap, find_bwrap, supports_tmpfs_size


def describe_isolation(backend: str, limits: Limits) -> dict[str, Any]:
    """The isolation of `backend` here and how each limit is enforced (per sandbox, or per process)."""
    isolated = backend == "bwrap"
    report: dict[str, Any] = {"backend": backend}
    if isolated:
        report.update(_bwrap_status())
    groups = cgroups.hierarchies() if isolated else {}

    def via(controller: cgroups.Controller) -> str | None:
        hierarchy = groups.get(controller)
        return f"cgroup v{hierarchy.version}" if hierarchy else None

    report["limits"] = {
        "memory": _scope(
            via("memory"),
            f"{limits.memory_mb} MB for the sandbox, tmpfs included",
            f"{limits.memory_mb} MB of address space per process (RLIMIT_AS)",
        ),
        "processes": _scope(
            via("pids"),
            f"{limits.processes} processes in the sandbox",
            f"{limits.processes} processes of the sandbox's user (RLIMIT_NPROC)"
            if isolated
            else "none (unsafe-local)",
        ),
        "cpu": _scope(
            via("cpu"),
            "an equal share per sandbox" + (f", at most {limits.cpus:g} CPUs" if limits.cpus else ""),
            f"{limits.cpu_seconds} s of CPU time per process (RLIMIT_CPU), no share",
        ),
        "tmpfs": {
            "/tmp": f"{limits.tmp_mb} MB" if isolated and supports_tmpfs_size() else "unsized",
            "/dev/shm": f"{limits.shm_mb} MB" if isolated and supports_tmpfs_size() else "unsized",
        }
        if isolated
        else "the host's /tmp (unsafe-local)",
        "workspace": f"{limits.workspace_mb} MB and {limits.workspace_files} files added, watched by the host",
        "artifacts": f"{limits.artifact_mb} MB and {limits.artifact_files} files kept per sample",
        "scoring": f"agent files over {limits.score_file_mb} MB not read; {limits.score_memory_mb} MB and "
        f"{limits.score_seconds:g} s per sample",
    }
    report["cgroups"] = {name: h.describe() for name, h in groups.items()}
    report["values"] = asdict(limits)
    return report


def _scope(via: str | None, whole: str, fallback: str) -> dict[str, str]:
    if via:
        return {"scope": "sandbox", "via": via, "limit": whole}
    return {"scope": "process", "via": "rlimits", "limit": fallback}


def _bwrap_status() -> dict[str, Any]:
    path = find_bwrap()
    status: dict[str, Any] = {"bwrap": path}
    if path:
        done = subprocess.run([path, "--version"], capture_output=True, text=True)
        status["bwrap_version"] = done.stdout.strip().removeprefix("bubblewrap ") or None
    try:
        check_bwrap()
        status["namespaces"] = "mount, pid, network, ipc, uts" + (", user" if os.getuid() != 0 else "")
        status["works"] = True
    except UserError as exc:
        status["works"] = False
        status["problem"] = str(exc)
    status["user"] = (
        "a machine-wide unique unprivileged uid per sandbox"
        if os.getuid() == 0
        else "uid 65534 in a user namespace of its own"
    )
    return status
