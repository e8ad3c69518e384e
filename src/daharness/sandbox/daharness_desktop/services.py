"""The processes of a desktop, started by the controller as its children (and so under its user id).

Every file they keep lives in `RUN_DIR` (a folder of the sandbox's private /tmp that the controller
makes and owns, 0755: agent code can read it but not add, remove or replace anything in it), except
Chromium's profile, which is the controller's alone (0700). The display's socket folder is made the
same way before Xvfb starts, so no other process can put a socket of its own where clients look.
Chromium's DevTools is a pipe between it and the controller (`devtools.py`), never a port.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .devtools import BrowserGone, BrowserPipe, DevTools, NotAnswering

RUN_DIR = Path("/tmp/.daharness-desktop")
X_SOCKETS = Path("/tmp/.X11-unix")
DISPLAY = ":0"
A11Y_BUS = RUN_DIR / "a11y-bus"
_PREFERENCES = {"credentials_enable_service": False, "profile": {"password_manager_enabled": False}}
_A11Y_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>accessibility</type>
  <listen>unix:path={socket}</listen>
  <!-- the sandbox's user ids have no passwd entry, which EXTERNAL needs; only this sandbox's
       processes can reach the socket, so anonymous clients are admitted -->
  <auth>ANONYMOUS</auth>
  <allow_anonymous/>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


# Chromium takes 10-20 s to answer on a machine at a load of 25 (2 cores), and more now and then
BROWSER_START_S = 60.0


class ServiceError(RuntimeError):
    """A process of the desktop did not start or stopped; the message says which and why."""


@dataclass
class Services:
    """The running processes of the desktop, by name."""

    width: int
    height: int
    on_browser_event: Callable[[dict[str, Any]], None]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    devtools: DevTools | None = None  # the running browser's pipe

    @property
    def env(self) -> dict[str, str]:
        """The environment of the desktop's processes."""
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(RUN_DIR / "home"),
            "LANG": "C.UTF-8",
            "DISPLAY": DISPLAY,
            "AT_SPI_BUS_ADDRESS": f"unix:path={A11Y_BUS}",
            "XDG_RUNTIME_DIR": str(RUN_DIR / "runtime"),
        }

    def start(self, *, browser: bool) -> None:
        started = time.perf_counter()
        _private_folder(RUN_DIR, 0o755)
        for name, mode in (("home", 0o700), ("runtime", 0o700), ("logs", 0o755)):
            _private_folder(RUN_DIR / name, mode)
        self._browser_profile()  # ours from the start, whenever the browser comes
        self._start_display()
        self._start_accessibility_bus()
        self._spawn(
            "window_manager", ["openbox", "--sm-disable", "--config-file", str(_window_manager_config())]
        )
        self._spawn("a11y_registry", ["/usr/libexec/at-spi2-registryd"])
        # a window manager that arrives after the browser's window moves and refocuses it: clicks sent
        # at the places its page gave a moment before may then not reach the page
        self._wait("window_manager", _window_manager_running, 10.0)
        self.timings["display_s"] = time.perf_counter() - started
        if browser:
            self.start_browser()
        self.timings["ready_s"] = time.perf_counter() - started

    def _start_display(self) -> None:
        _private_folder(X_SOCKETS, 0o755)
        self._spawn(
            "display",
            [
                "Xvfb",
                DISPLAY,
                "-screen",
                "0",
                f"{self.width}x{self.height}x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ],
        )
        self._wait("display", lambda: (X_SOCKETS / f"X{DISPLAY[1:]}").exists(), 10.0)
        X_SOCKETS.chmod(0o755)  # Xvfb opens its folder to all (1777); nothing else may put a socket there

    def _start_accessibility_bus(self) -> None:
        config = RUN_DIR / "a11y-bus.conf"
        config.write_text(_A11Y_CONFIG.format(socket=A11Y_BUS))
        self._spawn("a11y_bus", ["dbus-daemon", "--nofork", "--config-file", str(config)])
        self._wait("a11y_bus", A11Y_BUS.exists, 10.0)

    def start_browser(self, timeout_s: float = BROWSER_START_S) -> None:
        """Chromium, its DevTools on a pipe of ours (`devtools`): no debugging port for anyone to reach."""
        previous = self.processes.get("browser")
        if previous is not None and previous.poll() is None:
            return
        if self.devtools is not None:
            self.devtools.close()
            self.devtools = None
        started = time.perf_counter()
        profile = self._browser_profile()
        pipe = BrowserPipe()
        try:
            command, ends = pipe.launch_command([
                "chromium", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                f"--window-size={self.width},{self.height}", "--window-position=0,0", "--start-maximized",
                "--no-sandbox", "--no-first-run", "--no-default-browser-check", "--password-store=basic",
                "--disable-gpu", "--disable-dev-shm-usage", "--force-device-scale-factor=1",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--disable-default-apps", "--disable-breakpad", "--no-pings",
                "--disable-client-side-phishing-detection", "--disable-domain-reliability", "--mute-audio",
                "--metrics-recording-only", "--no-service-autorun", "--disable-renderer-backgrounding",
                "--disable-features=Translate,MediaRouter,OptimizationHints", "--test-type", "about:blank",
            ])  # fmt: skip
            self._spawn("browser", command, pass_fds=ends)
            self.devtools = pipe.connect(self.on_browser_event)
        except BaseException:
            pipe.close()
            raise
        self._wait("browser", self.browser_answers, timeout_s)
        self.timings["browser_s"] = time.perf_counter() - started

    @staticmethod
    def _browser_profile() -> Path:
        profile = RUN_DIR / "chromium"
        if not profile.exists():
            _private_folder(profile, 0o700)
            # no "Save password?" bubble over the page after a setup's login (the official VM's Chrome has
            # none either: its profile was set up once by hand)
            (profile / "Default").mkdir(mode=0o700)
            (profile / "Default" / "Preferences").write_text(json.dumps(_PREFERENCES))
        return profile

    def browser_answers(self) -> bool:
        """Whether the browser answers on its pipe (it reads it once it is up: a call made before then is
        answered late, and its answer skipped)."""
        if self.devtools is None:
            return False
        try:
            self.devtools.call("Browser.getVersion", timeout=1.0)
        except (NotAnswering, BrowserGone):
            return False
        return True

    def wait_exited(self, name: str, timeout_s: float) -> None:
        """Give a process that is on its way out up to `timeout_s` to exit (a live one is left running)."""
        process = self.processes.get(name)
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout_s)

    def alive(self, name: str) -> bool:
        process = self.processes.get(name)
        return process is not None and process.poll() is None

    def _spawn(self, name: str, command: list[str], pass_fds: tuple[int, ...] = ()) -> None:
        log = open(RUN_DIR / "logs" / f"{name}.log", "wb")  # noqa: SIM115 - the child keeps it
        try:
            self.processes[name] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=RUN_DIR / "home",
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except OSError as exc:
            raise ServiceError(f"{name}: {command[0]} could not be started ({exc})") from None
        finally:
            log.close()

    def _wait(self, name: str, ready: object, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        process = self.processes[name]
        while not ready():  # type: ignore[operator]
            if process.poll() is not None:
                raise ServiceError(f"{name} exited with status {process.returncode}: {self.log_tail(name)}")
            if time.monotonic() > deadline:
                raise ServiceError(f"{name} was not ready after {timeout_s:g} s: {self.log_tail(name)}")
            time.sleep(0.02)

    def log_tail(self, name: str, size: int = 400) -> str:
        try:
            text = (RUN_DIR / "logs" / f"{name}.log").read_bytes()[-size:]
        except OSError:
            return "no log"
        return text.decode(errors="replace").strip() or "no output"

    def stop(self) -> None:
        if self.devtools is not None:
            self.devtools.close()
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        for process in self.processes.values():
            process.wait()


def _window_manager_running() -> bool:
    """Whether a window manager has taken the screen (it names its check window on the root window,
    as EWMH asks, once it manages the screen's windows)."""
    from Xlib import Xatom, display  # here: the harness imports this module's names without python-xlib
    from Xlib.error import DisplayError

    try:
        connection = display.Display(DISPLAY)
    except DisplayError:  # not answering yet: `_wait` tries again, then names the window manager's log
        return False
    try:
        root = connection.screen().root
        check = root.get_full_property(connection.intern_atom("_NET_SUPPORTING_WM_CHECK"), Xatom.WINDOW)
        return check is not None and len(check.value) > 0
    finally:
        connection.close()


def _window_manager_config() -> Path:
    """Openbox's own configuration (its key and mouse bindings), with windows left undecorated: a
    toolkit that is not told where the window manager put its window after adding a title bar (GTK
    under a reparenting manager) would place its accessibility tree a title bar off."""
    default = Path("/etc/xdg/openbox/rc.xml")
    text = (
        default.read_text()
        if default.is_file()
        else "<openbox_config><applications></applications></openbox_config>"
    )
    undecorated = '<application class="*"><decor>no</decor></application>\n</applications>'
    config = RUN_DIR / "openbox.xml"
    config.write_text(text.replace("</applications>", undecorated, 1))
    return config


def _private_folder(path: Path, mode: int) -> None:
    """A new folder of the controller's own: one that exists already was not made by us (agent code
    runs only after the desktop is up, so it would be a fresh sandbox's leftover or a plant)."""
    path.mkdir(mode=mode)
    path.chmod(mode)  # mkdir's mode is filtered by the umask
