"""The host side of the kernel template (see `template_server.py`): one per daharness process, started
by `run` as it starts (before it loads the suite: numpy and pandas load on the other core meanwhile) or
else once the process has shown it runs more than a couple of sandboxes, and asked to fork each
sandbox's kernel into the namespaces bubblewrap made for it. A sample then starts with numpy and pandas (and, once
the template has loaded them between forks, matplotlib, scipy and scikit-learn) already imported, for
the cost of a fork.

Used only where it changes nothing of a sandbox's isolation: as root (the kernel drops to the sample's
own user id as it does when bubblewrap starts it), with control groups (every process of the sample is
in them from its first instruction), and when the sample's address-space limit leaves room for the
preloaded libraries. `DAHARNESS_KERNEL_TEMPLATE=off` turns it off, `=on` starts it with the first sandbox.
Anything that goes wrong with the template makes the sandboxes start their kernels as before; a module
it could not preload is said once (a warning on the harness's standard error), with the reason.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError
from daharness.core.exits import wait_for_exit
from daharness.sandbox.bwrap_arguments import memory_fd

PRELOAD = ("numpy", "pandas")  # imported before the template forks any kernel
PRELOAD_LATER = (  # then, between forks (see template_server.py)
    "matplotlib",
    "matplotlib.pyplot",
    "scipy.stats",
    "sklearn.base",
    "sklearn.linear_model",
    "sklearn.model_selection",
    "sklearn.metrics",
)
NAMESPACES = ("cgroup", "ipc", "uts", "net", "pid", "mnt")  # the order template_server.py joins them in
MIN_MEMORY_MB = 2048  # below this the preloaded libraries would take too much of the sample's address space
_AUTO_AFTER = 2  # sandboxes a process starts before it starts a template (a short command never pays)
_READY_TIMEOUT_S = 120.0
log = logging.getLogger("daharness.sandbox")
_SOURCE = (Path(__file__).parent / "template_server.py").read_text
# the source comes on a descriptor: a command line (which every kernel's /proc shows) stays short
_BOOTSTRAP = (
    "import os, sys\n"
    "source = int(sys.argv[1])\n"
    "code = compile(os.read(source, 1 << 20), 'daharness-template', 'exec')\n"
    "os.close(source)\n"
    "exec(code)\n"
)


class TemplateUnavailable(RuntimeError):
    """The template cannot fork this kernel; the sandbox starts it itself."""


@dataclass
class ForkedKernel:
    """The host's ends of a forked kernel's pipes, and where its wait status arrives."""

    stdin: Any
    stdout: Any
    stderr: Any
    status_fd: int


class KernelTemplate:
    def __init__(
        self, env: dict[str, str], font_list: str | None, later: tuple[str, ...] = PRELOAD_LATER
    ) -> None:
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._channel = host
        self._lock = threading.Lock()
        self.preloaded: list[str] = []
        self.failed: dict[str, str] = {}  # module -> why the template could not import it
        self.problem: str | None = None
        self._ready = threading.Event()
        source = memory_fd(_SOURCE().encode())
        try:  # its own session: a Ctrl+C at the terminal is the harness's to handle
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOTSTRAP, str(source), str(child.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
                pass_fds=(source, child.fileno()),
                cwd="/",
            )
        finally:
            child.close()
            os.close(source)
        self._later_asked = bool(later)
        settings = {"preload": list(PRELOAD), "later": list(later), "font_list": font_list}
        host.send(json.dumps(settings).encode())
        threading.Thread(target=self._await_ready, daemon=True, name="kernel-template").start()

    def _await_ready(self) -> None:
        try:
            self._channel.settimeout(_READY_TIMEOUT_S)
            hello = json.loads(self._channel.recv(65536) or b"{}")
            self._channel.settimeout(None)
            if hello.get("ready"):
                self.preloaded = list(hello.get("preloaded", []))
                self._note_failures(hello.get("failed") or {})
            else:
                self.problem = "the kernel template did not start"
        except (OSError, ValueError) as exc:
            self.problem = f"the kernel template did not start: {exc}"
        self._ready.set()

    def _note_failures(self, failed: dict[str, str]) -> None:
        """Keep why modules could not be preloaded, and say it once for each (each sample's kernel then
        imports them itself, which is slower and otherwise unexplained)."""
        for name, reason in failed.items():
            if name not in self.failed:
                self.failed[name] = reason
                log.warning(
                    "the kernel template could not preload %s (%s): each sample imports it itself, slower",
                    name, reason,
                )  # fmt: skip

    def _require_ready(self) -> None:
        if not self._ready.wait(_READY_TIMEOUT_S) or self.problem:
            raise TemplateUnavailable(self.problem or "the kernel template is not ready")

    def fork(self, init_pid: int, cgroups: list[Path], setup: dict[str, Any]) -> ForkedKernel:
        """Fork a kernel into the namespaces of `init_pid` (PID 1 of a sandbox) and its control groups,
        with `setup` (env, cwd, folder, module, config) read only by the fork."""
        self._require_ready()
        opened: list[int] = []
        ours: list[int] = []
        try:
            for name in NAMESPACES:
                opened.append(os.open(f"/proc/{init_pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC))
            pipes = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, status
            theirs = [pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]]
            ours = [pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0]]
            opened += theirs
            opened.append(memory_fd(json.dumps(setup).encode()))
            header = json.dumps({"cgroups": [str(folder) for folder in cgroups]}).encode()
            with self._lock:
                socket.send_fds(self._channel, [header], opened)
                reply = json.loads(self._channel.recv(65536) or b"{}")
        except (OSError, ValueError) as exc:  # its channel is broken: no later sandbox asks it again
            for fd in ours:
                os.close(fd)
            self.problem = f"the kernel template failed: {exc}"
            raise TemplateUnavailable(self.problem) from None
        finally:
            for fd in opened:
                os.close(fd)
        if "pid" not in reply:
            for fd in ours:
                os.close(fd)
            raise TemplateUnavailable(f"the kernel template refused: {reply.get('error', reply)}")
        return ForkedKernel(
            stdin=os.fdopen(ours[0], "wb"),
            stdout=os.fdopen(ours[1], "rb"),
            stderr=os.fdopen(ours[2], "rb"),
            status_fd=ours[3],
        )

    @property
    def loads_later_modules(self) -> bool:
        return self._later_asked

    def preload_later(self) -> None:
        """Have a template started without them import the "later" modules between forks too."""
        if self._later_asked or self.problem:
            return
        self._later_asked = True
        with self._lock, contextlib.suppress(OSError):
            self._channel.send(json.dumps({"later": list(PRELOAD_LATER)}).encode())

    def load_all(self) -> list[str]:
        """Have the template import every module it preloads now (they are loaded between forks
        otherwise); the modules it has loaded."""
        self._require_ready()
        with self._lock:
            self._channel.send(json.dumps({"load_all": True}).encode())
            reply = json.loads(self._channel.recv(65536) or b"{}")
        self.preloaded = list(reply.get("preloaded", []))
        self._note_failures(reply.get("failed") or {})
        return self.preloaded

    @property
    def pid(self) -> int:
        return self._process.pid

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._channel.close()
        with contextlib.suppress(Exception):
            self._process.kill()
            wait_for_exit(self._process, 5)


_state: dict[str, Any] = {"template": None, "owner": None, "launches": 0}
_state_lock = threading.Lock()


_MODES = {"auto": "auto", "off": "off", "0": "off", "no": "off", "false": "off",
          "on": "on", "1": "on", "yes": "on", "true": "on"}  # fmt: skip


def template_mode() -> str:
    """DAHARNESS_KERNEL_TEMPLATE as auto, on or off (a UserError for anything else)."""
    value = os.environ.get("DAHARNESS_KERNEL_TEMPLATE", "auto")
    mode = _MODES.get(value.strip().lower())
    if mode is None:
        raise UserError(f"DAHARNESS_KERNEL_TEMPLATE={value!r}: expected auto, on or off")
    return mode


def forget_template() -> None:
    """Close this process's template and count its sandboxes from zero again (a template that failed
    is otherwise never replaced)."""
    with _state_lock:
        template = _state["template"]
        _state.update(template=None, owner=os.getpid(), launches=0)
    if template is not None:
        template.close()


def current_template() -> KernelTemplate | None:
    """This process's template, if it has started one."""
    template = _state["template"]
    return template if _state["owner"] == os.getpid() else None


