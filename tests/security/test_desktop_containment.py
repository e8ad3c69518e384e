"""Agent code against the desktop: it cannot stop, trace or replace what the harness reads the screen
from, a browser port it takes over is not believed, two desktops never meet, and nothing outlives the
sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import command_lines
from desktop_helpers import desktop_box, desktop_task, needs_desktop, serve
from helpers import wait_until

from daharness.sandbox.desktop import DEBUG_PORT

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
CLOSE_THE_BROWSER = f"""
import json, socket, time, urllib.request, websocket
endpoint = json.load(urllib.request.urlopen('http://127.0.0.1:{DEBUG_PORT}/json/version'))['webSocketDebuggerUrl']
connection = websocket.create_connection(endpoint, suppress_origin=True)
connection.send(json.dumps({{'id': 1, 'method': 'Browser.close'}}))
for _ in range(300):
    try:
        socket.create_connection(('127.0.0.1', {DEBUG_PORT}), timeout=1).close()
        time.sleep(0.1)
    except OSError:
        print('closed')
        break
"""
FAKE_BROWSER = f"""
import http.server, json
class Fake(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({{'webSocketDebuggerUrl': 'ws://127.0.0.1:{DEBUG_PORT}/devtools/browser/fake',
                           'title': 'forged'}}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(('127.0.0.1', {DEBUG_PORT}), Fake).serve_forever()
"""


def test_agent_code_cannot_stop_trace_or_replace_what_the_screen_is_read_from(tmp_path: Path) -> None:
    with desktop_box(desktop_task(tmp_path)) as box:
        tried = box.python(TOUCH_THE_DESKTOP)
        assert tried.error is None, tried.error
        assert "WORKED" not in tried.stdout and tried.stdout.count("refused") == 6, tried.stdout
        assert box.observe_desktop("screenshot").image.startswith(b"\x89PNG")  # type: ignore[union-attr]


def test_a_browser_port_agent_code_takes_over_is_not_believed(tmp_path: Path) -> None:
    with desktop_box(desktop_task(tmp_path)) as box:
        closed = box.python(CLOSE_THE_BROWSER)
        assert closed.stdout == "closed\n", closed
        box.write_file("fake.py", FAKE_BROWSER)
        box.start_program(["python", "fake.py"], "fake")
        probe = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{DEBUG_PORT}/json/version')"
        answered = box.bash(
            f'for i in $(seq 300); do python -c "{probe}" 2>/dev/null && exit 0; sleep 0.1; done; exit 1'
        )
        assert answered.exit_status == 0
        with pytest.raises(RuntimeError, match=f"port {DEBUG_PORT} is not the browser's"):
            box.desktop_request(
                "open_url", url="http://127.0.0.1:9/"
            )  # the browser restarts, finds the port taken
        assert all("forged" not in e.name for e in box.observe_desktop("a11y_tree").elements)


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
            box.desktop_request("open_url", url=f"{base}/index.html")
        for box, own, other in ((alpha, "alpha", "beta"), (beta, "beta", "alpha")):
            assert [t["title"] for t in box.desktop_request("tabs")["tabs"]] == [own]
            listing = box.python(
                f"import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.1:{DEBUG_PORT}/json/list').read().decode())"
            )
            assert [page["title"] for page in json.loads(listing.stdout) if page["type"] == "page"] == [own]
            served = box.bash(
                "python -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8000/index.html').read().decode())\""
            )
            assert own in served.stdout and other not in served.stdout
            headings = [e.name for e in box.observe_desktop("a11y_tree").elements if e.tag == "heading"]
            assert headings == [own]
        assert alpha.observe_desktop("screenshot").image != beta.observe_desktop("screenshot").image


def test_nothing_of_the_desktop_outlives_its_sample(tmp_path: Path) -> None:
    with desktop_box(desktop_task(tmp_path)) as box:
        if box._cgroup is None:
            pytest.skip("no control group on this machine to follow the sandbox's processes")
        serve(box, {"index.html": "<h1>x</h1>"}, 8000)
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
