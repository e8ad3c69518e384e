"""How the limits of a daharness kernel sandbox are enforced on this machine: the part of a backend's
`describe_isolation` (printed by `daharness doctor`, kept in every run's run.json, so that a result says
how contained the code that produced it was) that the bwrap and unsafe-local backends share."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from daharness.core.limits import Limits
from daharness.sandbox import cgroups


def kernel_limit_scopes(limits: Limits, *, contained: bool, sized_tmpfs: bool) -> dict[str, Any]:
    """How each limit of a daharness kernel sandbox is enforced here: for the whole sandbox through its
    control groups when it is `contained` and the machine gives them, else per process through rlimits."""
    groups = cgroups.hierarchies() if contained else {}

    def via(controller: cgroups.Controller) -> str | None:
        hierarchy = groups.get(controller)
        return f"cgroup v{hierarchy.version}" if hierarchy else None

    scopes: dict[str, Any] = {
        "memory": _scope(
            via("memory"),
            f"{limits.memory_mb} MB for the sandbox, tmpfs included",
            f"{limits.memory_mb} MB of address space per process (RLIMIT_AS)",
        ),
        "processes": _scope(
            via("pids"),
            f"{limits.processes} processes in the sandbox",
            f"{limits.processes} processes of the sandbox's user (RLIMIT_NPROC)"
            if contained
            else "none (not contained)",
        ),
        "cpu": _scope(
            via("cpu"),
            "an equal share per sandbox" + (f", at most {limits.cpus:g} CPUs" if limits.cpus else ""),
            f"{limits.cpu_seconds} s of CPU time per process (RLIMIT_CPU), no share",
        ),
        "tmpfs": {
            "/tmp": f"{limits.tmp_mb} MB" if sized_tmpfs else "unsized",
            "/dev/shm": f"{limits.shm_mb} MB" if sized_tmpfs else "unsized",
        }
        if contained
        else "the host's /tmp (not contained)",
        **host_watched_limits(limits, contained=contained),
    }
    return {
        "limits": scopes,
        "cgroups": {name: h.describe() for name, h in groups.items()},
        "values": asdict(limits),
    }


def host_watched_limits(limits: Limits, *, contained: bool = True) -> dict[str, str]:
    """The limits the host enforces whatever the backend: the workspace, the artifacts, the scoring
    (in a worker confined by bubblewrap, unless agent code itself runs uncontained)."""
    return {
        "workspace": f"{limits.workspace_mb} MB and {limits.workspace_files} files added, watched by the host",
        "artifacts": f"{limits.artifact_mb} MB and {limits.artifact_files} files kept per sample",
        "scoring": f"agent files over {limits.score_file_mb} MB not read; {limits.score_memory_mb} MB and "
        f"{limits.score_seconds:g} s per sample, "
        + ("in a confined worker (no network, only its inputs)" if contained else "in an unconfined worker"),
    }


def _scope(via: str | None, whole: str, fallback: str) -> dict[str, str]:
    if via:
        return {"scope": "sandbox", "via": via, "limit": whole}
    return {"scope": "process", "via": "rlimits", "limit": fallback}
