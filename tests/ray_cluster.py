"""A real Ray cluster on this machine's loopback, for tests and benchmarks: a head and worker nodes.

Each node is a `ray start --block` process in a session of its own, so that it, its raylet and the
worker processes it spawns can be told apart from any other process (by session id) and stopped
together. Nodes listen on their own loopback addresses (127.0.0.2, 127.0.0.3, ...): Ray replaces
127.0.0.1 by the machine's network address, and no traffic of a test may leave the loopback.

The clusters require a token (Ray's token authentication, which Ray 2.5x and later turn on for a new
cluster once `~/.ray/auth_token` exists): every node, and every driver started with `env()`, reads the
token of this process's clusters from a file of their own, so that a token in the user's home neither
helps nor hinders. (One token per process: Ray's driver reads its token once.) Ray versions without
token authentication ignore these variables.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from helpers import sandbox_groups

HEAD_IP = "127.0.0.2"
_STARTED = "Ray runtime started"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@functools.cache
def token_file() -> Path:
    """The token that every cluster of this process requires, in a file removed when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="dhray-token-", dir="/tmp"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "auth_token"
    path.write_text(uuid.uuid4().hex)
    return path


def cluster_env() -> dict[str, str]:
    """The environment of a process that talks to this process's clusters: a node, or a daharness driver."""
    return {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_file())}


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


class LocalRayCluster:
    def __init__(self, worker_nodes: int = 1, cpus_per_node: int = 1) -> None:
        self.port = free_port()
        self.address = f"{HEAD_IP}:{self.port}"
        self.cpus_per_node = cpus_per_node
        self.worker_nodes = worker_nodes
        # short: Ray's unix socket paths live under it and have a length limit
        self.temp_dir = Path(tempfile.mkdtemp(prefix="dhray-", dir="/tmp"))
        self.nodes: list[subprocess.Popen[bytes]] = []
        self.token_file = token_file()

    def env(self) -> dict[str, str]:
        return cluster_env()

    def _ray_start(self, *args: str, log: Path) -> subprocess.Popen[bytes]:
        command = [str(Path(sys.executable).with_name("ray")), "start", "--block", "--disable-usage-stats"]
        command += ["--num-cpus", str(self.cpus_per_node), "--object-store-memory", str(80 * 2**20)]
        command += ["--dashboard-agent-listen-port", str(free_port()), *args]
        with log.open("wb") as handle:
            node = subprocess.Popen(
                command,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=self.temp_dir,
                env=self.env(),
            )
        self.nodes.append(node)
        deadline = time.monotonic() + 120
        while _STARTED not in log.read_text(errors="replace"):
            if node.poll() is not None or time.monotonic() > deadline:
                said = log.read_text(errors="replace")[-3000:]  # before stop() removes the folder
                self.stop()
                raise RuntimeError(f"ray start failed:\n{said}")
            time.sleep(0.1)
        return node

    def start(self) -> LocalRayCluster:
        self._ray_start(
            "--head",
            "--node-ip-address",
            HEAD_IP,
            "--port",
            str(self.port),
            "--temp-dir",
            str(self.temp_dir),
            "--include-dashboard",
            "false",
            log=self.temp_dir / "head.log",
        )
        for index in range(self.worker_nodes):
            self._ray_start(
                "--address",
                self.address,
                "--node-ip-address",
                f"127.0.0.{3 + index}",
                log=self.temp_dir / f"worker-{index}.log",
            )
        return self

    def sessions(self) -> set[int]:
        return {node.pid for node in self.nodes}

    def owns(self, pid: int) -> bool:
        """Whether process `pid` belongs to this cluster (a node, its raylet or a Ray worker)."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        session = int(stat.rsplit(")", 1)[1].split()[3])
        return session in self.sessions()

    def sandbox_groups(self) -> list[Path]:
        """The control groups of sandboxes started by this cluster's Ray workers (named after their pid)."""
        from daharness.sandbox.cgroups import PIDS_ROOT

        if not PIDS_ROOT.is_dir():
            return []
        owners = {group.name.split("-", 1)[0] for group in PIDS_ROOT.iterdir()}
        return [
            group for owner in owners if owner.isdigit() and self.owns(int(owner))
            for group in sandbox_groups(int(owner))
        ]  # fmt: skip

    def stop(self) -> None:
        for node in self.nodes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.pid, signal.SIGKILL)  # the session's group: node, raylet, workers
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.wait(timeout=30)
        self.nodes.clear()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalRayCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
