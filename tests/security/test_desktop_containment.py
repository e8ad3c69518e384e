"""Agent code against the desktop: it cannot stop, trace or replace what the harness reads the screen
from, it finds no DevTools endpoint of the browser, two desktops never meet, and nothing outlives the
sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import command_lines
from desktop_helpers import desktop_box, desktop_task, needs_desktop, serve
from helpers import wait_until

from daharness.sandbox.desktop import DEVTOOLS_PORTS

pytestmark = needs_desktop

TOUCH_THE_DESKTOP = """
import os, signal
display = next(int(p) for p in os.listdir('/proc') if p.isdigit()
               and open(f'/proc/{p}/cmdline', 'rb').read().startswith(b'Xvfb'))
attempts = {
    'kill the display': lambda: os.kill(display, signal.SIGKILL),
    'read its memory': lambda: open(f'/proc/{display}/mem', 'rb').read(1),
    'remove its socket': lambda: os.remove('/tmp/.X11-unix/X0'),
    'plant a socket beside it': lambda: open('/tmp/.X11-unix/X1', 'w'),
    'write into the desktop folder': lambda: open('/tmp/.daharness-desktop/a11y-bus.conf', 'w'),
    "read the browser's profile": lambda: os.listdir('/tmp/.daharness-desktop/chromium'),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, 'WORKED')
    except PermissionError:
        print(name, 'refused')
"""
LOOK_FOR_DEVTOOLS = f"""
import json, socket, urllib.request
for port in {list(DEVTOOLS_PORTS)}:
    try:
        urllib.request.urlopen(f'http://127.0.0.1:{{port}}/json/version', timeout=5).read()
        print(port, 'ANSWERED')
    except OSError as exc:
        print(port, 'no answer')
    try:
        socket.socket().bind(('127.0.0.1', port))
        print(port, 'TAKEN OVER')
    except OSError:
        print(port, 'held')
listening = set()
for table in ('/proc/net/tcp', '/proc/net/tcp6'):
    for line in open(table).read().splitlines()[1:]:
        fields = line.split()
        if fields[3] == '0A':
            listening.add(int(fields[1].rsplit(':', 1)[1], 16))
print(json.dumps(sorted(listening)))
"""


def test_agent_code_cannot_stop_trace_or_replace_what_the_screen_is_read_from(tmp_path: Path) -> None:
    with desktop_box(desktop_task(tmp_path)) as box:
        tried = box.python(TOUCH_THE_DESKTOP)
        assert tried.error is None, tried.error
        assert "WORKED" not in tried.stdout and tried.stdout.count("refused") == 6, tried.stdout
        assert box.desktop.observe("screenshot").image.startswith(b"\x89PNG")  # type: ignore[union-attr]


def test_agent_code_finds_no_devtools_endpoint_and_closing_the_browser_only_restarts_it(
    tmp_path: Path,
) -> None:
    """The browser's DevTools is a pipe of the controller's: nothing listens for it on the loopback but the
    controller's trap on the official VM's ports, which counts who knocks. The agent can close the browser
    on the screen (a user can); the next page opened starts it again."""
    with desktop_box(desktop_task(tmp_path)) as box:
        base = serve(box, {"index.html": "<html><head><title>page</title></head><body>x</body></html>"}, 8000)
        box.desktop.open_url(f"{base}/index.html")  # the browser runs (it starts on first use)
        looked = box.python(LOOK_FOR_DEVTOOLS)
        lines = looked.stdout.splitlines()
        assert lines[:-1] == [f"{port} {what}" for port in DEVTOOLS_PORTS for what in ("no answer", "held")]
        # the browser listens on no port (the page server's is the only other one)
        assert json.loads(lines[-1]) == sorted([*DEVTOOLS_PORTS, 8000]), looked
        assert box.desktop.trapped_connections() == {str(port): 1 for port in DEVTOOLS_PORTS}
        box.desktop.act({"action_type": "HOTKEY", "keys": ["ctrl", "shift", "w"]})  # closes its window
        wait_until(lambda: not box.desktop.windows(), 30, what="the browser closed")
        tab = box.desktop.open_url(f"{base}/index.html")
        assert tab["title"] == "page" and [t["title"] for t in box.desktop.tabs()] == ["page"]


def test_two_desktops_at_once_each_see_only_their_own(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with (
        desktop_box(desktop_task(tmp_path / "a")) as alpha,
        desktop_box(desktop_task(tmp_path / "b")) as beta,
    ):
        for box, name in ((alpha, "alpha"), (beta, "beta")):
            page = f"<html><head><title>{name}</title></head><body style='background:#fff'><h1>{name}</h1></body></html>"
            base = serve(box, {"index.html": page}, 8000)  # the same port in both
            box.desktop.open_url(f"{base}/index.html")
        for box, own, other in ((alpha, "alpha", "beta"), (beta, "beta", "alpha")):
            assert [t["title"] for t in box.desktop.tabs()] == [own]
            served = box.bash(
                "python -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8000/index.html').read().decode())\""
            )
            assert own in served.stdout and other not in served.stdout
            headings = [e.name for e in box.desktop.observe("a11y_tree").elements if e.tag == "heading"]
            assert headings == [own]
        assert alpha.desktop.observe("screenshot").image != beta.desktop.observe("screenshot").image


def test_nothing_of_the_desktop_outlives_its_sample(tmp_path: Path) -> None:
    with desktop_box(desktop_task(tmp_path)) as box:
        if box._cgroup is None:
            pytest.skip("no control group on this machine to follow the sandbox's processes")
        base = serve(box, {"index.html": "<h1>x</h1>"}, 8000)
        box.desktop.open_url(f"{base}/index.html")  # the browser starts on first use
        desktop_uid = box._desktop.uid  # type: ignore[union-attr]
        pids = box.processes()
        lines = command_lines(pids)
        for program in ("Xvfb", "openbox", "dbus-daemon", "chromium", "http.server"):
            assert any(program in line for line in lines), program
        owners = {int(Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0]) for pid in pids}
        assert desktop_uid in owners and box._uid in owners  # the desktop's own id and the agent's
        group = box._cgroup.path
    wait_until(lambda: command_lines(pids) == [], 10, what="every process of the desktop gone")
    assert not group.exists()
