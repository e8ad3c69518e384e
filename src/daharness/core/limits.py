"""Resource limits of one sample: its sandbox, its workspace, what is kept of it and how it is scored."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Per-sample limits.

    Memory, processes and CPU share apply to the sandbox as a whole through its control groups where
    the machine gives them (`daharness doctor` says which); the per-process rlimits (address space, CPU
    time, process count, file size) apply always and are the fallback. Wall times are enforced by the
    kernel (interrupt) and the host (kill and restart). The workspace quota is checked by the host
    while steps run; the artifact and scoring caps bound what reaches the run directory and the
    host-side scorers."""

    memory_mb: int = 4096  # the sandbox's memory (tmpfs included), and each process's address space
    cpu_seconds: int = 900  # CPU time of each process (RLIMIT_CPU)
    processes: int = 128  # processes of the sandbox (cgroup pids.max, and RLIMIT_NPROC of its own user)
    file_mb: int = 1024  # largest file a process may write (RLIMIT_FSIZE)
    step_timeout_s: float = 120.0  # wall time of one step
    sample_timeout_s: float = 1800.0  # wall time of all steps of a sample together
    output_bytes: int = 65536  # per stream and step: head and tail are kept, the middle is cut
    cpus: float | None = None  # hard cap in CPUs (cgroup quota); every sandbox has an equal CPU share
    tmp_mb: int = 1024  # size of the sandbox's private /tmp (a tmpfs, counted in its memory)
    shm_mb: int = 256  # size of its /dev/shm
    workspace_mb: int = 2048  # bytes the agent may add to the workspace (apparent size: sparse counts)
    workspace_files: int = 10_000  # files and folders the agent may add to the workspace
    artifact_mb: int = 512  # of the agent's files, at most this much is kept in the run directory
    artifact_files: int = 1000  # ... and at most this many files
    score_file_mb: int = 64  # agent files larger than this are not read by the host-side scorers
    score_memory_mb: int = 2048  # memory of the host-side scoring of one sample
    score_seconds: float = 300.0  # wall time of the host-side scoring of one sample

    def kernel_limits(self) -> dict[str, int]:
        return {
            "memory_bytes": self.memory_mb << 20,
            "cpu_seconds": self.cpu_seconds,
            "processes": self.processes,
            "file_bytes": self.file_mb << 20,
        }
