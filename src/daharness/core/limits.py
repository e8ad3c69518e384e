"""Resource limits of one sample's sandbox."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Per-sample limits. Memory, CPU time, processes and file size are kernel rlimits of every process in
    the sandbox; wall times are enforced by the kernel (interrupt) and the host (kill and restart)."""

    memory_mb: int = 4096  # address space of each process (RLIMIT_AS)
    cpu_seconds: int = 900  # CPU time of each process (RLIMIT_CPU)
    processes: int = 128  # processes of the sandbox's user (RLIMIT_NPROC, with an unprivileged id)
    file_mb: int = 1024  # largest file a process may write (RLIMIT_FSIZE)
    step_timeout_s: float = 120.0  # wall time of one step
    sample_timeout_s: float = 1800.0  # wall time of all steps of a sample together
    output_bytes: int = 65536  # per stream and step: head and tail are kept, the middle is cut

    def kernel_limits(self) -> dict[str, int]:
        return {
            "memory_bytes": self.memory_mb << 20,
            "cpu_seconds": self.cpu_seconds,
            "processes": self.processes,
            "file_bytes": self.file_mb << 20,
        }