def start_template_now(memory_mb: int, env: dict[str, str], font_list: str | None) -> None:
    """Start this process's template before its first sandbox (the `run` command does, before it loads
    the suite): numpy and pandas load on the other core meanwhile, and even a one-sample run's kernel is
    forked with them imported. The "later" modules wait until the process has started more than
    `_AUTO_AFTER` sandboxes (a short command would only wait for them). Where a template must not be
    used, nothing is started (and one started early, by `run` before it had read its options, is stopped)."""
    mode = template_mode()
    if mode == "off" or os.getuid() != 0 or memory_mb < MIN_MEMORY_MB:
        if current_template() is not None:  # ours (a forked process's parent keeps its own)
            forget_template()
        return
    with _state_lock:
        if _state["template"] is not None and _state["owner"] == os.getpid():
            return
        template = KernelTemplate(env, font_list, later=())
        _state.update(template=template, owner=os.getpid(), launches=0)
        atexit.register(template.close)


def kernel_template(memory_mb: int, env: dict[str, str], font_list: str | None) -> KernelTemplate | None:
    """This process's template, started now if the process has started enough sandboxes; None where a
    template must not be used (see the module's text) or has failed."""
    mode = template_mode()
    if mode == "off" or os.getuid() != 0 or memory_mb < MIN_MEMORY_MB:
        return None
    with _state_lock:
        template = _state["template"]
        if template is not None and _state["owner"] == os.getpid():
            _state["launches"] += 1
            if _state["launches"] > _AUTO_AFTER:  # no longer a short command: the later modules too
                template.preload_later()
            return None if template.problem else template
        if _state["owner"] != os.getpid():  # a fork of a process that had one: it is not ours to use
            _state.update(template=None, owner=os.getpid(), launches=0)
        _state["launches"] += 1
        if mode != "on" and _state["launches"] <= _AUTO_AFTER:
            return None
        template = KernelTemplate(env, font_list)
        _state["template"] = template
        atexit.register(template.close)
        return template


def start_kernel_template(memory_mb: int) -> None:
    """Start the process's kernel template now, ahead of its sandboxes (start_template_now), where they
    will be able to use it (control groups). Imports nothing heavy: `run` calls it first of all."""
    from daharness.sandbox import cgroups
    from daharness.sandbox.environment import template_settings

    if cgroups.available():
        start_template_now(memory_mb, *template_settings())
