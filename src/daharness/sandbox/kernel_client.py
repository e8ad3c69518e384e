"""The host side of a kernel sandbox: one persistent kernel per sample, driven step by step.

    with BwrapSandbox(task, limits) as box:
        box.python("import pandas as pd; df = pd.read_csv('data.csv')")
        box.python("print(df.shape)")        # variables survive between steps
        box.bash("ls -l")
        box.sql("shop.db", "select count(*) from orders")

Every step returns an Observation. A step that outlives its timeout is interrupted inside the kernel;
if the kernel does not answer shortly after, the whole sandbox is killed and started again (its
variables are lost, and the observation says so). Closing the sandbox kills every process it started
and removes its workspace. Backends differ only in how the kernel is launched (`launch`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import shlex
import signal
import struct
import subprocess
import threading
import time
from abc import abstractmethod
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from daharness.core.backend import ReadOnlyOverlay, SandboxBackend, Snapshot
from daharness.core.desktop import Desktop, DesktopUnavailable
from daharness.core.errors import UserError
from daharness.core.exits import wait_for_exit
from daharness.core.family import SandboxAdditions
from daharness.core.limits import Limits
from daharness.core.observation import ErrorInfo, Observation
from daharness.core.submission import ActionEvent
from daharness.core.task import Task
from daharness.sandbox.captures import CaptureStore
from daharness.sandbox.cgroups import SandboxCgroup, kill_until_gone
from daharness.sandbox.namespaces import namespace_init
from daharness.sandbox.quota import QuotaGuard
from daharness.sandbox.scratch import process_scratch
from daharness.sandbox.template import ForkedKernel, KernelTemplate, TemplateUnavailable
from daharness.sandbox.workspace import CopyQuota, Workspace, display_name

if TYPE_CHECKING:  # the desktop's modules are imported by the sandboxes that have one
    from daharness.sandbox.desktop.session import DesktopSession

_PROCESS_HEADROOM = 4  # the kernel's own threads count against the limit too
_GRACE_S = 3.0  # how long a kernel may take to answer after its own step timeout fired
_START_TIMEOUT_S = 60.0
_LISTED_CHANGES = 1000  # files_changed of one step names at most this many files
# one reply of the kernel, its chart captures included (each at most 64 MB, daharness_kernel/captures.py);
# a longer line (the agent's code can write to the kernel's pipe) is not read: the kernel is restarted
MAX_REPLY_BYTES = 128 << 20
_live: set[KernelSandbox] = set()
_live_lock = threading.Lock()
_starters: dict[int, ThreadPoolExecutor] = {}


def _starter() -> ThreadPoolExecutor:
    """The threads that start sandboxes in the background. They last as long as the process: bwrap's
    --die-with-parent is a parent-death signal, which fires when the *thread* that started it ends."""
    with _live_lock:
        pid = os.getpid()  # a forked process (a Ray worker) makes its own
        if pid not in _starters:
            _starters.clear()
            _starters[pid] = ThreadPoolExecutor(max_workers=32, thread_name_prefix="sandbox-start")
        return _starters[pid]


StepKind = Literal["python", "bash", "sql", "write_file", "pyautogui", "desktop", "python_script"]


class SandboxError(RuntimeError):
    """The sandbox itself failed (could not start, died repeatedly): an infrastructure error."""


class SandboxNotStarted(SandboxError):
    """A sandbox started in the background did not start: the host's failure, never the agent's."""


@dataclass
class Launch:
    command: list[str]
    env: dict[str, str]
    uid: int | None  # the sandbox's own host user id, when daharness runs as root
    fds: tuple[int, ...] = ()  # descriptors the command reads (bwrap's options and files)
    after_start: Callable[[], None] | None = None  # frees them once the command runs
    # the command only makes the sandbox (and prints a line when it is ready): `template` forks the
    # kernel into it, with `fork_setup` (env, cwd, folder, module, config); see template.py
    template: KernelTemplate | None = None
    fork_setup: dict[str, Any] | None = None


class KernelPipes:
    """The host's ends of the kernel's standard streams, and how the kernel ended."""

    def __init__(
        self,
        stdin: Any,
        stdout: Any,
        stderr: Any,
        returncode: Callable[[float], int | None],
        status_fd: int | None = None,
    ) -> None:
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode = returncode  # waits up to the given seconds; None while it runs
        self.status_fd = status_fd

    @classmethod
    def of_process(cls, process: subprocess.Popen[bytes]) -> KernelPipes:
        def returncode(timeout: float) -> int | None:
            return wait_for_exit(process, timeout)

        return cls(process.stdin, process.stdout, process.stderr, returncode)

    @classmethod
    def of_fork(cls, forked: ForkedKernel) -> KernelPipes:
        """A forked kernel's status arrives on a pipe from its waiter (as os.waitpid's status)."""
        known: list[int] = []

        def returncode(timeout: float) -> int | None:
            if not known:
                ready, _, _ = select.select([forked.status_fd], [], [], max(timeout, 0))
                if ready:
                    data = os.read(forked.status_fd, 4)
                    # no status at all: the waiter was killed with the rest of the sandbox
                    known.append(
                        os.waitstatus_to_exitcode(struct.unpack("i", data)[0]) if len(data) == 4 else -9
                    )
            return known[0] if known else None

        return cls(forked.stdin, forked.stdout, forked.stderr, returncode, forked.status_fd)

    def close(self) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):  # stdin may hold a request the dead kernel never read
                    stream.close()
        if self.status_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.status_fd)
            self.status_fd = None


class KernelSandbox(SandboxBackend):
    """A sandbox whose steps run in the `daharness_kernel` process; subclasses say how to launch it."""

    def __init__(
        self,
        task: Task,
        limits: Limits | None = None,
        *,
        desktop: bool = False,
        additions: SandboxAdditions | None = None,
    ) -> None:
        self.task = task
        self.limits = limits or Limits()
        # what the task's family adds (its commands, variables, services): handed in by who builds the
        # sandbox (the pipeline asks the family), never looked up from here
        self.additions = additions or SandboxAdditions()
        self.history: list[ActionEvent] = []  # every step run, as the sandbox saw it
        self._desktop: DesktopSession | None = None
        self._screen: Desktop | None = None
        if desktop:  # the desktop's processes and the applications on it count too
            from daharness.sandbox.desktop.kernel_desktop import KernelDesktop
            from daharness.sandbox.desktop.session import DESKTOP_PROCESSES, DesktopSession

            self._desktop = DesktopSession()
            self._screen = KernelDesktop(
                self._require_desktop, self._screen_step, self.history, self.bash, self.stop_agent_processes
            )
            self.limits = dataclasses.replace(
                self.limits, processes=self.limits.processes + DESKTOP_PROCESSES
            )
        if extra := self.additions.extra_processes:  # a task's services and their threads
            self.limits = dataclasses.replace(self.limits, processes=self.limits.processes + extra)
        if self.additions.step_timeout_s > self.limits.step_timeout_s:  # servers that start in a step
            self.limits = dataclasses.replace(self.limits, step_timeout_s=self.additions.step_timeout_s)
        self.workspace = Workspace.create(task, process_scratch())
        self.workdir = task.workdir
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None  # bwrap (or the kernel, without it)
        self._kernel: KernelPipes | None = None  # the kernel's streams (the process's, or a fork's)
        self._without_template = False  # the template failed for this sandbox: bwrap starts the kernel
        self.forked_kernel = False  # whether the running kernel was forked from the kernel template
        self._pristine = False  # the running kernel has run no Python, SQL or screen step yet
        self._buffer = bytearray()
        self._deadline = time.monotonic() + self.limits.sample_timeout_s
        self._lock = threading.Lock()
        # the sandbox's processes are killed or started by one thread at a time: a kill by the quota
        # watcher (which keeps killing until the group is empty) must never reach a kernel started after
        # the usage it acted on was measured
        self._life_lock = threading.RLock()
        self._starting: Future[None] | None = None  # a start begun by `start_soon`
        self._closed = False
        self._uid: int | None = None
        self._cgroup: SandboxCgroup | None = None
        self.captures = CaptureStore()
        self._guard: QuotaGuard | None = None
        self._notices: list[str] = []  # why the host killed the sandbox's processes, for the next step
        self._oom_kills = 0
        self.overlay: ReadOnlyOverlay | None = None  # what `launch` puts over the workspace, once asked
        self._placeholders: list[Path] = []  # what covering made in the workspace, removed before collecting

    @abstractmethod
    def launch(self) -> Launch:
        """The command, environment and user id that start the kernel (with `self.overlay` when set)."""

    def prepare_overlay(self, overlay: ReadOnlyOverlay) -> list[Path]:
        """Check that the workspace lets `overlay` be put in place (OverlayBlocked if not), and return
        what putting it in place will create in the workspace, to be removed afterwards. By default the
        files are not put in place at all (see the backends)."""
        return []

    def release(self) -> None:
        """Free what `launch` reserved (e.g. a user id); called once when the sandbox closes."""

    @property
    def own_pid_namespace(self) -> bool:
        return False

    def processes(self) -> list[int]:
        """Host pids of every process the sandbox runs now (from its control group, else its user ids)."""
        self._await_start(raising=False)
        if self._cgroup is not None:
            return self._cgroup.pids()
        return [pid for uid in self._uids() for pid in _pids_of_uid(uid)]

    def _uids(self) -> list[int]:
        """The sandbox's own user ids: the agent's, and its desktop's."""
        desktop = self._desktop.uid if self._desktop is not None else None
        return [uid for uid in (self._uid, desktop) if uid is not None]

    # ---- life cycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        with self._life_lock:
            self._start()

    def start_soon(self) -> None:
        """Start in another thread: the sample's first model call and the sandbox's start overlap.
        Every method that needs the kernel waits for the start first (and raises its error)."""
        self._starting = _starter().submit(self.start)

    def _await_start(self, raising: bool = True) -> None:
        """Wait for a start begun by `start_soon`; raise its error unless `raising` is False (for
        what only reads or kills)."""
        starting = self._starting
        if starting is None:
            return
        error = starting.exception()
        if error is None or not raising:
            return
        if isinstance(error, SandboxError):
            raise SandboxNotStarted(str(error))
        raise error

    def _start(self) -> None:
        if self._cgroup is None and self.own_pid_namespace:
            self._cgroup = SandboxCgroup.create(
                # +2: bwrap's placeholder and the waiter, when the kernel template forks the kernel
                self.limits.processes + 2 * _PROCESS_HEADROOM + 2,
                memory_bytes=self.limits.memory_mb << 20,
                cpus=self.limits.cpus,
            )
        plan = self.launch()
        self._uid = plan.uid
        if plan.uid is not None:
            self.workspace.hand_to(plan.uid, plan.uid)
        command = self._cgroup.join_command(plan.command) if self._cgroup else plan.command
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.workspace.root,
                env=plan.env,
                start_new_session=True,
                pass_fds=plan.fds,
            )
        finally:
            if plan.after_start is not None:
                plan.after_start()
        self._kernel = KernelPipes.of_process(self._process)
        self._pristine = True
        self.forked_kernel = False
        if plan.template is not None and plan.fork_setup is not None:
            try:
                self._kernel = self._fork_kernel(plan.template, plan.fork_setup)
                self.forked_kernel = True
            except TemplateUnavailable:  # start the kernel as bwrap does, without the template
                self._kill()
                self._without_template = True
                self.start()
                return
        with _live_lock:
            _live.add(self)
        self._buffer = bytearray()
        try:
            hello = self._read_message(time.monotonic() + _START_TIMEOUT_S)
        except SandboxError:
            detail = self._stderr_tail()
            self._kill()
            raise SandboxError(
                f"the {self.name} sandbox did not start: {detail or 'no error output'}"
            ) from None
        if not hello.get("ready"):
            self._kill()
            raise SandboxError(f"the sandbox kernel sent an unexpected greeting: {hello}")
        if self._guard is None:
            self._guard = QuotaGuard(
                self.workspace.root,
                max_bytes=self.limits.workspace_mb << 20,
                max_entries=self.limits.workspace_files,
                on_exceeded=self._over_quota,
                lock=self._life_lock,
            )
            self._guard.start()
        if self._desktop is not None:
            self._start_desktop()

    def _fork_kernel(self, template: KernelTemplate, setup: dict[str, Any]) -> KernelPipes:
        """Wait until the sandbox is made (its first command prints a line), then have the template
        fork the kernel into its namespaces and control groups."""
        assert self._process is not None and self._process.stdout is not None and self._cgroup is not None
        deadline = time.monotonic() + _START_TIMEOUT_S
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([self._process.stdout], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self._process.stdout.fileno(), 64) if ready else b""
            if not chunk:
                raise TemplateUnavailable("the sandbox was not made")
            line += chunk
        init = namespace_init(self._process.pid)
        if init is None:
            raise TemplateUnavailable("the sandbox's namespaces were not found")
        return KernelPipes.of_fork(template.fork(init, self._cgroup.join_folders(), setup))

    def _start_desktop(self) -> None:
        """The desktop comes up after the kernel, in its namespaces (and again after every restart)."""
        assert self._desktop is not None and self._process is not None
        join = self._cgroup.join_command if self._cgroup is not None else list
        try:
            self._desktop.start(self._process.pid, join)
        except DesktopUnavailable as exc:
            self._kill()
            raise SandboxError(str(exc)) from None

    def _over_quota(self, reason: str) -> None:
        """The workspace grew past its quota: stop every process of the sandbox (from any thread); the
        current or next step then restarts the kernel and says why."""
        with self._life_lock:
            self._notices.append(reason)
            if self._cgroup is not None:
                self._cgroup.kill_all()
            elif self._uid is not None:
                for uid in self._uids():
                    _kill_uid(uid)
            elif (process := self._process) is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)

    def resource_usage(self) -> dict[str, Any]:
        """What the sandbox used and hit, from its control groups and the quota guard."""
        self._await_start(raising=False)
        usage: dict[str, Any] = {"restarts": self.restarts}
        if self._cgroup is not None:
            usage["controllers"] = self._cgroup.controllers
            peak = self._cgroup.memory_peak_bytes()
            if peak is not None:
                usage["memory_peak_mb"] = round(peak / 2**20, 1)
            usage["oom_kills"] = self._cgroup.oom_kills()
            usage["cpu_throttled_periods"] = self._cgroup.cpu_throttled()
        if self._guard is not None:
            usage["workspace_quota_exceeded"] = self._guard.times_exceeded
        return usage

    def cpu_seconds(self) -> float | None:
        """CPU time the sandbox's processes have used (see SandboxCgroup.cpu_seconds); None without
        control groups."""
        self._await_start(raising=False)
        return self._cgroup.cpu_seconds() if self._cgroup is not None else None

    def close(self) -> None:
        """Kill, release and remove everything of the sandbox; never raises (a sample that is over must
        not fail because its leftovers resist)."""
        self._await_start(raising=False)
        if self._guard is not None:
            self._guard.stop()
        with contextlib.suppress(Exception):
            self._kill()
        with _live_lock:
            _live.discard(self)
        if not self._closed:
            self._closed = True
            for cleanup in (
                self._cgroup.remove if self._cgroup is not None else None,
                self._desktop.release if self._desktop is not None else None,
                self.release,
                self.workspace.remove,
                self.captures.remove,
            ):
                if cleanup is not None:
                    with contextlib.suppress(Exception):
                        cleanup()

    def interrupt(self) -> None:
        self._await_start(raising=False)
        self._kill()

    def restart_with_overlay(self, overlay: ReadOnlyOverlay) -> None:
        self._await_start()
        self._kill()  # every process is gone: nothing the agent left can change the workspace any more
        self._placeholders = self.prepare_overlay(overlay)
        self.overlay = overlay
        self.start()

    def _remove_placeholders(self) -> None:
        """Remove the empty files and folders that covering made where the agent left nothing (deepest
        first; anything else found there is left as it is)."""
        for path in sorted(self._placeholders, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                elif path.is_file() and not path.is_symlink() and path.stat().st_size == 0:
                    path.unlink()
        self._placeholders = []

    # ---- actions ------------------------------------------------------------------------------------

    def python(self, code: str, timeout: float | None = None) -> Observation:
        return self._step("python", {"code": code}, timeout)

    def bash(self, command: str, timeout: float | None = None) -> Observation:
        return self._step("bash", {"command": command}, timeout)

    def sql(
        self, database: str, query: str, output: str | None = None, timeout: float | None = None
    ) -> Observation:
        return self._step("sql", {"database": database, "query": query, "output": output}, timeout)

    def write_file(self, path: str, content: str) -> Observation:
        return self._step("write_file", {"path": path, "content": content}, None)

    def python_script(self, path: str, args: list[str], timeout: float | None = None) -> Observation:
        """`python PATH ARGS...`, forked from the kernel while the kernel has run nothing but Bash and
        file writes (so nothing of the agent's can be in the process the script inherits): the script
        starts with the kernel's imported libraries instead of importing them again. Otherwise, and in
        the history either way, it is the Bash command."""
        self._await_start()
        if not self._pristine:
            return super().python_script(path, args, timeout)
        command = " ".join(shlex.quote(part) for part in ("python", path, *args))
        payload = {"path": path, "args": list(args)}
        return self._step("python_script", payload, timeout, recorded=("bash", {"command": command}))

    # ---- the desktop -------------------------------------------------------------------------------

    @property
    def desktop(self) -> Desktop | None:
        return self._screen

    def desktop_env(self) -> dict[str, str]:
        """What the agent's code needs to reach the desktop (nothing without one)."""
        if self._desktop is None:
            return {}
        from daharness.sandbox.desktop.session import AGENT_ENV

        return dict(AGENT_ENV)

    @classmethod
    def prepare_run(cls, limits: Limits) -> None:
        """Ready what the run's sandboxes will share, as the run starts (nothing, for most backends)."""

    @classmethod
    def check_desktop(cls) -> None:
        """Refuse, with a one-line reason, a desktop this backend cannot give on this machine."""
        raise UserError(f"the {cls.name} sandbox has no desktop: use --sandbox bwrap")

    def _screen_step(self, payload: dict[str, Any], timeout: float | None) -> Observation:
        """pyautogui code on the screen, in the agent's kernel (the desktop's actions)."""
        return self._step("pyautogui", payload, timeout)

    def stop_agent_processes(self, timeout_s: float = 10.0) -> None:
        """Stop every process of the agent's user id, the kernel included (SIGSTOP, which no process can
        catch, and only the host could undo), and wait until each one has stopped; the desktop's, under
        its own id, run on. What the harness then reads on the screen, in the browser or from a service,
        nothing of the agent's can act on. The stopped processes are killed when the sandbox restarts or
        closes: killing them now would end a sandbox whose kernel is bwrap's own child, desktop and all."""
        self._await_start(raising=False)
        agent = self._uid
        if agent is None:
            raise SandboxError(
                f"the {self.name} sandbox cannot tell the agent's processes from the desktop's"
            )
        deadline = time.monotonic() + timeout_s
        with self._life_lock:
            pids = self._cgroup.pids if self._cgroup is not None else lambda: _pids_of_uid(agent)
            while running := [pid for pid in pids() if _uid_of(pid) == agent and not _stopped(pid)]:
                if time.monotonic() > deadline:
                    raise SandboxError(
                        f"{len(running)} processes of the agent did not stop in {timeout_s:g} s"
                    )
                for pid in running:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGSTOP)
                time.sleep(0.002)

    def _require_desktop(self) -> DesktopSession:
        self._await_start()
        if self._desktop is None:
            raise DesktopUnavailable("this sandbox was opened without a desktop")
        return self._desktop

    def read_file(self, path: str) -> bytes:
        self._await_start()
        relative = path.removeprefix(self.workdir).lstrip("/") if path.startswith(self.workdir) else path
        return self.workspace.read_file(relative)

    def changed_files(self) -> list[str]:
        self._await_start()
        return self.workspace.changed_files()

    def copy_file_out(self, path: str, target: Path, max_bytes: int) -> str:
        self._await_start()
        relative = path.removeprefix(self.workdir).lstrip("/") if path.startswith(self.workdir) else path
        return self.workspace.copy_file_out(relative, target, max_bytes)

    def chart_capture_file(self, sha256: str) -> Path | None:
        return self.captures.file_for(sha256)

    def snapshot(self, target: Path) -> Snapshot:
        """Stop every process of the sandbox (so that nothing changes the files while they are copied),
        then copy the workspace's regular files to `target` and the received chart captures beside it."""
        self._await_start()
        self._kill()
        self._remove_placeholders()
        quota = CopyQuota(self.limits.workspace_mb << 20, self.limits.workspace_files)
        snapshot = self.workspace.collect(target, quota)
        captures = self.captures.copy_to(target.with_name(target.name + "-captures"))
        return dataclasses.replace(snapshot, captures=captures)

    @property
    def time_left_s(self) -> float:
        return self._deadline - time.monotonic()

    def restart_clock(self) -> None:
        """The sample's time starts now: a sandbox started ahead of its sample waited without using any."""
        self._deadline = time.monotonic() + self.limits.sample_timeout_s

    def _step(
        self,
        kind: StepKind,
        payload: dict[str, Any],
        timeout: float | None,
        recorded: tuple[str, dict[str, Any]] | None = None,
    ) -> Observation:
        """Run one step; the history keeps it as `recorded` (kind and arguments) when given."""
        self._await_start()
        if kind not in ("bash", "write_file", "python_script"):
            self._pristine = False  # this kernel may hold anything of the agent's from now on
        shown_kind, shown_args = recorded or (kind, payload)
        try:
            observation = self._run_step(kind, payload, timeout)
        except SandboxError as exc:  # the sandbox is gone: keep the step that broke it
            failed = Observation.failure(shown_kind, "SandboxError", str(exc))
            self.history.append(ActionEvent(kind=shown_kind, args=shown_args, observation=failed))
            raise
        observation.kind = shown_kind
        self.history.append(ActionEvent(kind=shown_kind, args=shown_args, observation=observation))
        return observation

    def _run_step(self, kind: StepKind, payload: dict[str, Any], timeout: float | None) -> Observation:
        if self.time_left_s <= 0:
            return Observation.failure(
                kind, "TimeoutError", f"the sample's {self.limits.sample_timeout_s:g} s are used up"
            )
        step_timeout = min(
            timeout or self.limits.step_timeout_s, self.limits.step_timeout_s, self.time_left_s
        )
        with self._lock:
            before = self.workspace.snapshot_state()
            started = time.perf_counter()
            self._oom_kills = self._cgroup.oom_kills() if self._cgroup is not None else 0
            try:
                if self._process is None:  # interrupted or killed since the last step
                    raise SandboxError("the kernel was stopped")
                self._send({"kind": kind, "timeout": step_timeout, **payload})
                reply = self._read_message(time.monotonic() + step_timeout + _GRACE_S)
                observation = _observation(kind, reply)
            except SandboxError as exc:
                return self._enforce_quota(self._recover(kind, str(exc), started, before))
            self.captures.add(reply.get("captures"), reply.get("captures_dropped"))
            observation.duration_s = time.perf_counter() - started
            observation.files_changed = self._listed(self.workspace.changed_since(before))
        if self._process_limit_reached(reply, observation):
            self._restart_after_exhaustion(observation)
        return self._enforce_quota(observation)

    def _listed(self, changed: list[str]) -> list[str]:
        """Changed names as JSON-safe text, at most `_LISTED_CHANGES` of them (100k tiny files must not
        make a trajectory, or a prompt, of megabytes)."""
        return [display_name(name) for name in changed[:_LISTED_CHANGES]]

    def _enforce_quota(self, observation: Observation) -> Observation:
        """Check the workspace quota after the step (its watcher checks during it) and tell the agent
        when the sandbox's processes were stopped for it."""
        if self._guard is not None:
            self._guard.check()  # over quota and growing: kills the processes and adds a notice
        if not self._notices:
            return observation
        reasons, self._notices = list(dict.fromkeys(self._notices)), []
        fresh = observation.restarted and self._kernel is not None and self._kernel.returncode(0) is None
        if not fresh:  # the kernel that ran the step was stopped with the rest: start a new one
            self._restart(reasons[0])
        message = (
            f"{'; '.join(reasons)}. Every process of the sandbox was stopped and the kernel restarted, so "
            "its variables are lost; delete files to get back under the quota"
        )
        observation.error = ErrorInfo(name="WorkspaceQuotaExceeded", value=message)
        observation.restarted = True
        observation.stderr += f"\n[{message}]\n"
        return observation

    def _process_limit_reached(self, reply: dict[str, Any], observation: Observation) -> bool:
        if not self.own_pid_namespace:
            return False
        if reply.get("processes", 0) >= self.limits.processes - _PROCESS_HEADROOM:
            return True
        # a fork that failed for want of process slots: the count may have dipped since, but the limit was hit
        error = observation.error
        trace = error.traceback.lower() if error else ""
        return bool(
            error and error.name == "BlockingIOError" and any(w in trace for w in ("fork", "popen", "spawn"))
        )

    def _restart_after_exhaustion(self, observation: Observation) -> None:
        """The sandbox's processes fill its process limit (a fork bomb, typically): nothing can start
        any more, so everything is killed and a fresh kernel takes over."""
        self._kill()
        self.restarts += 1
        self.start()
        observation.restarted = True
        observation.stderr += (
            f"\n[the sandbox reached its limit of {self.limits.processes} processes; all its processes were "
            "killed and the kernel was restarted, so its variables are lost]\n"
        )

    def _restart(self, reason: str) -> None:
        """Kill every process of the sandbox and start a fresh kernel (a SandboxError if it won't)."""
        self._kill()
        self.restarts += 1
        try:
            self.start()
        except SandboxError as exc:
            raise SandboxError(f"{reason}; restarting the sandbox failed: {exc}") from None

    def _recover(
        self, kind: str, reason: str, started: float, before: dict[str, tuple[int, int]]
    ) -> Observation:
        """The kernel did not answer: kill the sandbox, start a fresh one, and say what was lost."""
        self._restart(reason)
        timed_out = "no answer" in reason
        name = "TimeoutError" if timed_out else "KernelDied"
        if self._cgroup is not None and self._cgroup.oom_kills() > self._oom_kills:
            name = "MemoryError"
            reason = (
                f"the sandbox ran out of its {self.limits.memory_mb} MB of memory (files in /tmp and "
                "/dev/shm count too) and the kernel killed its largest process"
            )
        observation = Observation.failure(
            kind, name, f"{reason}; the kernel was restarted and its variables are lost"
        )
        observation.restarted = True
        observation.timed_out = timed_out
        observation.duration_s = time.perf_counter() - started
        observation.files_changed = self._listed(self.workspace.changed_since(before))
        return observation

    # ---- transport ----------------------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        assert self._kernel is not None and self._kernel.stdin is not None
        try:
            self._kernel.stdin.write(json.dumps(message).encode() + b"\n")
            self._kernel.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SandboxError("the kernel is gone") from None

    def _read_message(self, deadline: float) -> dict[str, Any]:
        assert self._kernel is not None and self._kernel.stdout is not None
        fd = self._kernel.stdout.fileno()
        end = self._buffer.find(b"\n")
        while end < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("no answer from the kernel in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise SandboxError(f"the kernel exited{self._exit_detail()}")
            newline = chunk.find(b"\n")
            end = len(self._buffer) + newline if newline >= 0 else -1
            self._buffer += chunk
            if end < 0 and len(self._buffer) > MAX_REPLY_BYTES:
                self._buffer = bytearray()  # the agent's code can write to the pipe: read it within a bound
                raise SandboxError(f"the kernel sent a reply larger than {MAX_REPLY_BYTES >> 20} MB")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            message = json.loads(line)
        except ValueError:
            raise SandboxError("the kernel sent an unreadable reply") from None
        if not isinstance(message, dict):
            raise SandboxError("the kernel sent an unreadable reply")
        return message

    def _exit_detail(self) -> str:
        """How the kernel's process ended, to say with "the kernel exited": its exit status or signal and
        the end of what is waiting in its error pipe (read without blocking: a process the agent left
        may hold the pipe open)."""
        kernel = self._kernel
        if kernel is None:
            return ""
        code = kernel.returncode(2)
        if code is None:
            return ""
        # a signal shows as a negative code, or, through bwrap (which reports its child's), as 128 + it
        number = -code if code < 0 else code - 128 if 128 < code < 128 + signal.NSIG else None
        status = f"exit status {code}"
        if number is not None:
            with contextlib.suppress(ValueError):
                status = f"killed by signal {signal.Signals(number).name}"
        text = self._stderr_tail()[-300:]
        return f" ({status}{': ' + text if text else ''})"

    def _stderr_tail(self) -> str:
        """The end of what waits in the kernel's error pipe once it has ended, read without blocking (a
        process the agent left may hold the pipe open)."""
        kernel = self._kernel
        if kernel is None or kernel.stderr is None or kernel.returncode(0) is None:
            return ""
        tail = b""
        with contextlib.suppress(OSError):
            os.set_blocking(kernel.stderr.fileno(), False)
            tail = os.read(kernel.stderr.fileno(), 1 << 16) or b""
        return tail.decode(errors="replace").strip()[-500:]

    def _kill(self) -> None:
        with self._life_lock:
            self._kill_everything()

    def _kill_everything(self) -> None:
        if self._desktop is not None:
            self._desktop.stop()
        process, self._process = self._process, None
        kernel, self._kernel = self._kernel, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for pipes in (kernel, KernelPipes.of_process(process)):
            if pipes is not None:
                pipes.close()
        if self._cgroup is not None:  # a forked kernel's waiter is in the group, outside bwrap's tree
            self._cgroup.kill_all()
        else:
            for uid in self._uids():
                _kill_uid(uid)


def _observation(kind: str, reply: dict[str, Any]) -> Observation:
    """A step's observation from the kernel's reply; a reply that does not have the protocol's shape
    (the agent's code can write to the kernel's pipe) is a broken kernel."""
    try:
        error = reply.get("error")
        observation = Observation(
            kind=kind,
            stdout=reply.get("stdout", ""),
            stderr=reply.get("stderr", ""),
            error=ErrorInfo.model_validate(error) if error else None,
            truncated=reply.get("truncated", False),
            exit_status=reply.get("exit_status"),
            timed_out=reply.get("timed_out", False),
        )
        if not isinstance(reply.get("processes", 0), int):
            raise ValueError("processes is not a number")
    except (TypeError, ValueError):  # pydantic's ValidationError is a ValueError
        raise SandboxError("the kernel sent a malformed reply") from None
    return observation


def kill_all_sandboxes() -> None:
    """Kill every sandbox of this process (used when a run is interrupted)."""
    with _live_lock:
        boxes = list(_live)
    for box in boxes:
        box.interrupt()


def _kill_uid(uid: int, wait_s: float = 2.0) -> None:
    """Make sure no process of a sandbox's own user id survives it (where no control group tracks them).
    The id is this sandbox's alone on the machine (see `uids.py`), so nothing else is touched."""
    kill_until_gone(lambda: _pids_of_uid(uid), wait_s)


def _pids_of_uid(uid: int) -> list[int]:
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _uid_of(entry.name) == uid
    ]


def _uid_of(pid: int | str) -> int | None:
    """A process's real user id (None once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    return None


def _stopped(pid: int) -> bool:
    """Whether every thread of the process is stopped (or gone): its state in /proc is T, t, Z or X."""
    try:
        threads = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    for thread in threads:
        try:
            state = (thread / "stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in "TtZX":
            return False
    return True
